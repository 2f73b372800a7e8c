import Testing
import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutRender
import ScanoutTestSupport

@Suite("tone mapping: curves and transfers")
struct ToneCurveTests {
    @Test("every curve: 0 stays black, the peak lands on white, and all but clip rise monotonically",
          arguments: ToneCurve.allCases)
    func ends(curve: ToneCurve) {
        for peak in [10.0, 40.0, 100.0] {
            #expect(abs(curve.map(0, peak: peak)) < 1e-9, "\(curve) at 0, peak \(peak)")
            let top = curve.map(peak, peak: peak)
            #expect(abs(top - 1) < 1e-9 || (curve == .clip && top == 1), "\(curve) at the peak \(peak): \(top)")
            if curve != .clip {
                let steps = (0...200).map { curve.map(peak * Double($0) / 200, peak: peak) }
                #expect(zip(steps, steps.dropFirst()).allSatisfy { $0 < $1 }, "\(curve) not rising, peak \(peak)")
            }
        }
    }

    @Test("known points: FFmpeg's constants and forms")
    func knownPoints() {
        // hable(x) / hable(10) with Hable's constants: hable(1) = 0.22066, hable(10) = 0.70621.
        #expect(abs(ToneCurve.hable.map(1, peak: 10) - 0.31245) < 1e-4)
        // mobius: identity up to the knee (0.3); slope 1 there.
        #expect(ToneCurve.mobius.map(0.25, peak: 10) == 0.25)
        let slope = (ToneCurve.mobius.map(0.3001, peak: 10) - ToneCurve.mobius.map(0.3, peak: 10)) / 0.0001
        #expect(abs(slope - 1) < 1e-3, "mobius slope at the knee \(slope)")
        // reinhard: x/(x+1) · (peak+1)/peak.
        #expect(abs(ToneCurve.reinhard.map(1, peak: 10) - 0.55) < 1e-12)
        #expect(ToneCurve.clip.map(2, peak: 10) == 1 && ToneCurve.clip.map(0.5, peak: 10) == 0.5)
        #expect(abs(ToneCurve.linear.map(5, peak: 10) - 0.5) < 1e-12)
        // bt2390 from 1000 cd/m²: the knee sits at 1.5·m − 0.5 (m = PQ(100)/PQ(1000) = 0.6759)
        // ≈ 0.514 of PQ(1000), i.e. 28 cd/m²; below it nothing changes.
        #expect(abs(ToneCurve.bt2390.map(0.2, peak: 10) - 0.2) < 1e-9)
        #expect(ToneCurve.bt2390.map(0.9, peak: 10) < 0.9)
    }

    @Test("PQ, HLG and BT.709 transfers at known points")
    func transfers() {
        #expect(abs(HDRTransfer.nits(pq: 1) - 10000) < 1e-6)
        #expect(abs(HDRTransfer.pq(nits: 100) - 0.50808) < 1e-4)
        #expect(abs(HDRTransfer.pq(nits: 1000) - 0.75183) < 1e-4)
        for e in [0.1, 0.5, 0.9] { #expect(abs(HDRTransfer.pq(nits: HDRTransfer.nits(pq: e)) - e) < 1e-9) }
        // HLG: 1 is the 1000 cd/m² display's peak (10 × reference white); 0.5 is scene light 1/12.
        #expect(abs(HDRTransfer.hlgDisplay(1) - 10) < 1e-6)
        #expect(abs(HDRTransfer.hlgDisplay(0.5) - pow(1.0 / 12, 1.2) * 10) < 1e-9)
        #expect(HDRTransfer.bt709Signal(-1) == 0 && abs(HDRTransfer.bt709Signal(0.5) - pow(0.5, 1 / 2.4)) < 1e-12)
    }

    @Test("BT.2020 to BT.709 is BT.2087's matrix; BT.709 to itself is the identity")
    func primaries() {
        let m = HDRTransfer.matrixToBT709(from: .bt2020)
        let expected = [1.6605, -0.5876, -0.0728, -0.1246, 1.1329, -0.0083, -0.0182, -0.1006, 1.1187]
        for i in 0..<9 { #expect(abs(m[i] - expected[i]) < 1e-3, "element \(i): \(m[i])") }
        for (i, v) in HDRTransfer.matrixToBT709(from: .bt709).enumerated() { #expect(abs(v - (i % 4 == 0 ? 1 : 0)) < 1e-9) }
    }

    @Test("the signal peak: MaxCLL, else the mastering display's maximum, else the transfer's")
    func signalPeak() {
        let md = MasteringDisplay(red: nil, green: nil, blue: nil, white: nil, minLuminance: 0.005, maxLuminance: 4000)
        #expect(ToneMapping.signalPeak(transfer: .pq, contentLightLevel: ContentLightLevel(maxCLL: 1000, maxFALL: 400), masteringDisplay: md) == 1000)
        #expect(ToneMapping.signalPeak(transfer: .pq, contentLightLevel: ContentLightLevel(maxCLL: 0, maxFALL: 0), masteringDisplay: md) == 4000)
        #expect(ToneMapping.signalPeak(transfer: .pq, contentLightLevel: nil, masteringDisplay: nil) == 10000)
        #expect(ToneMapping.signalPeak(transfer: .hlg, contentLightLevel: nil, masteringDisplay: nil) == 1000)
    }
}

@Suite("tone mapping: the CPU tone mapper against FFmpeg")
struct CPUToneMapperTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var transfer: HDRChart.Transfer
        var pixelFormat: String
        var curve: ToneCurve
        var testDescription: String { "\(transfer == .pq ? "PQ" : "HLG") \(pixelFormat) \(curve)" }
        var subsampled: Bool { pixelFormat.hasPrefix("yuv420") }
    }

    static let cases: [Case] = [
        Case(transfer: .pq, pixelFormat: "yuv444p10le", curve: .hable), Case(transfer: .pq, pixelFormat: "yuv444p10le", curve: .mobius),
        Case(transfer: .pq, pixelFormat: "yuv444p10le", curve: .reinhard), Case(transfer: .pq, pixelFormat: "yuv444p10le", curve: .clip),
        Case(transfer: .pq, pixelFormat: "yuv444p10le", curve: .linear),
        Case(transfer: .pq, pixelFormat: "yuv420p10le", curve: .hable), Case(transfer: .pq, pixelFormat: "yuv420p10le", curve: .mobius),
        Case(transfer: .hlg, pixelFormat: "yuv444p10le", curve: .hable), Case(transfer: .hlg, pixelFormat: "yuv444p10le", curve: .mobius),
        Case(transfer: .hlg, pixelFormat: "yuv420p10le", curve: .hable),
    ]

    /// Whether row `y` of the chart is at least 3 rows from a band's edge (bands are 20 rows):
    /// chroma subsampled 2:1 vertically is interpolated across an edge, differently by swscale
    /// and by zimg.
    static func inBand(_ y: Int) -> Bool { (3...16).contains(y % 20) }

    @Test("the chart tone mapped equals zscale,tonemap within ΔE2000 bounds", arguments: cases)
    func againstFFmpeg(c: Case) throws {
        let scratch = try Scratch()
        let clip = scratch.path("chart.mkv")
        try HDRChart.make(clip, transfer: c.transfer, pixelFormat: c.pixelFormat)
        let (frame, _) = try decodeFrame(0, of: clip)
        let image = try CPURenderer().render(frame, toneMapping: ToneMapping(curve: c.curve))
        let reference = try HDRChart.reference(clip, curve: c.curve.rawValue)
        #expect(image.width == 320 && image.height == 180 && reference.count == image.bytes.count)
        let d = ColourDifference.perPixel(image.bytes, reference)
        let all = ColourDifference.Summary(d)
        let bands = ColourDifference.Summary(d.indices.filter { Self.inBand($0 / 320) }.map { d[$0] })
        print("\(c.testDescription): all \(all); inside the bands \(bands)")
        // Bounds (docs/ARCHITECTURE.md, "Tone mapping"): at 4:4:4 (through swscale's rgb48le) what
        // differs is rounding, swscale's conversion and this side's tables against zimg's
        // (measured: mean ≤ 0.23, p99 ≤ 0.87, max ≤ 1.31). At 4:2:0 the planes are read straight,
        // chroma interpolated bilinearly from MPEG-2's siting as zscale's default filter does
        // (measured: mean ≤ 0.05, p99 ≤ 0.37 over the picture; inside the bands p99 ≤ 0.27,
        // max ≤ 2.7). Up to ΔE 29 on a few pixels at a band's last rows near full signal, where
        // the chroma interpolated from the next band takes R'G'B' out of 0...1: zimg carries it
        // on in floating point, the tables here clamp it.
        if c.subsampled {
            #expect(all.mean < 0.2 && all.p99 < 1, "\(all)")
            #expect(bands.mean < 0.1 && bands.p99 < 0.5 && bands.max < 4, "\(bands)")
        } else {
            #expect(all.mean < 0.5 && all.p99 < 1 && all.max < 2, "\(all)")
        }
    }

    @Test("PQ without metadata peaks at 10000 cd/m²; given 1000 (the filter's fallback behind zscale) it is the chain's picture")
    func peakWithoutMetadata() throws {
        let scratch = try Scratch()
        let clip = scratch.path("bare.mkv")
        try HDRChart.make(clip, transfer: .pq, pixelFormat: "yuv444p10le", metadata: false)
        let (frame, _) = try decodeFrame(0, of: clip)
        #expect(frame.contentLightLevel == nil && frame.masteringDisplay == nil)
        let reference = try HDRChart.reference(clip, curve: "hable")
        let given = try CPURenderer().render(frame, toneMapping: ToneMapping(curve: .hable, peak: 1000))
        let own = try CPURenderer().render(frame, toneMapping: ToneMapping(curve: .hable))
        let d = ColourDifference.Summary(ColourDifference.perPixel(given.bytes, reference))
        #expect(d.mean < 0.5 && d.p99 < 1 && d.max < 2, "\(d)")
        // From 10000 cd/m² the same code values come out darker.
        #expect(own.bytes.reduce(0) { $0 + Int($1) } < given.bytes.reduce(0) { $0 + Int($1) })
    }

    @Test("without tone mapping an HDR frame is ffmpeg's plain rgb24 conversion, byte for byte")
    func untouchedWithoutMapping() throws {
        let scratch = try Scratch()
        let clip = scratch.path("chart.mkv")
        try HDRChart.make(clip, transfer: .pq)
        let (frame, _) = try decodeFrame(1, of: clip)
        let image = try CPURenderer().render(frame)
        let reference = [UInt8](try Proc.ffmpeg(["-i", clip, "-vf", "select=eq(n\\,1)", "-frames:v", "1", "-pix_fmt", "rgb24", "-f", "rawvideo", "-"]))
        #expect(image.bytes == reference, "\(firstDifference(image.bytes, reference))")
    }

    @Test("SDR frames pass through: with tone mapping asked for, the picture is the same bytes")
    func sdrPassesThrough() throws {
        let (frame, _) = try decodeFrame(3, of: try Fixtures.path("hevc10.mkv"))
        let mapper = CPUToneMapper()
        #expect(try mapper.map(frame, .default) === frame)
        #expect(try CPURenderer().render(frame, toneMapping: .default) == CPURenderer().render(frame))
    }

    @Test("the mapped frame is tagged SDR BT.709, full range, RGB, and keeps the timestamp and shape")
    func mappedFrameTags() throws {
        let scratch = try Scratch()
        let clip = scratch.path("chart.mkv")
        try HDRChart.make(clip, transfer: .hlg)
        let (frame, _) = try decodeFrame(1, of: clip)
        let mapped = try CPUToneMapper().map(frame, .default)
        #expect(mapped.colorTransfer == .bt709 && mapped.colorPrimaries == .bt709 && mapped.colorSpace == .rgb && mapped.colorRange == .full)
        #expect(mapped.pixelFormat == .bgr0 && mapped.width == 320 && mapped.height == 180)
        #expect(mapped.pts == frame.pts && mapped.sampleAspectRatio == frame.sampleAspectRatio)
        #expect(mapped.masteringDisplay == nil && mapped.contentLightLevel == nil)
    }

    @Test("a mapped frame still held is not written over by the next one")
    func heldFrameKept() throws {
        let scratch = try Scratch()
        let clip = scratch.path("chart.mkv")
        try HDRChart.make(clip, transfer: .pq)
        let (frame, _) = try decodeFrame(0, of: clip)
        let mapper = CPUToneMapper()
        let first = try mapper.map(frame, ToneMapping(curve: .hable))
        var before: [UInt8] = []
        try first.copyPacked(into: &before)
        _ = try mapper.map(frame, ToneMapping(curve: .clip))
        var after: [UInt8] = []
        try first.copyPacked(into: &after)
        #expect(before == after)
    }

    @Test("the compositor at 1:1 draws the tone mapped picture the CPU renderer draws")
    func compositorHook() throws {
        let scratch = try Scratch()
        let clip = scratch.path("chart.mkv")
        try HDRChart.make(clip, transfer: .pq)
        let (frame, _) = try decodeFrame(0, of: clip)
        var c = Composition(outputWidth: 320, outputHeight: 180)
        c.toneMapping = ToneMapping(curve: .mobius)
        let composed = try CPUCompositor().compose(frame, as: c, width: 320, height: 180)
        let rendered = try CPURenderer().render(frame, toneMapping: ToneMapping(curve: .mobius))
        #expect(composed.bytes == rendered.bytes, "\(firstDifference(composed.bytes, rendered.bytes))")
    }

    @Test("a 3840x2160 PQ frame is tone mapped in well under a second")
    func speed() throws {
        let scratch = try Scratch()
        let clip = scratch.path("big.mkv")
        try HDRChart.make(clip, transfer: .pq, frames: 1, width: 3840, height: 2160)
        let (frame, _) = try decodeFrame(0, of: clip)
        let mapper = CPUToneMapper()
        _ = try mapper.map(frame, .default)
        let start = ClockTime.now()
        let runs = 3
        for _ in 0..<runs { _ = try mapper.map(frame, .default) }
        let seconds = (ClockTime.now() - start).secondsValue / Double(runs)
        print("tone mapping 3840x2160: \(String(format: "%.0f", seconds * 1000)) ms a frame")
        #if DEBUG
        // Unoptimised, the per-pixel loop runs about ten times slower.
        #expect(seconds < 8)
        #else
        #expect(seconds < 0.5)
        #endif
    }
}
