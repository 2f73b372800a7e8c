import Testing
import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
@testable import ScanoutRender
import ScanoutTestSupport

// Tone mapping in the GLES renderer's shader, on llvmpipe, against the CPU tone mapper's
// picture (CPUCompositor with the same ToneMapping) as CIEDE2000.
@Suite("GL renderer: tone mapping in the shader")
struct GLToneMappingTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var transfer: HDRChart.Transfer
        var pixelFormat: String
        var curve: ToneCurve
        /// The planes converted to this (swscale) before drawing: a semi-planar layout.
        var convert: PixelFormat? = nil
        var options = EGLDisplayContext.Options()
        var testDescription: String {
            let gles2 = options.glesVersionLimit == 2 ? " GLES 2" : ""
            return "\(transfer == .pq ? "PQ" : "HLG") \(convert?.name ?? pixelFormat) \(curve)\(gles2)"
        }
    }

    static let gles2 = EGLDisplayContext.Options(contextVersions: [2], glesVersionLimit: 2)

    static let cases: [Case] = ToneCurve.allCases.map { Case(transfer: .pq, pixelFormat: "yuv444p10le", curve: $0) } + [
        Case(transfer: .pq, pixelFormat: "yuv420p10le", curve: .hable), Case(transfer: .pq, pixelFormat: "yuv420p10le", curve: .mobius),
        Case(transfer: .hlg, pixelFormat: "yuv444p10le", curve: .hable), Case(transfer: .hlg, pixelFormat: "yuv444p10le", curve: .mobius),
        Case(transfer: .hlg, pixelFormat: "yuv420p10le", curve: .hable), Case(transfer: .hlg, pixelFormat: "yuv420p10le", curve: .mobius),
        Case(transfer: .pq, pixelFormat: "yuv420p10le", curve: .hable, convert: .p010),
        Case(transfer: .pq, pixelFormat: "yuv420p10le", curve: .hable, options: gles2),
        Case(transfer: .hlg, pixelFormat: "yuv420p10le", curve: .mobius, convert: .p010, options: gles2),
    ]

    /// Frame 0 of a chart made for `c`, converted as `c` says.
    static func chart(_ c: Case, in scratch: Scratch) throws -> VideoFrame {
        let clip = scratch.path("chart.mkv")
        try HDRChart.make(clip, transfer: c.transfer, pixelFormat: c.pixelFormat)
        let (decoded, _) = try decodeFrame(0, of: clip)
        guard let format = c.convert else { return decoded }
        let frame = VideoFrame()
        try Scaler().convert(decoded, to: format, into: frame)
        #expect(frame.pixelFormat == format && frame.colorTransfer == decoded.colorTransfer)
        return frame
    }

    @Test("the chart drawn tone mapped by the shader is the CPU tone mapper's within ΔE2000 bounds", arguments: cases)
    func againstCPU(c: Case) throws {
        let scratch = try Scratch()
        let frame = try Self.chart(c, in: scratch)
        var composition = Composition(outputWidth: 320, outputHeight: 180)
        composition.toneMapping = ToneMapping(curve: c.curve)
        let gl = try GLRenderer(context: try EGLDisplayContext(options: c.options))
        let drawn = try gl.render(.frame(frame), as: composition)
        #expect(gl.lastToneMapping == .shader)
        let cpu = try CPUCompositor().compose(frame, as: composition, width: 320, height: 180)
        let d = ColourDifference.Summary(ColourDifference.perPixel(drawn.bytes, cpu.bytes))
        print("GL shader vs CPU tone mapping, \(c.testDescription): \(d)")
        // Bounds (docs/ARCHITECTURE.md, "HDR"): both sides do the same arithmetic in single
        // precision. At 4:4:4 the CPU starts from swscale's 16-bit RGB (its integer matrix),
        // through tables (measured: mean ≤ 0.23, p99 ≤ 0.87, max ≤ 1.31). At 4:2:0 both read the
        // planes, chroma bilinear from MPEG-2's siting; what is left is the tables' rounding
        // (measured: mean ≤ 0.005, p99 ≤ 0.24, max ≤ 1.3).
        #expect(d.mean < 0.3 && d.p99 < 1 && d.max < 2, "\(d)")
        if c.pixelFormat.hasPrefix("yuv420") || c.pixelFormat.hasPrefix("p010") { #expect(d.mean < 0.05 && d.p99 < 0.5, "\(d)") }
    }

    @Test("toneMapsInShader false: mapped on the CPU, and said why; the same picture as before")
    func cpuFallback() throws {
        let scratch = try Scratch()
        let frame = try Self.chart(Case(transfer: .pq, pixelFormat: "yuv420p10le", curve: .hable), in: scratch)
        let gl = try GLRenderer()
        gl.toneMapsInShader = false
        let drawn = try gl.render(.frame(frame), as: Composition())
        #expect(gl.lastToneMapping == .cpu(reason: "turned off (toneMapsInShader is false)"))
        #expect(gl.compiledYUVPrograms.allSatisfy { !$0.contains("tone_map") })
        let cpu = try CPUCompositor().compose(frame, as: Composition(outputWidth: 320, outputHeight: 180), width: 320, height: 180)
        #expect(drawn.bytes == cpu.bytes, "\(firstDifference(drawn.bytes, cpu.bytes))")
    }

    @Test("without tone mapping the HDR frame is drawn as coded; SDR frames never take the tone mapping program")
    func notMapped() throws {
        let scratch = try Scratch()
        let frame = try Self.chart(Case(transfer: .hlg, pixelFormat: "yuv420p10le", curve: .hable), in: scratch)
        let gl = try GLRenderer()
        var plain = Composition()
        plain.toneMapping = nil
        let drawn = try gl.render(.frame(frame), as: plain)
        #expect(gl.lastToneMapping == nil)
        let d = try #require(try CPURenderer().render(frame).maxChannelDifference(drawn))
        #expect(d <= 3)
        let (sdr, _) = try decodeFrame(3, of: try Fixtures.path("hevc10.mkv"))
        _ = try gl.render(.frame(sdr), as: Composition())
        #expect(gl.lastToneMapping == nil && gl.compiledYUVPrograms.allSatisfy { !$0.contains("tone_map") })
    }

    @Test("scaled, zoned and turned: the shader's picture stays near the CPU compositor's")
    func canvas() throws {
        let scratch = try Scratch()
        let frame = try Self.chart(Case(transfer: .pq, pixelFormat: "yuv420p10le", curve: .hable), in: scratch)
        var c = Composition(outputWidth: 640, outputHeight: 360)
        c.toneMapping = ToneMapping(curve: .mobius)
        let zone = Canvas.Zone(rect: PixelRect(x: 0, y: 0, width: 640, height: 360), composition: c)
        let canvas = Canvas(width: 640, height: 360, background: RGBColor(r: 0, g: 0, b: 0), zones: [zone])
        let gl = try GLRenderer()
        let drawn = try gl.render([.frame(frame)], on: canvas)
        #expect(gl.lastToneMapping == .shader)
        let cpu = try CPUCompositor().compose([frame], on: canvas)
        let d = ColourDifference.Summary(ColourDifference.perPixel(drawn.bytes, cpu.bytes))
        print("GL shader vs CPU tone mapping, scaled 2x on a canvas: \(d)")
        // Scaled, the shader filters Y'CbCr (bilinear) and maps; the compositor maps, then scales
        // RGB with swscale's bicubic: the ramps' colours agree, their steps' edges do not.
        #expect(d.mean < 1.5, "\(d)")
    }

    @Test("a 3840x2160 PQ frame: drawn tone mapped by the shader, and by the CPU mapping path (timed)")
    func speed() throws {
        let scratch = try Scratch()
        let clip = scratch.path("big.mkv")
        try HDRChart.make(clip, transfer: .pq, frames: 1, width: 3840, height: 2160)
        let (frame, _) = try decodeFrame(0, of: clip)
        let gl = try GLRenderer()
        let c = Composition()
        var seconds: [String: Double] = [:]
        for shader in [true, false] {
            gl.toneMapsInShader = shader
            _ = try gl.render(.frame(frame), as: c)
            let start = ClockTime.now()
            let runs = 2
            for _ in 0..<runs { _ = try gl.render(.frame(frame), as: c) }
            seconds[shader ? "shader" : "cpu"] = (ClockTime.now() - start).secondsValue / Double(runs)
            print("GL 3840x2160 PQ tone mapped \(shader ? "in the shader" : "on the CPU"): \(String(format: "%.0f", seconds[shader ? "shader" : "cpu"]! * 1000)) ms a frame (\(gl.lastStats))")
        }
        #expect(seconds["shader"]! < 20)
    }
}
