import Foundation
import Testing
import ScanoutCore
import Synchronization

@Suite("thread names as the system keeps them")
struct NamedThreadTests {
    /// The running thread's name as the kernel has it (what `top -H` and `ps -L` show).
    private static func kernelName() -> String {
        (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8))?
            .trimmingCharacters(in: .newlines) ?? "?"
    }

    @Test("a thread shows its name; one longer than 15 bytes shows its first 15")
    func namesReachTheKernel() {
        for (asked, shown) in [("scanout-audio", "scanout-audio"), ("scanout-readahead", "scanout-readahe")] {
            let seen = Mutex("")
            let done = DispatchSemaphore(value: 0)
            Thread(named: asked) {
                seen.withLock { $0 = Self.kernelName() }
                done.signal()
            }.start()
            done.wait()
            #expect(seen.withLock { $0 } == shown)
        }
    }

    @Test("names are cut at a character boundary")
    func cutAtCharacters() {
        #expect(Thread.systemName("short") == "short")
        #expect(Thread.systemName("exactly15bytes!") == "exactly15bytes!")
        #expect(Thread.systemName("décodeur-vidéo-1") == "décodeur-vidé")   // é is 2 bytes
        #expect(Thread.systemName("décodeur-vidéo-1").utf8.count <= 15)
    }
}
