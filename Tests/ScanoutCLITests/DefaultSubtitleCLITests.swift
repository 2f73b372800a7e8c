import Foundation
import ScanoutTestSupport
import Testing

/// `render` with no `--slang`/`--sid` shows the subtitle track flagged default, as mpv does.
@Suite struct DefaultSubtitleCLITests {
    @Test("render: no option draws the default English track exactly as --slang en does; --no-sub draws none")
    func renderShowsTheDefaultTrack() throws {
        let scratch = try Scratch()
        let clip = try defaultEnglishSubtitleClip(in: scratch, frenchForced: true)
        let frames = [14, 15, 29, 30]
        func render(_ options: [String]) throws -> [Int: Data] {
            let dir = scratch.path(UUID().uuidString)
            let r = try CLI.run(["render", clip, "--frames", frames.map(String.init).joined(separator: ","), "--out", dir] + options)
            #expect(r.status == 0, "exit \(r.status): \(r.stderrText)")
            var out: [Int: Data] = [:]
            for n in frames {
                out[n] = try Data(contentsOf: URL(fileURLWithPath: dir + "/frame-" + String(format: "%06d", n) + ".png"))
            }
            return out
        }
        let plain = try render(["--no-sub"])
        let english = try render(["--slang", "en"])
        let chosenByDefault = try render([])
        #expect(frames.filter { english[$0] != plain[$0] } == [15, 29, 30])
        #expect(chosenByDefault == english)
    }
}
