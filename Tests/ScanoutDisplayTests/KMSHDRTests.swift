#if canImport(Glibc)
import Glibc
#endif
@testable import ScanoutDisplay
import ScanoutKMS
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutRender
import ScanoutTestSupport
import ScanoutTesting
import Testing

/// The HDR and SDR test clips, made once per process; decoded afresh by each test.
private enum Clips {
    /// Kept for the process's life (its directory goes with it).
    static let scratch = try? Scratch()
    static let made: Result<[String: String], SupportError> = {
        do {
            guard let scratch else { throw SupportError("no scratch directory") }
            let p = ["pq": scratch.path("pq.mp4"), "hlg": scratch.path("hlg.mp4"), "sdr": scratch.path("sdr.mp4"), "bare": scratch.path("bare.mp4"),
                     "chart": scratch.path("chart.mp4")]
            try HDRClips.hdr(p["pq"]!)
            try HDRClips.hdr(p["chart"]!, colour: nil, frames: 1)
            try HDRClips.hdr(p["hlg"]!, transfer: "arib-std-b67", mastering: false)
            try HDRClips.hdr(p["bare"]!, mastering: false)
            try HDRClips.sdr(p["sdr"]!)
            return .success(p)
        } catch {
            return .failure(SupportError("\(error)"))
        }
    }()

    static func frames(_ name: String) throws -> [VideoFrame] {
        let reader = try FrameReader(input: try made.get()[name]!)
        var out: [VideoFrame] = []
        while true {
            let f = VideoFrame()
            guard try reader.next(into: f) else { break }
            out.append(f)
        }
        return out
    }
    static var pq: [VideoFrame] { get throws { try frames("pq") } }
    static var hlg: [VideoFrame] { get throws { try frames("hlg") } }
    static var sdr: [VideoFrame] { get throws { try frames("sdr") } }
    static var pqBare: [VideoFrame] { get throws { try frames("bare") } }
    static func path(_ name: String) throws -> String { try made.get()[name]! }
}

private func display(_ device: FakeKMSDevice, hdr: HDRSettings = HDRSettings(), renderer: MemoryScanoutRenderer = MemoryScanoutRenderer())
    throws -> (KMSDisplay, MemoryScanoutRenderer, [String]) {
    let d = try KMSDisplay(device: device, renderer: renderer, options: KMSDisplay.Options(hdr: hdr),
                           clock: ManualClock(start: ClockTime(nanoseconds: 9_000)))
    return (d, renderer, [])
}

/// Shows `frames` one after the other, reading each flip's event.
private func show(_ frames: [VideoFrame], on d: KMSDisplay) throws {
    for f in frames {
        try d.present(f, orientation: .identity)
        try d.drainEvents()
    }
}

private let connector: UInt32 = 30
private final class Token {}
private let plane: UInt32 = 40

@Suite("HDR output on a KMS screen")
struct KMSHDRTests {
    @Test("PQ on a screen that declares PQ: a tested commit with the stream's metadata blob, BT2020_RGB, max bpc 10, XRGB2101010")
    func pqOnAnHDRScreen() throws {
        let device = FakeKMSDevice.hdrScreen(edid: HDRClips.edid(eotfs: 0b1101))
        let (d, renderer, _) = try display(device)
        var changes: [OutputColour] = []
        d.onColourChanged = { changes.append($1) }
        try show(try Clips.pq, on: d)
        let m = try #require(device.hdrMetadata(connector: connector))
        // x265's G(13250,34500) B(7500,3000) R(34000,16000) WP(15635,16450) L(10000000,1), red first.
        #expect(m == HDROutputMetadata(eotf: .pq, primaries: [.init(x: 34000, y: 16000), .init(x: 13250, y: 34500), .init(x: 7500, y: 3000)],
                                       whitePoint: .init(x: 15635, y: 16450), maxMasteringLuminance: 1000, minMasteringLuminance: 1,
                                       maxCLL: 1000, maxFALL: 400))
        #expect(device.value(of: connector, "Colorspace") == 9 && device.value(of: connector, "max bpc") == 10)
        let fb = try #require(device.value(of: plane, "FB_ID"))
        #expect(device.framebuffers[UInt32(fb)] == FourCC.xrgb2101010)
        // The first commit that set the metadata was a TEST_ONLY one.
        let firstHDR = try #require(device.commits.firstIndex { $0.request.value(of: connector, "HDR_OUTPUT_METADATA").map { $0 != 0 } ?? false })
        #expect(device.commits[firstHDR].flags.contains(.testOnly) && device.commits[firstHDR].accepted)
        #expect(d.colour(named: "HDMI-A-1")?.signal?.eotf == .pq && changes.count == 1)
        #expect(renderer.formatsMade.contains(.xrgb2101010(.pq)))
    }

    @Test("the 10-bit buffer holds the picture's PQ code values: ffmpeg's own conversion to x2rgb10le, bit for bit")
    func tenBitsKept() throws {
        let device = FakeKMSDevice.hdrScreen(edid: HDRClips.edid(eotfs: 0b0101))
        let (d, renderer, _) = try display(device)
        try show(try Clips.frames("chart"), on: d)
        let shown = try #require(d.shownBuffer(named: "HDMI-A-1"))
        #expect(shown.format == .xrgb2101010(.pq), "\(shown.format)")
        let reference = try Proc.ffmpeg(["-i", try Clips.path("chart"), "-frames:v", "1", "-sws_flags", "bicubic+bitexact",
                                         "-pix_fmt", "x2rgb10le", "-f", "rawvideo", "-"])
        #expect(reference.count == 4 * 64 * 36)
        var differing = 0
        var distinct = Set<UInt32>()
        for y in 0..<36 {
            for x in 0..<64 {
                let px = try renderer.deepPixel(shown, x: x, y: y)
                let v = reference.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 4 * (y * 64 + x), as: UInt32.self)) }
                if (px.r, px.g, px.b) != (v >> 20 & 0x3ff, v >> 10 & 0x3ff, v & 0x3ff) { differing += 1 }
                distinct.insert(px.r << 20 | px.g << 10 | px.b)
            }
        }
        #expect(differing == 0)
        // Codes an 8-bit path could not hold: some not multiples of 4.
        #expect(distinct.contains { $0 & 3 != 0 } && distinct.count > 50)
    }

    @Test("SDR after PQ clears the metadata (blob 0), puts Colorspace and max bpc back and draws 8-bit buffers again")
    func sdrAfterPQClears() throws {
        let device = FakeKMSDevice.hdrScreen(edid: HDRClips.edid(eotfs: 0b0101))
        let (d, _, _) = try display(device)
        try show(try Clips.pq, on: d)
        let blob = try #require(device.value(of: connector, "HDR_OUTPUT_METADATA"))
        try show(try Clips.sdr, on: d)
        #expect(device.value(of: connector, "HDR_OUTPUT_METADATA") == 0)
        #expect(device.value(of: connector, "Colorspace") == 0 && device.value(of: connector, "max bpc") == 8)
        #expect(device.blobs[UInt32(blob)] == nil, "the metadata blob is destroyed once replaced")
        let fb = try #require(device.value(of: plane, "FB_ID"))
        #expect(device.framebuffers[UInt32(fb)] == FourCC.xrgb8888 && d.colour(named: "HDMI-A-1") == .sdr)
        // PQ again: HDR again.
        try show(try Clips.pq, on: d)
        #expect(device.hdrMetadata(connector: connector)?.eotf == .pq)
    }

    @Test("HLG on a screen that declares HLG: EOTF 3, no static metadata")
    func hlg() throws {
        let device = FakeKMSDevice.hdrScreen(edid: HDRClips.edid(eotfs: 0b1001))
        let (d, _, _) = try display(device)
        try show(try Clips.hlg, on: d)
        #expect(device.hdrMetadata(connector: connector) == HDROutputMetadata(eotf: .hlg))
        #expect(d.colour(named: "HDMI-A-1")?.signal?.range == .hlg)
    }

    @Test("a stream without metadata gets the configured default mastering display")
    func defaultMetadata() throws {
        let device = FakeKMSDevice.hdrScreen(edid: HDRClips.edid(eotfs: 0b0101))
        let (d, _, _) = try display(device, hdr: HDRSettings(defaultLightLevel: ContentLightLevel(maxCLL: 600, maxFALL: 200)))
        try show(try Clips.pqBare, on: d)
        let m = try #require(device.hdrMetadata(connector: connector))
        #expect(m.primaries[0] == .init(x: 35400, y: 14600) && m.whitePoint == .init(x: 15635, y: 16450))
        #expect(m.maxMasteringLuminance == 1000 && m.minMasteringLuminance == 50 && m.maxCLL == 600 && m.maxFALL == 200)
    }

    @Test("tone mapped, with the reason, where HDR cannot go: no HDR block, PQ not declared, hdr off, no 10-bit plane or renderer, no property")
    func toneMappedWithReasons() throws {
        let cases: [(FakeKMSDevice, HDRSettings, MemoryScanoutRenderer, String)] = [
            (.hdrScreen(edid: HDRClips.edid(eotfs: nil)), HDRSettings(), MemoryScanoutRenderer(), "EDID has no HDR static metadata block"),
            (.hdrScreen(edid: nil), HDRSettings(), MemoryScanoutRenderer(), "EDID has no HDR static metadata block"),
            (.hdrScreen(edid: HDRClips.edid(eotfs: 0b1001)), HDRSettings(), MemoryScanoutRenderer(), "declares no PQ (its EOTFs: sdr, hlg)"),
            (.hdrScreen(edid: HDRClips.edid(eotfs: 0b0101)), HDRSettings(mode: .off), MemoryScanoutRenderer(), "hdr is off"),
            (.hdrScreen(edid: HDRClips.edid(eotfs: 0b0101), primaryFormats: [FourCC.xrgb8888]), HDRSettings(), MemoryScanoutRenderer(),
             "primary plane takes no XRGB2101010"),
            (.hdrScreen(edid: HDRClips.edid(eotfs: 0b0101), metadataProperty: false), HDRSettings(), MemoryScanoutRenderer(),
             "no HDR_OUTPUT_METADATA property"),
            (.hdrScreen(edid: HDRClips.edid(eotfs: 0b0101), maxBPC: 6...8), HDRSettings(), MemoryScanoutRenderer(), "at most 8 bits"),
            (.hdrScreen(edid: HDRClips.edid(eotfs: 0b0101)), HDRSettings(), { let r = MemoryScanoutRenderer(); r.deepRefusal = "8-bit only here"; return r }(),
             "8-bit only here"),
        ]
        for (device, settings, renderer, reason) in cases {
            let (d, _, _) = try display(device, hdr: settings, renderer: renderer)
            try show(try Clips.pq, on: d)
            guard case let .toneMapped(why) = d.colour(named: "HDMI-A-1") else { Issue.record("not tone mapped: \(reason)"); continue }
            #expect(why.contains(reason), "\(why)")
            #expect(!device.commits.contains { $0.request.value(of: connector, "HDR_OUTPUT_METADATA").map { $0 != 0 } ?? false })
            let fb = try #require(device.value(of: plane, "FB_ID"))
            #expect(device.framebuffers[UInt32(fb)] == FourCC.xrgb8888)
        }
    }

    @Test("on an SDR screen the PQ picture is tone mapped (the compositor's picture with the configured curve), not its code values drawn as SDR")
    func toneMappedPicture() throws {
        let device = FakeKMSDevice.hdrScreen(edid: HDRClips.edid(eotfs: nil))
        let (d, renderer, _) = try display(device, hdr: HDRSettings(toneMapping: ToneMapping(curve: .mobius)))
        let frame = try #require(try Clips.frames("chart").first)
        try show([frame], on: d)
        let shown = try renderer.read(try #require(d.shownBuffer(named: "HDMI-A-1")))
        var c = Composition()
        c.toneMapping = ToneMapping(curve: .mobius)
        let mapped = try CPUCompositor().compose(frame, as: c, width: 64, height: 36)
        c.toneMapping = nil
        let plain = try CPUCompositor().compose(frame, as: c, width: 64, height: 36)
        #expect(shown.bytes == mapped.bytes && shown.bytes != plain.bytes)
    }

    @Test("native: a P010 HDR frame goes on the video plane as BT.2020 Y'CbCr, the metadata in its commit; SDR after it puts plane and screen back")
    func nativeHDR() throws {
        let device = FakeKMSDevice.hdrScreen(edid: HDRClips.edid(eotfs: 0b0101), videoPlane: true)
        let (d, _, _) = try display(device)
        func dmabuf(_ fourcc: UInt32) -> DMABufFrame {
            DMABufFrame(width: 64, height: 36, fourcc: fourcc, planes: [.init(buffer: BorrowedDescriptor(100), offset: 0, pitch: 128),
                                                                          .init(buffer: BorrowedDescriptor(101), offset: 0, pitch: 128)])
        }
        let content = HDRContent(range: .pq, lightLevel: ContentLightLevel(maxCLL: 800, maxFALL: 200))
        let path = try d.presentNative(dmabuf(FourCC.p010), keepAlive: Token(), orientation: .identity, hdr: content, fallback: { nil })
        #expect(path == .native)
        let real = try #require(device.commits.last { $0.accepted && !$0.flags.contains(.testOnly) })
        #expect(real.request.value(of: 41, "COLOR_ENCODING") == 2 && real.request.value(of: 41, "COLOR_RANGE") == 0)
        #expect(real.request.value(of: connector, "HDR_OUTPUT_METADATA").map { $0 != 0 } == true)
        #expect(device.hdrMetadata(connector: connector)?.maxCLL == 800 && device.value(of: connector, "Colorspace") == 9)
        #expect(device.framebuffers[UInt32(device.value(of: 41, "FB_ID") ?? 0)] == FourCC.p010)
        try d.drainEvents()
        // SDR next: composited once (the screen leaves HDR), then on the plane with its colour as found.
        let sdr = try #require(try Clips.sdr.first)
        #expect(try d.presentNative(dmabuf(FourCC.nv12), keepAlive: Token(), orientation: .identity, fallback: { sdr }) == .composited)
        try d.drainEvents()
        #expect(device.value(of: connector, "HDR_OUTPUT_METADATA") == 0)
        #expect(try d.presentNative(dmabuf(FourCC.nv12), keepAlive: Token(), orientation: .identity, fallback: { sdr }) == .native)
        #expect(device.value(of: 41, "COLOR_ENCODING") == 1 && device.value(of: 41, "COLOR_RANGE") == 0)
    }

    @Test("native: an HDR frame on a screen without HDR is composited, tone mapped, with the reason")
    func nativeHDROnSDRScreen() throws {
        let device = FakeKMSDevice.hdrScreen(edid: HDRClips.edid(eotfs: nil), videoPlane: true)
        let (d, _, _) = try display(device)
        let frame = try #require(try Clips.pq.first)
        let p010 = DMABufFrame(width: 64, height: 36, fourcc: FourCC.p010, planes: [.init(buffer: BorrowedDescriptor(100), offset: 0, pitch: 128),
                                                                                       .init(buffer: BorrowedDescriptor(101), offset: 0, pitch: 128)])
        let path = try d.presentNative(p010, keepAlive: Token(), orientation: .identity, hdr: HDRContent(range: .pq), fallback: { frame })
        #expect(path == .composited && d.lastNativeRejection?.contains("tone mapped") == true, "\(d.lastNativeRejection ?? "")")
    }

    @Test("a configured capability stands in for a screen whose EDID says nothing of HDR")
    func configuredOverride() throws {
        let device = FakeKMSDevice.hdrScreen(edid: HDRClips.edid(eotfs: nil))
        let settings = HDRSettings(screens: ["HDMI-A-1": DisplayHDRCapability(eotfs: [.sdr, .pq], maxLuminance: 1000)])
        let (d, _, _) = try display(device, hdr: settings)
        try show(try Clips.pq, on: d)
        #expect(device.hdrMetadata(connector: connector)?.eotf == .pq)
    }

    @Test("max bpc 12 asked, the link refuses more than 10: lowered to 10")
    func maxBPCLowered() throws {
        let device = FakeKMSDevice.hdrScreen(edid: HDRClips.edid(eotfs: 0b0101))
        device.reject(.maxBPCAbove(10))
        let (d, _, _) = try display(device, hdr: HDRSettings(maxBPC: 12))
        try show(try Clips.pq, on: d)
        #expect(device.value(of: connector, "max bpc") == 10 && d.colour(named: "HDMI-A-1")?.signal?.maxBPC == 10)
        #expect(device.commits.contains { !$0.accepted && $0.request.value(of: connector, "max bpc") == 12 })
    }

    @Test("a driver that needs a modeset for the metadata gets one: the switch is committed with ALLOW_MODESET")
    func modesetWhereNeeded() throws {
        let device = FakeKMSDevice.hdrScreen(edid: HDRClips.edid(eotfs: 0b0101))
        device.reject(.hdrMetadataNeedsModeset)
        let (d, _, _) = try display(device)
        try show(try Clips.sdr, on: d)
        try show(try Clips.pq, on: d)
        #expect(device.hdrMetadata(connector: connector)?.eotf == .pq)
        let real = try #require(device.commits.last { $0.accepted && !$0.flags.contains(.testOnly) && $0.request.value(of: connector, "HDR_OUTPUT_METADATA") != nil })
        #expect(real.flags.contains(.allowModeset))
        try show(try Clips.sdr, on: d)
        #expect(device.value(of: connector, "HDR_OUTPUT_METADATA") == 0)
    }

    @Test("a driver that refuses HDR: tone mapped with its error, asked once for the content, not each frame")
    func refusedOnce() throws {
        let device = FakeKMSDevice.hdrScreen(edid: HDRClips.edid(eotfs: 0b0101))
        device.reject(.property(connector, "HDR_OUTPUT_METADATA"))
        let (d, _, _) = try display(device)
        try show(try Clips.pq, on: d)
        guard case let .toneMapped(why) = d.colour(named: "HDMI-A-1") else { Issue.record("not tone mapped"); return }
        #expect(why.contains("the driver refused HDR on HDMI-A-1"), "\(why)")
        let asked = device.commits.filter { $0.request.value(of: connector, "HDR_OUTPUT_METADATA") != nil }.count
        #expect(asked == 1, "the first frame is the modeset: one test with it")
        try show(try Clips.pq, on: d)
        #expect(device.commits.filter { $0.request.value(of: connector, "HDR_OUTPUT_METADATA") != nil }.count == asked)
    }

    @Test("10-bit buffers that cannot be made: tone mapped with the reason, no metadata blob left behind")
    func noDeepBuffers() throws {
        let device = FakeKMSDevice.hdrScreen(edid: HDRClips.edid(eotfs: 0b0101))
        let renderer = MemoryScanoutRenderer()
        renderer.deepBufferFailure = "out of scanout memory"
        let (d, _, _) = try display(device, renderer: renderer)
        try show(try Clips.pq, on: d)
        guard case let .toneMapped(why) = d.colour(named: "HDMI-A-1") else { Issue.record("not tone mapped"); return }
        #expect(why.contains("no 10-bit buffers for HDMI-A-1") && why.contains("out of scanout memory"), "\(why)")
        #expect(device.blobs.values.allSatisfy { $0.count != HDROutputMetadata.byteCount }, "no metadata blob")
    }

    @Test("restore leaves no HDR behind: the metadata blob 0, Colorspace and max bpc as found")
    func restoreClears() throws {
        let device = FakeKMSDevice.hdrScreen(edid: HDRClips.edid(eotfs: 0b0101))
        let (d, _, _) = try display(device)
        try show(try Clips.pq, on: d)
        #expect(device.hdrMetadata(connector: connector) != nil)
        d.restore()
        #expect(device.value(of: connector, "HDR_OUTPUT_METADATA") == 0)
        #expect(device.value(of: connector, "Colorspace") == 0 && device.value(of: connector, "max bpc") == 8)
    }

    @Test("HDR graphics: white at 203 cd/m² in PQ (code 594) and 75 % in HLG, black at 0")
    func graphicsWhite() {
        let pq = HDRGraphics(.pq).codes(RGBColor(r: 255, g: 255, b: 255))
        #expect(pq.r == 594 && pq.g == 594 && pq.b == 594, "\(pq)")
        let hlg = HDRGraphics(.hlg).codes(RGBColor(r: 255, g: 255, b: 255))
        #expect(hlg.r == 767 && hlg.g == 767, "\(hlg)")
        #expect(HDRGraphics(.pq).pixel(.black) == 0)
    }
}
