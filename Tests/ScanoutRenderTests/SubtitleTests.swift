import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutRender
import ScanoutTestSupport
import Testing

/// Subtitles decoded by libavcodec, drawn by libass and blended by both renderers, checked frame by
/// frame on tracks.mkv (90 frames at 30 fps: English SubRip "First line" 0.5–1.5 s and "Second line"
/// 2.0–2.8 s; French ASS forced "Première ligne" 1.0–2.0 s).
@Suite("subtitles: decoded, drawn with libass, shown exactly over their time ranges")
struct SubtitleTests {
    /// The fixture, its tracks, and the time of its first picture (0.025 s: the container's start).
    static func tracks() throws -> (input: String, tracks: [TrackInfo], start: Double) {
        let input = try Fixtures.path("tracks.mkv")
        let d = try Demuxer(input: input)
        return (input, d.tracks, Double(d.video.startTime ?? 0) * d.video.timeBase.doubleValue)
    }

    /// A renderer with the English track's events.
    static func english() throws -> SubtitleRenderer {
        let (input, tracks, start) = try tracks()
        return try SubtitleRenderer(script: try #require(try SubtitleSelection(languages: ["eng"]).script(input: input, tracks: tracks, videoStart: start)))
    }

    /// Every frame of tracks.mkv with its time in seconds.
    static func frames() throws -> [(VideoFrame, Double)] {
        let reader = try FrameReader(input: try Fixtures.path("tracks.mkv"))
        let tb = reader.video.timeBase.doubleValue
        var out: [(VideoFrame, Double)] = []
        while true {
            let f = VideoFrame()
            guard try reader.next(into: f) else { break }
            out.append((f, Double(f.pts ?? 0) * tb))
        }
        return out
    }

    /// Pixels of the bottom half that differ by more than 48 in some channel between two images.
    static func changedPixels(_ a: RGBImage, _ b: RGBImage) -> Int {
        var n = 0
        for y in (a.height / 2)..<a.height {
            for x in 0..<a.width {
                let i = 3 * (y * a.width + x)
                if (0..<3).contains(where: { abs(Int(a.bytes[i + $0]) - Int(b.bytes[i + $0])) > 48 }) { n += 1 }
            }
        }
        return n
    }

    /// The frame numbers on which `subs` changes the CPU compositor's picture (bottom half).
    static func framesWithText(_ subs: SubtitleRenderer, frames: [(VideoFrame, Double)]) throws -> [Int] {
        let composer = CPUCompositor()
        var c = Composition(applySampleAspectRatio: false)
        var shown: [Int] = []
        for (n, (frame, t)) in frames.enumerated() {
            c.subtitles = nil
            let plain = try composer.compose(frame, as: c, width: frame.width, height: frame.height)
            c.subtitles = subs.layer(at: t, for: frame, in: c)
            let with = try composer.compose(frame, as: c, width: frame.width, height: frame.height)
            let changed = changedPixels(plain, with)
            if c.subtitles != nil { #expect(changed > 50, "frame \(n): a layer that changes \(changed) pixels") }
            if changed > 0 { shown.append(n) }
        }
        return shown
    }

    @Test("embedded SubRip and ASS tracks decode to timed ASS events")
    func decodesEmbeddedTracks() throws {
        let (input, _, start) = try Self.tracks()
        func near(_ a: [Double], _ b: [Double]) -> Bool { a.count == b.count && zip(a, b).allSatisfy { abs($0 - $1) < 1e-6 } }
        let english = try SubtitleFile.read(input, track: 3)
        #expect(english.codecName == "subrip")
        #expect(near(english.events.map { $0.start - start }, [0.5, 2.0]))
        #expect(near(english.events.map(\.duration), [1.0, 0.8]))
        #expect(english.events[0].line.hasSuffix("First line") && english.events[1].line.hasSuffix("Second line"))
        let french = try SubtitleFile.read(input, track: 4)
        #expect(french.codecName == "ass")
        #expect(french.header.contains("PlayResX: 320"))
        #expect(near(french.events.map { $0.start - start }, [1.0]) && near(french.events.map(\.duration), [1.0]))
        #expect(french.events[0].line.contains("Première ligne"))
        #expect(throws: MediaError.self) { try SubtitleFile.read(input, track: 1) }   // an audio track
    }

    /// The English track remuxed by ffmpeg into the other text codecs a container carries.
    @Test("mov_text in MP4, WebVTT and ASS in Matroska decode to the same lines and times",
          arguments: [("mp4", "mov_text"), ("mkv", "webvtt"), ("mkv", "ass")])
    func otherTextCodecs(container: String, codec: String) throws {
        let scratch = try Scratch()
        let out = scratch.path("remuxed.\(container)")
        _ = try Proc.ffmpeg(["-i", try Fixtures.path("tracks.mkv"), "-map", "0:v", "-map", "0:s:0", "-c:v", "copy", "-c:s", codec, out])
        let d = try Demuxer(input: out)
        let start = Double(d.video.startTime ?? 0) * d.video.timeBase.doubleValue
        let track = try #require(SubtitleSelection(languages: ["en"]).embeddedTrack(in: d.tracks))
        let script = try SubtitleFile.read(out, track: track.index)
        #expect(script.codecName == codec)
        #expect(script.events.map { ($0.start - start) * 1000 }.map { Int($0.rounded()) } == [500, 2000])
        #expect(script.events.map { Int(($0.duration * 1000).rounded()) } == [1000, 800])
        #expect(script.events.map { $0.line.split(separator: ",", maxSplits: 8).last.map(String.init) } == ["First line", "Second line"])
    }

    @Test("the English line is on frames 15...44 and 60...83, no other frame carries text (CPU)")
    func englishOnExactFrames() throws {
        let (input, tracks, start) = try Self.tracks()
        let script = try #require(try SubtitleSelection(languages: ["en"]).script(input: input, tracks: tracks, videoStart: start))
        let shown = try Self.framesWithText(try SubtitleRenderer(script: script), frames: try Self.frames())
        #expect(shown == Array(15...44) + Array(60...83))
    }

    @Test("with no language asked the forced French track is shown, on frames 30...59; --no-sub shows nothing")
    func forcedTrackWhenNoLanguage() throws {
        let (input, tracks, start) = try Self.tracks()
        let script = try #require(try SubtitleSelection().script(input: input, tracks: tracks, videoStart: start))
        #expect(script.codecName == "ass")
        let shown = try Self.framesWithText(try SubtitleRenderer(script: script), frames: try Self.frames())
        #expect(shown == Array(30...59))
        #expect(try SubtitleSelection(enabled: false).script(input: input, tracks: tracks, videoStart: start) == nil)
    }

    @Test("a sideband WebVTT file with a +0.5 s delay moves the line by 15 frames")
    func sidebandWithDelay() throws {
        let scratch = try Scratch()
        let vtt = scratch.path("side.vtt")
        try "WEBVTT\n\n00:00:00.500 --> 00:00:01.500\nSideband line\n".write(toFile: vtt, atomically: true, encoding: .utf8)
        let (input, tracks, start) = try Self.tracks()
        let script = try #require(try SubtitleSelection(file: vtt).script(input: input, tracks: tracks, videoStart: start))
        #expect(script.codecName == "webvtt" && script.events.count == 1)
        let subs = try SubtitleRenderer(script: script)
        let frames = try Self.frames()
        #expect(try Self.framesWithText(subs, frames: frames) == Array(15...44))
        subs.delay = 0.5
        #expect(try Self.framesWithText(subs, frames: frames) == Array(30...59))
    }

    @Test("a sideband SubRip file over HTTP reads as a local one; a URL that answers 404 fails naming it")
    func sidebandURL() throws {
        let scratch = try Scratch()
        try "1\n00:00:01,000 --> 00:00:02,500\nOver HTTP\n".write(toFile: scratch.path("side.srt"), atomically: true, encoding: .utf8)
        let server = try HTTPFileServer(directory: scratch.url.path)
        let script = try SubtitleFile.read(server.url("side.srt"), timeoutSeconds: 5)
        #expect(script.codecName == "subrip" && script.events.map(\.start) == [1.0] && script.events.map(\.duration) == [1.5])
        #expect(script.events.first?.line.hasSuffix("Over HTTP") == true)
        #expect { try SubtitleFile.read(server.url("missing.srt"), timeoutSeconds: 5) } throws: { e in
            "\(e)".contains("missing.srt")
        }
    }

    @Test("the GLES renderer blends the same layer: text on frames 15 and 44, none on 14 and 45, close to the CPU's")
    func glesDrawsTheSameLayer() throws {
        let subs = try Self.english()
        let frames = try Self.frames()
        let gl = try GLRenderer()
        let cpu = CPUCompositor()
        var c = Composition(outputWidth: 320, outputHeight: 240)
        for n in [14, 15, 44, 45] {
            let (frame, t) = frames[n]
            c.subtitles = nil
            let plain = try gl.render(.frame(frame), as: c)
            c.subtitles = subs.layer(at: t, for: frame, in: c)
            let drawn = try gl.render(.frame(frame), as: c)
            let changed = Self.changedPixels(plain, drawn)
            #expect((changed > 50) == (15...44).contains(n), "frame \(n): \(changed) pixels changed")
            let reference = try cpu.compose(frame, as: c, width: 320, height: 240)
            // GL converts YUV in floating point, so the pictures differ by a level or two anyway;
            // the text must not: no pixel of the bottom half apart by more than 48.
            #expect(Self.changedPixels(reference, drawn) == 0, "frame \(n)")
        }
    }

    /// The reference is ffmpeg's own libass rendering (`-vf subtitles`) of the same track on the
    /// same frame, the same font (fontconfig's answer for the script's Arial). ffmpeg blends the
    /// text into the YUV 4:2:0 picture before converting to RGB, Scanout converts first and blends
    /// in RGB, so chroma differs at glyph edges over saturated colours: the check compares luma
    /// over the text's box within a tolerance, not bytes.
    @Test("frame 20 matches ffmpeg's subtitles filter (libass) in luma over the text's box")
    func matchesFFmpegSubtitlesFilter() throws {
        let subs = try Self.english()
        let (frame, t) = try Self.frames()[20]
        var c = Composition(applySampleAspectRatio: false)
        let layer = try #require(subs.layer(at: t, for: frame, in: c))
        c.subtitles = layer
        let ours = try CPUCompositor().compose(frame, as: c, width: 320, height: 240)
        let input = try Fixtures.path("tracks.mkv")
        let theirs = [UInt8](try Proc.ffmpeg(["-i", input, "-vf", "subtitles=\(input):si=0,select=eq(n\\,20)", "-frames:v", "1",
                                              "-f", "rawvideo", "-pix_fmt", "rgb24", "-"]))
        #expect(theirs.count == 320 * 240 * 3)
        func luma(_ p: [UInt8], _ i: Int) -> Int { (77 * Int(p[i]) + 150 * Int(p[i + 1]) + 29 * Int(p[i + 2])) >> 8 }
        let at = layer.origin(outputWidth: 320, outputHeight: 240)
        var total = 0, far = 0, count = 0
        for y in max(0, at.y)..<min(240, at.y + layer.image.height) {
            for x in max(0, at.x)..<min(320, at.x + layer.image.width) {
                let d = abs(luma(ours.bytes, 3 * (y * 320 + x)) - luma(theirs, 3 * (y * 320 + x)))
                total += d; count += 1
                if d > 48 { far += 1 }
            }
        }
        let mean = Double(total) / Double(max(count, 1))
        #expect(count > 500)
        #expect(mean < 3, "mean luma difference \(mean) over \(count) pixels")
        #expect(Double(far) <= 0.01 * Double(count), "\(far) of \(count) pixels apart by more than 48 in luma")
    }

    @Test("layout: the text scales with the output and sits on the picture, inside the safe margin")
    func layoutFollowsTheOutput() throws {
        let subs = try Self.english()
        let (frame, t) = try Self.frames()[20]
        let small = try #require(subs.layer(at: t, for: frame, in: Composition(outputWidth: 320, outputHeight: 240)))
        let big = try #require(subs.layer(at: t, for: frame, in: Composition(outputWidth: 1280, outputHeight: 960)))
        // Glyphs scale with the output (4×); outline and shadow add a few pixels.
        #expect(big.image.width > 3 * small.image.width && big.image.width < 5 * small.image.width,
                "\(small.image.width)x\(small.image.height) → \(big.image.width)x\(big.image.height)")
        #expect(big.image.height > 2 * small.image.height, "\(small.image.height) → \(big.image.height)")
        // 4:3 picture fitted on 16:9: pillarboxed at x 160...1119; the line is centred on it.
        let wide = try #require(subs.layer(at: t, for: frame, in: Composition(outputWidth: 1280, outputHeight: 720)))
        let wo = wide.origin(outputWidth: 1280, outputHeight: 720)
        #expect(wo.x > 160 && wo.x + wide.image.width < 1120)
        #expect(abs((wo.x + wide.image.width / 2) - 640) <= 8)   // the shadow widens the box to the right
        subs.safeMargin = 0.1
        let safe = try #require(subs.layer(at: t, for: frame, in: Composition(outputWidth: 1280, outputHeight: 720)))
        let so = safe.origin(outputWidth: 1280, outputHeight: 720)
        #expect(so.y + safe.image.height <= 720 - 72)
        #expect(so.y + safe.image.height < wo.y + wide.image.height)
    }
}
