import Foundation
import ScanoutTestSupport
import Testing

@Suite("--sub-file, --sid, --slang, --sub-delay, --no-sub on render and play; tracks in probe")
struct SubtitleCLITests {
    /// The bottom half of frames `frames` of tracks.mkv rendered with `options`, as rgb24 rows.
    static func render(_ options: [String], frames: [Int], in scratch: Scratch, renderer: String = "cpu") throws -> [Int: [UInt8]] {
        let dir = scratch.path(UUID().uuidString)
        let r = try CLI.run(["render", try Fixtures.path("tracks.mkv"), "--frames", frames.map(String.init).joined(separator: ","),
                             "--renderer", renderer, "--out", dir] + options)
        #expect(r.status == 0, "exit \(r.status): \(r.stderrText)")
        var out: [Int: [UInt8]] = [:]
        for n in frames {
            let png = dir + "/frame-\(String(repeating: "0", count: 6 - String(n).count))\(n).png"
            out[n] = [UInt8](try Proc.ffmpeg(["-i", png, "-vf", "crop=320:120:0:120", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"]))
        }
        return out
    }

    @Test("render: --slang en draws on frame 15 and not 14; no option shows the forced line (frame 30); --no-sub none; --sid 3 --sub-delay 0.5 moves it to frame 30")
    func renderSelections() throws {
        let scratch = try Scratch()
        let frames = [14, 15, 29, 30]
        let plain = try Self.render(["--no-sub"], frames: frames, in: scratch)
        let english = try Self.render(["--slang", "en"], frames: frames, in: scratch)
        let forced = try Self.render([], frames: frames, in: scratch)
        let delayed = try Self.render(["--sid", "3", "--sub-delay", "0.5"], frames: frames, in: scratch)
        func drawn(_ r: [Int: [UInt8]]) -> [Int] { frames.filter { r[$0] != plain[$0] } }
        #expect(drawn(english) == [15, 29, 30])
        #expect(drawn(forced) == [30])
        #expect(drawn(delayed) == [30])
        let gl = try Self.render(["--slang", "en"], frames: [14, 15], in: scratch, renderer: "gl")
        let glPlain = try Self.render(["--no-sub"], frames: [14, 15], in: scratch, renderer: "gl")
        #expect(gl[14] == glPlain[14] && gl[15] != glPlain[15])
    }

    @Test("render --sub-margin: 40 pixels or 0.2 of the output move the line of frame 20; 1.5 is a usage error")
    func margin() throws {
        let scratch = try Scratch()
        let none = try Self.render(["--slang", "en"], frames: [20], in: scratch)
        let pixels = try Self.render(["--slang", "en", "--sub-margin", "40"], frames: [20], in: scratch)
        let fraction = try Self.render(["--slang", "en", "--sub-margin", "0.2"], frames: [20], in: scratch)
        #expect(pixels[20] != none[20] && fraction[20] != none[20] && pixels[20] != fraction[20])
        let bad = try CLI.run(["render", try Fixtures.path("tracks.mkv"), "--frames", "1", "--sub-margin", "1.5", "--out", scratch.path("b")])
        #expect(bad.status == 1 && bad.stderrText.contains("--sub-margin"), "\(bad.status): \(bad.stderrText)")
    }

    @Test("render --sub-file: a sideband SubRip file; a missing one fails naming it; --no-sub with --slang is a usage error")
    func sidebandAndRefusals() throws {
        let scratch = try Scratch()
        let srt = scratch.path("side.srt")
        try "1\n00:00:01,000 --> 00:00:02,000\nSideband\n".write(toFile: srt, atomically: true, encoding: .utf8)
        let frames = [29, 30]
        let plain = try Self.render(["--no-sub"], frames: frames, in: scratch)
        let side = try Self.render(["--sub-file", srt], frames: frames, in: scratch)
        #expect(side[29] == plain[29] && side[30] != plain[30])
        let missing = try CLI.run(["render", try Fixtures.path("tracks.mkv"), "--frames", "1", "--sub-file", scratch.path("none.srt"), "--out", scratch.path("m")])
        #expect(missing.status == 1 && missing.stderrText.contains("none.srt"))
        let both = try CLI.run(["render", try Fixtures.path("tracks.mkv"), "--frames", "1", "--no-sub", "--slang", "en", "--out", scratch.path("b")])
        #expect(both.status == 1 && both.stderrText.contains("--no-sub cannot be combined"), "\(both.status): \(both.stderrText)")
    }

    @Test("play headless with --slang and with --sub-file: every frame shown")
    func play() throws {
        let scratch = try Scratch()
        let vtt = scratch.path("side.vtt")
        try "WEBVTT\n\n00:00:00.500 --> 00:00:01.500\nSideband\n".write(toFile: vtt, atomically: true, encoding: .utf8)
        for extra in [["--slang", "en"], ["--sub-file", vtt, "--sub-delay=-0.2"]] {
            let r = try CLI.run(["play", try Fixtures.path("tracks.mkv"), "--output", "headless", "--renderer", "cpu", "--untimed"] + extra)
            #expect(r.status == 0, "\(extra): exit \(r.status): \(r.stderrText)")
            #expect(r.stdoutText.contains("summary: 90 frames presented"), "\(r.stdoutText)")
        }
    }

    @Test("probe lists the audio and subtitle tracks, in text and JSON")
    func probeTracks() throws {
        let clip = try Fixtures.path("tracks.mkv")
        let text = try CLI.run(["probe", clip]).stdoutText
        #expect(text.contains("subtitle:  #4 ass, fre (forced, selected)"))
        #expect(text.contains("audio:     #2 mp3, ger, 44100 Hz 1 ch, \"Deutsch\""))
        let json = try #require(try JSONSerialization.jsonObject(with: CLI.run(["probe", clip, "--json"]).stdout) as? [String: Any])
        let tracks = try #require((json["input"] as? [String: Any])?["tracks"] as? [[String: Any]])
        #expect(tracks.map { $0["kind"] as? String } == ["video", "audio", "audio", "subtitle", "subtitle"])
        #expect(tracks.map { $0["selected"] as? Bool } == [true, true, false, false, true])
    }
}
