import Foundation
import ScanoutTestSupport
import Testing

/// `scanout play` of a live input runs the service's engine, which waits out a silent source
/// there; `play` ends instead, as a file that cannot be read does.
@Suite struct PlayLiveTests {
    @Test("a UDP stream that stops: the frames received, then exit 1 naming the timeout (no wait for ever)")
    func udpStreamThatStops() throws {
        let port = try freeUDPLoopbackPort()
        let url = "udp://127.0.0.1:\(port)"
        // The sender plays the clip in real time (3.2 s) and stops; the player joins a moment later.
        let sender = try BackgroundProcess("ffmpeg", ["-nostdin", "-hide_banner", "-loglevel", "error", "-re", "-i",
                                                      try Fixtures.path("counter_open.ts"), "-c", "copy", "-f", "mpegts", url])
        usleep(300_000)
        let r = try CLI.run(["play", url, "--output", "headless", "--renderer", "cpu", "--quiet", "--live-timeout", "1"], timeout: 60)
        #expect(r.status == 1, "exit \(r.status): \(r.stderrText)")
        #expect(r.stderrLines.last == "scanout: \(url): timeout: no packets for 1 s, the source stopped sending (raise --live-timeout to wait longer)",
                "\(r.stderrText)")
        #expect(r.stderrText.contains("playing \(url): h264 320x240"), "\(r.stderrText)")
        withExtendedLifetime(sender) {}
    }
}
