import Foundation
@testable import ScanoutBench
import Testing

@Suite("bench child processes")
struct ChildProcessTests {
    @Test("a child interrupted a set time after it printed the marker; killed when the marker never comes")
    func interruptedChild() throws {
        let trapped = try #require(runChild(["sh", "-c", "trap 'echo got-int; exit 0' INT; echo go; while true; do sleep 0.05; done"],
                                            interruptAfter: 0.2, from: "go", startTimeout: 30, grace: 30))
        #expect(trapped.status == 0)
        #expect(trapped.stderr == "go\ngot-int\n")
        let silent = try #require(runChild(["sh", "-c", "exec sleep 30"], interruptAfter: 0.2, from: "go", startTimeout: 0.3, grace: 30))
        #expect(silent.status == 128 + SIGKILL)
        #expect(runChild(["/nonexistent/program"], interruptAfter: 1, from: "go", startTimeout: 1, grace: 1) == nil)
    }
}
