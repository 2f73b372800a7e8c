import Foundation
import ScanoutTestSupport
import Testing

/// `scanout render` of HDR content: tone mapped to SDR by default, as ffmpeg's zscale,tonemap
/// chain draws it; `--tonemap none` keeps the plain conversion.
@Suite("scanout render --tonemap")
struct RenderToneMapTests {
    /// The rgb24 pixels of a PNG (ffmpeg decodes it).
    static func pixels(_ png: String) throws -> [UInt8] {
        [UInt8](try Proc.ffmpeg(["-i", png, "-f", "rawvideo", "-pix_fmt", "rgb24", "-"]))
    }

    @Test("PQ (4:4:4) by default: hable, within the renderer tests' ΔE2000 bounds of zscale,tonemap=hable; mobius when asked")
    func toneMappedByDefault() throws {
        let scratch = try Scratch()
        let clip = scratch.path("pq.mkv")
        try HDRChart.make(clip, transfer: .pq, pixelFormat: "yuv444p10le")
        for (args, curve) in [([String](), "hable"), (["--tonemap", "mobius"], "mobius")] {
            let out = scratch.path(curve)
            let r = try CLI.run(["render", clip, "--frames", "0", "--out", out] + args)
            #expect(r.status == 0, "exit \(r.status): \(r.stderrText)")
            let d = ColourDifference.Summary(ColourDifference.perPixel(try Self.pixels(out + "/frame-000000.png"),
                                                                       try HDRChart.reference(clip, curve: curve)))
            #expect(d.mean < 0.5 && d.p99 < 1 && d.max < 2, "\(curve): \(d)")
        }
    }

    @Test("--tonemap none: the plain picture, byte for byte ffmpeg's -pix_fmt rgb24, for HLG too")
    func noneIsBitExact() throws {
        let scratch = try Scratch()
        let clip = scratch.path("hlg.mkv")
        try HDRChart.make(clip, transfer: .hlg)
        let out = scratch.path("out")
        let r = try CLI.run(["render", clip, "--frames", "1", "--tonemap", "none", "--out", out])
        #expect(r.status == 0, "exit \(r.status): \(r.stderrText)")
        let reference = [UInt8](try Proc.ffmpeg(["-i", clip, "-vf", "select=eq(n\\,1)", "-frames:v", "1", "-pix_fmt", "rgb24", "-f", "rawvideo", "-"]))
        #expect(try Self.pixels(out + "/frame-000001.png") == reference)
    }

    @Test("--renderer gl: tone mapped in its shader (hable by default) near zscale,tonemap; --tonemap none draws the plain picture")
    func glRenderer() throws {
        let scratch = try Scratch()
        let clip = scratch.path("pq.mkv")
        try HDRChart.make(clip, transfer: .pq, pixelFormat: "yuv444p10le")
        let mapped = scratch.path("mapped"), plain = scratch.path("plain")
        let r = try CLI.run(["render", clip, "--frames", "0", "--renderer", "gl", "--out", mapped])
        #expect(r.status == 0, "exit \(r.status): \(r.stderrText)")
        let d = ColourDifference.Summary(ColourDifference.perPixel(try Self.pixels(mapped + "/frame-000000.png"),
                                                                   try HDRChart.reference(clip, curve: "hable")))
        #expect(d.mean < 0.5 && d.p99 < 1.5 && d.max < 2.5, "\(d)")
        let n = try CLI.run(["render", clip, "--frames", "0", "--renderer", "gl", "--tonemap", "none", "--out", plain])
        #expect(n.status == 0, "exit \(n.status): \(n.stderrText)")
        let reference = [UInt8](try Proc.ffmpeg(["-i", clip, "-frames:v", "1", "-pix_fmt", "rgb24", "-f", "rawvideo", "-"]))
        // The GL renderer's own 10-bit 4:4:4 conversion, a few codes from ffmpeg's (measured: mean
        // 0.56, p99 1.61, max 3.08): the plain picture, not a mapped one.
        let drawn = try Self.pixels(plain + "/frame-000000.png")
        let e = ColourDifference.Summary(ColourDifference.perPixel(drawn, reference))
        #expect(e.mean < 1 && e.p99 < 2.5 && e.max < 4, "\(e)")
    }

    @Test("an unknown curve is a usage error that lists the curves")
    func unknownCurve() throws {
        let r = try CLI.run(["render", try Fixtures.path("counter.mp4"), "--frames", "0", "--tonemap", "aces"])
        #expect(r.status == 1, "exit \(r.status)")
        let listed = ["hable", "mobius", "reinhard", "clip", "linear", "bt2390", "none"].allSatisfy { r.stderrText.contains("\n  - \($0)\n") }
        #expect(r.stderrText.contains("'aces' is invalid for '--tonemap <curve>'") && listed, "\(r.stderrText)")
    }
}
