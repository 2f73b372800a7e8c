import Foundation
import ScanoutTestSupport
import Testing

@Suite("scanout play --channels FILE --channel ID")
struct PlayChannelTests {
    func list(in scratch: Scratch) throws -> String {
        let file = scratch.path("channels.m3u")
        try """
            #EXTM3U\r
            #EXTINF:-1 tvg-id="counter" group-title="Files",Counter\r
            \(try Fixtures.path("counter.mp4"))\r
            #EXTINF:-1,Rotated\r
            \(try Fixtures.path("rotated.mp4"))\r
            """.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    @Test("the channel named by id (or the first) plays; every frame of it")
    func playsTheChannel() throws {
        let scratch = try Scratch()
        let file = try list(in: scratch)
        let byID = try CLI.run(["play", "--channels", file, "--channel", "counter", "--output", "headless", "--untimed"])
        #expect(byID.status == 0, "\(byID.stderrText)")
        #expect(byID.stdoutText.contains("summary: 96 frames presented, 0 dropped"), "\(byID.stdoutText)")
        let first = try CLI.run(["play", "--channels", file, "--output", "headless", "--untimed"])
        #expect(first.stdoutText.contains("summary: 96 frames presented, 0 dropped"))
    }

    @Test("an unknown channel and a list that is not M3U are refused, saying why")
    func refusals() throws {
        let scratch = try Scratch()
        let file = try list(in: scratch)
        let unknown = try CLI.run(["play", "--channels", file, "--channel", "nope", "--output", "headless"])
        #expect(unknown.status != 0 && unknown.stderrText.contains("--channel: no channel \"nope\""), "\(unknown.stderrText)")
        let bad = scratch.path("bad.m3u")
        try "[playlist]\nFile1=a.mp4\n".write(toFile: bad, atomically: true, encoding: .utf8)
        let refused = try CLI.run(["play", "--channels", bad, "--output", "headless"])
        #expect(refused.status == 1 && refused.stderrText.contains("channel list \(bad): line 1:"), "\(refused.stderrText)")
        #expect(try CLI.run(["play", "--channel", "counter"]).stderrText.contains("--channel needs --channels"))
    }
}
