@testable import ScanoutDisplay
import ScanoutKMS
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ScanoutPlayer
import ScanoutRender
import ScanoutTestSupport
import ScanoutTesting
import Testing

/// Copies of decoded pictures between CPU and GPU memory on the hardware path, counted through the
/// software stand-in for VA-API: none when frames stay in GPU memory and go on a plane; one
/// download per frame when a consumer needs CPU planes.
@Suite struct GPUPathTransferTests {
    /// One screen (320x240) whose overlay plane takes NV12.
    static func screen() -> FakeKMSDevice {
        FakeKMSDevice(
            connectors: [KMSConnector(id: 30, typeName: "HDMI-A", typeID: 1, connection: .connected,
                                      modes: [KMSMode(width: 320, height: 240, refresh: 60, preferred: true)], encoderIDs: [20],
                                      properties: FakeKMSDevice.connectorProperties)],
            encoders: [KMSEncoder(id: 20, possibleCRTCs: 0b1)],
            crtcs: [KMSCRTC(id: 10, properties: FakeKMSDevice.crtcProperties)],
            planes: [KMSPlane(id: 40, type: .primary, possibleCRTCs: 0b1, formats: [FourCC.xrgb8888], properties: FakeKMSDevice.planeProperties),
                     KMSPlane(id: 41, type: .overlay, possibleCRTCs: 0b1, formats: [FourCC.nv12], properties: FakeKMSDevice.planeProperties)],
            clock: ManualClock(start: ClockTime(nanoseconds: 5_000)))
    }

    static func reader(_ destination: FrameDestination, _ transfers: FrameTransfers, type: PlayerType = .native) throws -> FrameReader {
        var options = DecoderOptions(playerType: type, environment: SelectorEnvironment(nativePlane: .available, faults: FaultPlan(standIn: true)))
        options.destination = destination
        options.transfers = transfers
        return try FrameReader(input: try Fixtures.path("counter.mp4"), decoderOptions: options)
    }

    @Test("GPU destination, frames on a plane: 0 downloads and 0 uploads over the whole clip")
    func nativeFramesAreNeverCopied() throws {
        let transfers = FrameTransfers()
        let display = try KMSDisplay(device: Self.screen(), renderer: MemoryScanoutRenderer())
        display.nativePlanes = true
        #expect(display.acceptsGPUFrames)
        display.countTransfers(in: transfers)
        let session = PlaybackSession(reader: try Self.reader(.gpu, transfers), display: display, timed: false)
        session.transfers = transfers
        let stats = try session.run()
        #expect(stats.framesPresented == 96)
        #expect(display.counters.native == 96 && display.counters.composited == 0)
        #expect(stats.transfers == TransferCounts())
        #expect(stats.transfers.cpuCopiesPerFrame(stats.framesPresented) == 0)
    }

    @Test("GPU destination, plane refused: each frame downloaded once, composited as a software frame would be")
    func refusedFramesAreDownloadedOnce() throws {
        let transfers = FrameTransfers()
        let device = Self.screen()
        device.reject(.plane(41))
        let display = try KMSDisplay(device: device, renderer: MemoryScanoutRenderer())
        display.nativePlanes = true
        let reader = try Self.reader(.gpu, transfers)
        let software = try FrameReader(input: try Fixtures.path("counter.mp4"), decoderOptions: DecoderOptions(playerType: .sw))
        let frame = VideoFrame(), reference = VideoFrame()
        for i in 0..<6 {
            #expect(try reader.next(into: frame))
            #expect(try software.next(into: reference))
            #expect(frame.isGPUOnly && frame.surface != nil)
            try display.present(frame, orientation: .identity)
            #expect(transfers.counts.downloads == i + 1)
            #expect(!frame.isGPUOnly)
            // Asking again does not download again.
            try frame.makeCPUResident()
            #expect(transfers.counts.downloads == i + 1)
            let shown = try display.renderer.read(display.shownBuffer(named: "HDMI-A-1")!)
            #expect(shown == (try CPUCompositor().compose(reference, as: Composition(), width: 320, height: 240)))
        }
        #expect(display.counters.nativeRejected == 6 && display.counters.composited == 6)
        #expect(transfers.counts.uploads == 0)
    }

    @Test("CPU destination: every hardware frame is downloaded as it is decoded, software frames never")
    func cpuDestinationDownloadsEachFrame() throws {
        let hw = FrameTransfers()
        let reader = try Self.reader(.cpu, hw, type: .hw)
        let frame = VideoFrame()
        var n = 0
        while try reader.next(into: frame) {
            n += 1
            #expect(!frame.isGPUOnly && frame.surface != nil)
        }
        #expect(n == 96 && hw.counts == TransferCounts(downloads: 96))

        let sw = FrameTransfers()
        var options = DecoderOptions(playerType: .sw)
        options.transfers = sw
        options.destination = .gpu
        let software = try FrameReader(input: try Fixtures.path("counter.mp4"), decoderOptions: options)
        while try software.next(into: frame) { #expect(!frame.isGPUOnly) }
        #expect(sw.counts == TransferCounts())
    }

    @Test("the player on a screen asks for GPU frames and reports the counts in its snapshot")
    func playerSnapshotCounts() throws {
        let display = try KMSDisplay(device: Self.screen(), renderer: MemoryScanoutRenderer())
        display.nativePlanes = true
        var configuration = PlayerConfiguration()
        configuration.decoder = DecoderOptions(playerType: .native, environment: SelectorEnvironment(nativePlane: .available, faults: FaultPlan(standIn: true)))
        let engine = PlayerEngine(display: display, clock: ManualClock(), configuration: configuration) { _ in }
        #expect(engine.configuration.decoder.destination == .gpu)
        #expect(engine.configuration.decoder.transfers != nil)
        // A new configuration (PUT /config) keeps the pipeline's destination and counter.
        let counter = engine.configuration.decoder.transfers
        engine.configuration = configuration
        #expect(engine.configuration.decoder.destination == .gpu && engine.configuration.decoder.transfers === counter)
    }
}

extension GPUPathTransferTests {
    @Test("a zone drawn from GPU memory is watched too: a copy downloaded at most every interval, its sample kept between")
    func gpuZoneSampled() throws {
        let transfers = FrameTransfers()
        let reader = try Self.reader(.gpu, transfers, type: .hw)
        let clock = ManualClock(start: ClockTime(nanoseconds: 1_000_000_000))
        let zone = ZoneSurface(name: "tile", acceptsGPUFrames: true, gpuSampleInterval: .milliseconds(250), clock: clock)
        var samples: [PictureSample?] = []
        var gpuOnly = 0
        let frame = VideoFrame()
        for _ in 0..<20 {
            guard try reader.next(into: frame) else { break }
            if frame.isGPUOnly { gpuOnly += 1 }
            try zone.present(frame, layout: FrameLayout())
            samples.append(zone.current().sample)
            clock.advance(by: .milliseconds(40))
        }
        // Frames at 40 ms: one download every seventh frame (0, 280, 560 ms ...): 3 in 20 frames.
        #expect(gpuOnly == 20)
        #expect(zone.gpuSamples == 3)
        #expect(transfers.counts.downloads == 3)
        #expect(samples.allSatisfy { $0 != nil })
        #expect(samples[0] == samples[6] && samples[6] != samples[7])
        // The sample is the picture's: the counter clip is not black, and frame 7's differs.
        #expect(samples[0]?.isBlack == false && samples[7].map { !$0.looksLike(samples[0]!) } == true)
    }
}
