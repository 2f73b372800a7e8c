import Foundation
import ScanoutTestSupport
import Testing

/// `framemd5`, `decode` and `render` of an HLS master playlist read one variant, start to end,
/// whatever the network does: the first (ffmpeg's `-map 0:v:0`), or the one `--variant` or
/// `--max-height` picks; they say which on stderr. The hls3 ladder: 256x192 (165 kb/s), 288x216
/// (330 kb/s), 320x240 (660 kb/s), 150 frames.
@Suite struct VariantPinCLITests {
    static func dataLines(_ text: String) -> [String] {
        text.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("#") }
    }

    @Test("framemd5 of a 3-variant master equals ffmpeg -map 0:v:0 line for line, with the first variant's segments throttled")
    func firstVariantAsFFmpeg() async throws {
        try await offPool {
            let hls = try HTTPFileServer.hls(directory: try Fixtures.path("hls3"))
            let master = hls.url("master.m3u8")
            let expected = try Proc.ffmpegFrameMD5Lines(master)
            #expect(expected.count == 150)
            // 50 kB/s on the first variant (a segment of ~21 kB in ~0.4 s): an adaptive read would change up.
            try hls.control("throttle?prefix=/v0/&rate=50000")
            let r = try CLI.run(["framemd5", master])
            #expect(r.status == 0, "\(r.stderrText)")
            #expect(Self.dataLines(r.stdoutText) == expected)
            #expect(r.stderrText.contains("variant 0 of 3: 256x192, 165 kb/s"), "\(r.stderrText)")
        }
    }

    @Test("--variant 2 and --max-height 216 read ffmpeg's -map 0:v:2 and 0:v:1; a missing variant is an error naming the choices")
    func chosenVariants() async throws {
        try await offPool {
            let hls = try HTTPFileServer.hls(directory: try Fixtures.path("hls3"))
            let master = hls.url("master.m3u8")
            func ffmpeg(_ map: String) throws -> [String] {
                Self.dataLines(String(decoding: try Proc.ffmpeg(["-i", master, "-map", map, "-f", "framemd5", "-"]), as: UTF8.self))
            }
            let top = try CLI.run(["framemd5", master, "--variant", "2"])
            let v2 = try ffmpeg("0:v:2"), v1 = try ffmpeg("0:v:1")
            #expect(v2.count == 150 && v1.count == 150)
            #expect(top.status == 0 && Self.dataLines(top.stdoutText) == v2)
            #expect(top.stderrText.contains("variant 2 of 3: 320x240, 660 kb/s"), "\(top.stderrText)")
            let capped = try CLI.run(["framemd5", master, "--max-height", "216"])
            #expect(capped.status == 0 && Self.dataLines(capped.stdoutText) == v1)
            #expect(capped.stderrText.contains("variant 1 of 3: 288x216, 330 kb/s"), "\(capped.stderrText)")
            let quiet = try CLI.run(["framemd5", master, "--variant", "1", "-q"])
            #expect(quiet.status == 0 && !quiet.stderrText.contains("variant"))
            let missing = try CLI.run(["framemd5", master, "--variant", "3"])
            #expect(missing.status == 1 && missing.stderrText.contains("no variant 3") && missing.stderrText.contains("2: 320x240"),
                    "\(missing.stderrText)")
            let both = try CLI.run(["framemd5", master, "--variant", "1", "--max-height", "216"])
            #expect(both.status == 1 && both.stderrText.contains("--variant"))
        }
    }

    @Test("decode and render keep the first variant too, and local master playlists as well")
    func decodeAndRender() async throws {
        try await offPool {
            let scratch = try Scratch()
            let hls = try HTTPFileServer.hls(directory: try Fixtures.path("hls3"))
            try hls.control("throttle?prefix=/v0/&rate=50000")
            let decoded = try CLI.run(["decode", hls.url("master.m3u8"), "-o", scratch.path("a.y4m")])
            #expect(decoded.status == 0, "\(decoded.stderrText)")
            #expect(decoded.stderrText.contains("variant 0 of 3"))
            #expect(decoded.stderrText.contains("decoded 150 frames of h264 256x192"), "\(decoded.stderrText)")
            let rendered = try CLI.run(["render", try Fixtures.path("hls3/master.m3u8"), "--frames", "0,149", "--out", scratch.path("png")])
            #expect(rendered.status == 0, "\(rendered.stderrText)")
            #expect(rendered.stderrText.contains("variant 0 of 3: 256x192"))
            #expect(rendered.stdoutText.split(separator: "\n").allSatisfy { $0.hasSuffix("256x192") }, "\(rendered.stdoutText)")
            let local = try CLI.run(["framemd5", try Fixtures.path("hls3/master.m3u8")])
            let expected = try Proc.ffmpegFrameMD5Lines(try Fixtures.path("hls3/master.m3u8"))
            #expect(expected.count == 150 && Self.dataLines(local.stdoutText) == expected)
        }
    }
}
