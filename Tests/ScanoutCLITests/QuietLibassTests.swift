import Foundation
import ScanoutTestSupport
import Testing

/// libass's lines (its rasteriser, shaper, font choices) follow FFmpeg's log level: nothing on
/// stderr unless --verbose, and nothing with -q.
@Suite struct QuietLibassTests {
    @Test("render -q with subtitles drawn prints nothing on stderr")
    func quietRender() throws {
        let scratch = try Scratch()
        for extra in [["-q"], []] {
            let r = try CLI.run(["render", try Fixtures.path("tracks.mkv"), "--frames", "30", "--slang", "en",
                                 "--out", scratch.path(UUID().uuidString)] + extra)
            #expect(r.status == 0)
            #expect(r.stderrText.isEmpty, "\(extra): \(r.stderrText)")
        }
    }
}
