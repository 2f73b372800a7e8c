import Foundation
import ScanoutTestSupport
import Testing

/// `scanout play` of a network file whose server stalls or trickles (`tools/http-serve.py` on
/// loopback): the read-ahead runs dry, the clock pauses, every frame is shown and none dropped,
/// and the wait is said on stderr when it starts.
@Suite(.serialized) struct PlayNetworkTests {
    @Test("a stall longer than what is read ahead: buffering said, 96 of 96 frames shown, 0 dropped")
    func stall() throws {
        let server = try HTTPFileServer(directory: Fixtures.directory.path,
                                        faults: ["--stall-at", "60000", "--stall-for", "4", "--times", "1"])
        let r = try CLI.run(["play", server.url("faststart.mp4"), "--output", "headless", "--renderer", "cpu", "--timeout", "12"])
        #expect(r.status == 0, "exit \(r.status): \(r.stderrText)")
        #expect(r.stdoutText.contains("summary: 96 frames presented, 0 dropped, 96 decoded"), "\(r.stdoutText)")
        #expect(r.stderrLines.contains { $0.hasPrefix("buffering: the read-ahead of http://127.0.0.1:") && $0.contains("ran dry") }, "\(r.stderrText)")
        #expect(r.stderrLines.contains { $0.hasPrefix("buffering: resumed with ") }, "\(r.stderrText)")
        let line = try #require(r.stdoutText.split(separator: "\n").first { $0.hasPrefix("buffering: ") })
        #expect(line.contains(" waits for the network, ") && !line.hasPrefix("buffering: 0 waits"), "\(line)")
    }

    @Test("a link slower than the media: 0 dropped")
    func trickle() throws {
        let server = try HTTPFileServer(directory: Fixtures.directory.path, faults: ["--rate", "20000"])
        let r = try CLI.run(["play", server.url("faststart.mp4"), "--output", "headless", "--renderer", "cpu"])
        #expect(r.status == 0, "exit \(r.status): \(r.stderrText)")
        #expect(r.stdoutText.contains("summary: 96 frames presented, 0 dropped, 96 decoded"), "\(r.stdoutText)")
    }

    @Test("--read-ahead 0 turns it off; a negative value is a usage error")
    func off() throws {
        let server = try HTTPFileServer(directory: Fixtures.directory.path)
        let r = try CLI.run(["play", server.url("faststart.mp4"), "--output", "headless", "--renderer", "cpu", "--read-ahead", "0", "--untimed"])
        #expect(r.status == 0, "exit \(r.status): \(r.stderrText)")
        #expect(!r.stdoutText.contains("buffering:"))
        let bad = try CLI.run(["play", server.url("faststart.mp4"), "--read-ahead=-1"])
        #expect(bad.status == 1)
        #expect(bad.stderrText.contains("--read-ahead must be 0...3600 seconds"), "\(bad.stderrText)")
    }
}
