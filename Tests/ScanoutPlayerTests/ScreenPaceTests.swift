import Foundation
import ScanoutCore
import ScanoutPlayer
import ScanoutTesting
import Testing

@Suite("composed screen pace")
struct ScreenPaceTests {
    @Test("an output slower than the refresh: every compose after the first starts more than an interval late, and is counted")
    func lateComposesCounted() throws {
        // Each present takes 4 intervals: compose k + 1 is due 10 ms after compose k was and starts
        // at least 40 ms after it did.
        let output = SlowCanvasOutput(presentTakes: .milliseconds(40))
        let screen = ScreenPlayer(layout: ScreenLayout(width: 64, height: 36), output: output, outputWidth: 64, outputHeight: 36,
                                  refreshInterval: .milliseconds(10))
        let deadline = ClockTime.now() + .seconds(30)
        while output.presents < 4 && ClockTime.now() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        screen.shutdown()
        let composed = screen.screen.composed
        #expect(composed >= 4)
        // The first compose is due when the loop starts: late only if its thread waited a whole
        // interval to run at all.
        #expect((composed - 1...composed).contains(screen.lateComposes), "\(screen.lateComposes) late of \(composed)")
    }
}
