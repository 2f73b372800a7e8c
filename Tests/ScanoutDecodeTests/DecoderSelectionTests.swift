import CFFmpeg
import CVAAPI
import Foundation
import Synchronization
import Testing
@testable import ScanoutCore
@testable import ScanoutDemux
@testable import ScanoutDecode
import ScanoutTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Collects the decoder events of one reader (delivered on the decoding thread).
final class EventLog: Sendable {
    private let events = Mutex<[DecoderEvent]>([])
    var all: [DecoderEvent] { events.withLock { $0 } }
    var fallbacks: [DecoderFallback] { all.compactMap { if case .decoderFallback(let f) = $0 { f } else { nil } } }
    var decisions: [DecoderDecision] { all.compactMap { if case .selected(let d) = $0 { d } else { nil } } }
    func observer() -> @Sendable (DecoderEvent) -> Void { { e in self.events.withLock { $0.append(e) } } }
}

/// The two framemd5 line lists are equal; on a difference, says where rather than printing both.
func expectSameFrames(_ got: [String], _ want: [String], sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(got.count == want.count, "frame count", sourceLocation: sourceLocation)
    let first = zip(got, want).enumerated().first { $0.element.0 != $0.element.1 }
    #expect(first == nil, "frame \(first?.offset ?? -1): got \(first?.element.0 ?? ""), want \(first?.element.1 ?? "")", sourceLocation: sourceLocation)
}

@Suite("decoder selection and fallback (API)")
struct DecoderSelectionTests {
    /// An empty directory stands for /dev/dri on a machine with no render node, whatever this one has.
    static func noNodes() throws -> (Scratch, SelectorEnvironment) {
        let s = try Scratch()
        return (s, SelectorEnvironment(renderNodeDirectory: s.url.path))
    }

    @Test("SCANOUT_FAULTS syntax: every item, any order, written back the same; unknown items named")
    func faultSpec() throws {
        let plan = try FaultPlan(parsing: "export@30, hw-standin,hang-loop@48,decode@12,import@5,hw-init")
        #expect(plan == FaultPlan(standIn: true, hwInit: true, decodeFrom: 12, exportAt: 30, importAt: 5, hangLoopAt: 48))
        #expect(plan.description == "hw-standin,hw-init,decode@12,export@30,import@5,hang-loop@48")
        #expect(!plan.loopHangs(framesPresented: 47) && plan.loopHangs(framesPresented: 48))
        #expect(try FaultPlan(parsing: "").isEmpty)
        #expect(try FaultPlan.fromEnvironment([:]).isEmpty)
        for bad in ["bogus", "decode@", "decode@-1", "export@x", "crash@3"] {
            #expect(throws: DecoderSelectionError.badFaultSpec("'\(bad)' is not a fault (known: hw-standin, hw-init, decode@N, export@N, import@N, hang-loop@N, audio-lost@N, audio-open@N)")) {
                try FaultPlan(parsing: "hw-standin,\(bad)")
            }
        }
        #expect(DecoderSelectionError.badFaultSpec("x").description == "SCANOUT_FAULTS: x")
    }

    @Test("the playerType hint comes off local paths and URLs; other query items stay")
    func hints() throws {
        #expect(try ContentHint.split("a/b.mp4") == ("a/b.mp4", nil))
        #expect(try ContentHint.split("a/b.mp4?playerType=sw") == ("a/b.mp4", .sw))
        #expect(try ContentHint.split("http://h/x.ts?token=1&playerType=hw&k=2#t") == ("http://h/x.ts?token=1&k=2#t", .hw))
        #expect(try ContentHint.split("http://h/x.ts?token=1") == ("http://h/x.ts?token=1", nil))
        #expect(throws: DecoderSelectionError.badHint(input: "x.mp4?playerType=gpu", value: "gpu")) { try ContentHint.split("x.mp4?playerType=gpu") }
        #expect(DecoderSelectionError.badHint(input: "x.mp4?playerType=gpu", value: "gpu").description
            == "x.mp4?playerType=gpu: playerType=gpu is not a player type (use auto, native, hw or sw)")
        // A local path with a hint opens as the path alone, and errors name the path alone.
        let path = try Fixtures.path("counter.mp4")
        let reader = try FrameReader(input: path + "?playerType=sw")
        #expect(reader.input == path)
        #expect(throws: MediaError.notFound(input: "/nonexistent/x.mp4")) { try Demuxer(input: "/nonexistent/x.mp4?playerType=hw") }
    }

    @Test("no render node, no KMS display: auto decodes in software, each step with its reason")
    func reasonsWithoutHardware() throws {
        let (scratch, env) = try Self.noNodes()
        let log = EventLog()
        let reader = try FrameReader(input: try Fixtures.path("counter.mp4"),
                                     decoderOptions: DecoderOptions(environment: env, observer: log.observer()))
        let d = try #require(reader.decision)
        #expect(d.requested == .auto && d.source == .default && d.chosen == .sw)
        // hw under --hw-backend auto: VA-API's reason, then NVDEC's (whatever this machine's CUDA
        // says; on machines without NVIDIA's driver, no libcuda).
        var nvdecOnly = env
        nvdecOnly.hwBackend = .nvdec
        let nvdec = try #require(DecoderSelector.verdicts(environment: nvdecOnly).first { $0.type == .hw })
        #expect(!nvdec.available)
        let hwReason = SelectionReason.noBackend([BackendRefusal(backend: .vaapi, reason: .noRenderNode(directory: scratch.url.path)),
                                                  BackendRefusal(backend: .nvdec, reason: nvdec.reason)])
        #expect(d.verdicts == [
            PlayerTypeVerdict(type: .native, available: false, reason: .noKMSDisplay("no KMS display")),
            PlayerTypeVerdict(type: .hw, available: false, reason: hwReason),
            PlayerTypeVerdict(type: .sw, available: true, reason: .available("libavcodec h264 (software)")),
        ])
        #expect(d.description == "decoder: sw, libavcodec h264 (software) (requested auto; native: no KMS display; hw: VA-API: no render node (\(scratch.url.path)/renderD* missing); NVDEC: \(nvdec.reason))")
        #expect(log.decisions == [d])
        #expect(log.fallbacks.isEmpty)
        #expect(reader.decoder.kind == "sw")
    }

    @Test("a render node that is not a device: the vaInitialize or open failure is the reason")
    func unusableNode() throws {
        let scratch = try Scratch()
        // A regular file named like a render node: libva gets a descriptor that is no DRM device.
        FileManager.default.createFile(atPath: scratch.path("renderD128"), contents: Data())
        let v = DecoderSelector.verdicts(environment: SelectorEnvironment(renderNodeDirectory: scratch.url.path, hwBackend: .vaapi))
        let hw = try #require(v.first { $0.type == .hw })
        #expect(!hw.available)
        switch hw.reason {
        case .vaInitializeFailed(let path, let status, let message):
            #expect(path == scratch.path("renderD128"))
            #expect(status != 0 && !message.isEmpty)
            #expect(hw.reason.description.hasPrefix("vaInitialize failed with status \(status) ("))
        case .renderNodeUnusable(let path, _):
            #expect(path == scratch.path("renderD128"))
        default:
            Issue.record("unexpected reason: \(hw.reason)")
        }
        // A --device that does not exist.
        let missing = DecoderSelector.verdicts(environment: SelectorEnvironment(device: "/nonexistent/renderD9"))
        #expect(missing[1] == PlayerTypeVerdict(type: .hw, available: false,
                                                reason: .renderNodeUnusable(path: "/nonexistent/renderD9", detail: "cannot open: No such file or directory")))
    }

    @Test("precedence: the hint beats auto; an explicit --player-type beats the hint (and says so)")
    func precedence() throws {
        let path = try Fixtures.path("counter.mp4")
        let standIn = SelectorEnvironment(faults: FaultPlan(standIn: true))
        let byHint = try FrameReader(input: path + "?playerType=sw", decoderOptions: DecoderOptions(environment: standIn))
        #expect(byHint.decision?.source == .hint)
        #expect(byHint.decision?.chosen == .sw)
        #expect(byHint.decision?.verdict(.sw)?.reason == .forcedByHint(.sw))
        #expect(byHint.decision?.description == "decoder: sw, libavcodec h264 (software) (requested sw by content hint)")

        let byFlag = try FrameReader(input: path + "?playerType=sw", decoderOptions: DecoderOptions(playerType: .hw, environment: standIn))
        #expect(byFlag.decision?.source == .flag)
        #expect(byFlag.decision?.chosen == .hw)
        #expect(byFlag.decision?.ignoredHint == .sw)
        #expect(byFlag.decision?.verdict(.hw)?.reason == .forcedByFlag(.hw))
        #expect(byFlag.decision?.decoder == "software stand-in for VA-API (SCANOUT_FAULTS=hw-standin; not hardware)")

        // auto with the stand-in: native has no KMS display, hw (the stand-in) is taken.
        let auto = try FrameReader(input: path, decoderOptions: DecoderOptions(environment: standIn))
        #expect(auto.decision?.chosen == .hw)
        #expect(auto.decision?.verdicts.map(\.type) == [.native, .hw, .sw])
        #expect(auto.decision?.verdict(.sw)?.reason == .notTried)
        #expect(DecoderSelector.resolve(flag: .auto, hint: nil) == (.auto, .default, nil))
    }

    @Test("the stand-in refuses what a VA-API driver would (4:4:4), with the reason")
    func standInRefuses444() throws {
        let reader = try FrameReader(input: try Fixtures.path("odd.mkv"),
                                     decoderOptions: DecoderOptions(playerType: .hw, environment: SelectorEnvironment(faults: FaultPlan(standIn: true))))
        #expect(reader.decision?.chosen == .sw)
        #expect(reader.decision?.verdict(.hw)?.reason
            == .profileUnsupported("yuv444p: only 4:2:0 8-bit (NV12) and 10-bit (P010) surfaces are handled (software stand-in for VA-API (SCANOUT_FAULTS=hw-standin; not hardware))"))
    }

    static let midStream: [(String, FaultPlan, String)] = [
        ("counter.mp4", FaultPlan(standIn: true, decodeFrom: 40), "3 consecutive decode errors (injected fault decode@40 (SCANOUT_FAULTS))"),
        ("counter.mp4", FaultPlan(standIn: true, exportAt: 45), "DMA-BUF export failed: injected fault export@45 (SCANOUT_FAULTS)"),
        ("counter.mp4", FaultPlan(standIn: true, importAt: 50), "import failed: injected fault import@50 (SCANOUT_FAULTS)"),
        ("counter_open.ts", FaultPlan(standIn: true, decodeFrom: 47), "3 consecutive decode errors (injected fault decode@47 (SCANOUT_FAULTS))"),
        ("counter_open.ts", FaultPlan(standIn: true, importAt: 23), "import failed: injected fault import@23 (SCANOUT_FAULTS)"),
        ("hevc10.mkv", FaultPlan(standIn: true, exportAt: 17), "DMA-BUF export failed: injected fault export@17 (SCANOUT_FAULTS)"),
        ("counter.h264", FaultPlan(standIn: true, exportAt: 33), "DMA-BUF export failed: injected fault export@33 (SCANOUT_FAULTS)"),
    ]

    @Test("a mid-stream failure switches to software: the same frames as a clean software decode, one event",
          arguments: midStream.indices)
    func midStreamFallback(case index: Int) throws {
        let (clip, faults, reason) = Self.midStream[index]
        let path = try Fixtures.path(clip)
        let clean = try frameLines(try FrameReader(input: path, decoderOptions: DecoderOptions(playerType: .sw)))
        let log = EventLog()
        let reader = try FrameReader(input: path, decoderOptions: DecoderOptions(playerType: .hw, environment: SelectorEnvironment(faults: faults),
                                                                                 observer: log.observer()))
        #expect(reader.decision?.chosen == .hw)
        let lines = try frameLines(reader)
        expectSameFrames(lines, clean)
        let frame = faults.decodeFrom ?? faults.exportAt ?? faults.importAt!
        #expect(log.fallbacks == [DecoderFallback(from: .hw, to: .sw, reason: reason, frame: frame)])
        #expect(log.fallbacks.first?.description == "decoderFallback from=hw to=sw frame=\(frame) reason=\(reason)")
        #expect(reader.activeType == .sw)
        // The switch is not stream damage.
        #expect(reader.damage() == nil)
        #expect(reader.decoder.stats.framesDecoded == clean.count)
    }

    @Test("no fault: the stand-in's export and download give the software decoder's frames")
    func standInClean() throws {
        for clip in ["counter.mp4", "hevc10.mkv"] {
            let path = try Fixtures.path(clip)
            let clean = try frameLines(try FrameReader(input: path, decoderOptions: DecoderOptions(playerType: .sw)))
            let reader = try FrameReader(input: path, decoderOptions: DecoderOptions(playerType: .hw, environment: SelectorEnvironment(faults: FaultPlan(standIn: true))))
            expectSameFrames(try frameLines(reader), clean)
            #expect(reader.fallback == nil && reader.activeType == .hw)
        }
    }

    @Test("--fallback-after N: the switch waits for N consecutive errors")
    func fallbackAfter() throws {
        let path = try Fixtures.path("counter.mp4")
        let clean = try frameLines(try FrameReader(input: path, decoderOptions: DecoderOptions(playerType: .sw)))
        let log = EventLog()
        let reader = try FrameReader(input: path, decoderOptions: DecoderOptions(playerType: .hw, fallbackAfter: 5,
                                                                                 environment: SelectorEnvironment(faults: FaultPlan(standIn: true, decodeFrom: 10)),
                                                                                 observer: log.observer()))
        expectSameFrames(try frameLines(reader), clean)
        #expect(log.fallbacks.map(\.reason) == ["5 consecutive decode errors (injected fault decode@10 (SCANOUT_FAULTS))"])
    }

    @Test("no fallback: unavailable at start, or failing mid-stream, is an error naming the cause")
    func noFallback() throws {
        let path = try Fixtures.path("counter.mp4")
        var (scratch, env) = try Self.noNodes()
        env.hwBackend = .vaapi
        #expect(throws: DecoderSelectionError.unavailable(type: .hw, input: path, reason: .noRenderNode(directory: scratch.url.path))) {
            try FrameReader(input: path, decoderOptions: DecoderOptions(playerType: .hw, allowFallback: false, environment: env))
        }
        let reader = try FrameReader(input: path, decoderOptions: DecoderOptions(playerType: .hw, allowFallback: false,
                                                                                 environment: SelectorEnvironment(faults: FaultPlan(standIn: true, exportAt: 7))))
        let frame = VideoFrame()
        var n = 0
        do {
            while try reader.next(into: frame) { n += 1 }
            Issue.record("decoding went through")
        } catch let e as DecoderSelectionError {
            #expect(e == .failedMidStream(type: .hw, input: path, frame: 7, reason: "DMA-BUF export failed: injected fault export@7 (SCANOUT_FAULTS)"))
            #expect(e.description == "\(path): hw decoding failed at frame 7: DMA-BUF export failed: injected fault export@7 (SCANOUT_FAULTS) (--no-fallback given; drop it to continue in software)")
        }
        #expect(n == 7)
        // hw-init: the hardware decoder does not open; with fallback, software at once.
        let initFails = try FrameReader(input: path, decoderOptions: DecoderOptions(playerType: .hw, environment: SelectorEnvironment(faults: FaultPlan(standIn: true, hwInit: true))))
        #expect(initFails.decision?.chosen == .sw)
        #expect(initFails.decision?.verdict(.hw)?.reason == .initFailed("injected fault hw-init (SCANOUT_FAULTS)"))
    }

    @Test("exports: two memory-file layers, closed once when the last frame holding them goes; a clone keeps them")
    func exportOwnership() throws {
        let reader = try FrameReader(input: try Fixtures.path("counter.mp4"),
                                     decoderOptions: DecoderOptions(playerType: .hw, environment: SelectorEnvironment(faults: FaultPlan(standIn: true))))
        let frame = VideoFrame()
        #expect(try reader.next(into: frame))
        var held: VideoFrame? = frame.clone()
        func identity(_ fd: Int32) -> (UInt64, UInt64)? {
            var st = stat()
            return fstat(fd, &st) == 0 ? (UInt64(st.st_dev), UInt64(st.st_ino)) : nil
        }
        var fds: [Int32] = []
        var ids: [(UInt64, UInt64)?] = []
        do {
            let surface = try #require(held?.surface)
            #expect(surface.fourcc == FourCC.nv12 && surface.objectCount == 2)
            #expect(surface.layers.map(\.drmFormat) == [FourCC.r8, FourCC.gr88])
            #expect(surface.layers.allSatisfy { $0.planes.count == 1 && $0.planes[0].pitch % 64 == 0 })
            fds = surface.layers.map { $0.planes[0].buffer.rawValue }
            ids = fds.map(identity)
            #expect(ids.allSatisfy { $0 != nil })
            // The reader moves on: the clone still holds the first picture's export, readable.
            #expect(try reader.next(into: frame))
            #expect(frame.surface !== surface)
            let back = VideoFrame()
            try surface.downloadLinear(into: back, props: held!)
            let unpacked = VideoFrame()
            try SurfaceLayout.unpack(back, to: .yuv420p, into: unpacked)
            var a: [UInt8] = [], b: [UInt8] = []
            try unpacked.copyPacked(into: &a)
            try held!.copyPacked(into: &b)
            #expect(a == b)
        }
        // Released: the descriptors are gone (closed, or the numbers now name other files).
        held = nil
        for (fd, id) in zip(fds, ids) {
            let now = identity(fd)
            #expect(now == nil || now! != id!)
        }
    }
}

@Suite("VA-API profile mapping")
struct VAAPIProfileTests {
    @Test("codec profiles map to the VA-API profiles libavcodec's hwaccel decodes them with; others have none")
    func mapping() {
        #expect(VAAPIDevice.vaProfile(codec: AV_CODEC_ID_H264, profile: 100) == VAProfileH264High)
        #expect(VAAPIDevice.vaProfile(codec: AV_CODEC_ID_H264, profile: 77) == VAProfileH264Main)
        #expect(VAAPIDevice.vaProfile(codec: AV_CODEC_ID_H264, profile: 66 | 512) == VAProfileH264ConstrainedBaseline)
        #expect(VAAPIDevice.vaProfile(codec: AV_CODEC_ID_HEVC, profile: 2) == VAProfileHEVCMain10)
        #expect(VAAPIDevice.vaProfile(codec: AV_CODEC_ID_VP9, profile: 2) == VAProfileVP9Profile2)
        #expect(VAAPIDevice.vaProfile(codec: AV_CODEC_ID_AV1, profile: 0) == VAProfileAV1Profile0)
        // High 4:4:4 Predictive (odd.mkv's profile) and an unknown profile: no VA-API decode.
        #expect(VAAPIDevice.vaProfile(codec: AV_CODEC_ID_H264, profile: 244) == nil)
        #expect(VAAPIDevice.vaProfile(codec: AV_CODEC_ID_H264, profile: -99) == nil)
        #expect(SurfaceLayout.surfaceFormat(for: .yuv420p10) == .p010)
        #expect(SurfaceLayout.surfaceFormat(for: .yuv420p) == .nv12)
        #expect(SurfaceLayout.surfaceFormat(for: PixelFormat(name: "yuv444p")!) == nil)
    }
}
