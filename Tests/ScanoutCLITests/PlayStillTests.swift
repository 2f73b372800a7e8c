import Foundation
import ScanoutTestSupport
import Testing

@Suite("scanout play IMAGE --duration")
struct PlayStillTests {
    @Test("a JPEG shown for 0.5 s: three showings of one decoded picture, then the end; 0 s refused")
    func shownForItsDuration() throws {
        let scratch = try Scratch()
        let image = scratch.path("picture.jpg")
        _ = try Proc.ffmpeg(["-f", "lavfi", "-i", "testsrc2=s=320x240", "-frames:v", "1", "-y", image])
        let r = try CLI.run(["play", image, "--output", "headless", "--duration", "0.5"])
        #expect(r.status == 0, "exit \(r.status): \(r.stderrText)")
        #expect(r.stderrText.contains("playing \(image): mjpeg 320x240"))
        #expect(r.stdoutText.contains("summary: 3 frames presented, 0 dropped"), "\(r.stdoutText)")
        #expect(r.stdoutText.contains("decoder: still"))
        let refused = try CLI.run(["play", image, "--output", "headless", "--duration", "0"])
        #expect(refused.status == 1)
        #expect(refused.stderrText.contains("--duration: seconds, more than 0"))
    }
}
