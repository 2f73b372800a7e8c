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

/// Two screens' worth of hardware: HDMI-A-1 (connected, 640x480@60 preferred and 320x240@60) and
/// DP-1 (disconnected), encoders 20/21, CRTCs 10/11, primary planes 40/43 (XR24), overlay 41 (NV12,
/// XR24) on CRTC 10, and a writeback connector 32 when asked.
private func twoPorts(writeback: Bool = false, clock: any PlaybackClock = ManualClock(start: ClockTime(nanoseconds: 5_000))) -> FakeKMSDevice {
    let modes = [KMSMode(width: 640, height: 480, refresh: 60, preferred: true), KMSMode(width: 320, height: 240, refresh: 60)]
    var connectors = [
        KMSConnector(id: 30, typeName: "HDMI-A", typeID: 1, connection: .connected, modes: modes, encoderIDs: [20],
                     properties: FakeKMSDevice.connectorProperties),
        KMSConnector(id: 31, typeName: "DP", typeID: 1, connection: .disconnected, modes: [], encoderIDs: [21],
                     properties: FakeKMSDevice.connectorProperties),
    ]
    if writeback {
        connectors.append(KMSConnector(id: 32, typeName: "Writeback", typeID: 1, connection: .unknown, modes: [], encoderIDs: [20],
                                       properties: ["CRTC_ID": 0, "WRITEBACK_FB_ID": 0, "WRITEBACK_OUT_FENCE_PTR": 0]))
    }
    return FakeKMSDevice(
        connectors: connectors,
        encoders: [KMSEncoder(id: 20, possibleCRTCs: 0b01), KMSEncoder(id: 21, possibleCRTCs: 0b11)],
        crtcs: [KMSCRTC(id: 10, properties: FakeKMSDevice.crtcProperties), KMSCRTC(id: 11, properties: FakeKMSDevice.crtcProperties)],
        planes: [
            KMSPlane(id: 40, type: .primary, possibleCRTCs: 0b01, formats: [FourCC.xrgb8888], properties: FakeKMSDevice.planeProperties),
            KMSPlane(id: 41, type: .overlay, possibleCRTCs: 0b01, formats: [FourCC.nv12, FourCC.xrgb8888],
                     properties: FakeKMSDevice.planeProperties),
            KMSPlane(id: 43, type: .primary, possibleCRTCs: 0b10, formats: [FourCC.xrgb8888], properties: FakeKMSDevice.planeProperties),
        ],
        clock: clock)
}

/// A KMS display on `twoPorts`, drawing into memory, on a manual clock at 9 µs.
private func onTwoPorts() throws -> (ManualClock, FakeKMSDevice, MemoryScanoutRenderer, KMSDisplay) {
    let clock = ManualClock(start: ClockTime(nanoseconds: 9_000))
    let device = twoPorts(clock: clock)
    let renderer = MemoryScanoutRenderer()
    return (clock, device, renderer, try KMSDisplay(device: device, renderer: renderer, clock: clock))
}

private func nv12(_ w: Int = 640, _ h: Int = 480) -> DMABufFrame {
    DMABufFrame(width: w, height: h, fourcc: FourCC.nv12,
                planes: [.init(buffer: BorrowedDescriptor(100), offset: 0, pitch: UInt32(w)), .init(buffer: BorrowedDescriptor(101), offset: 0, pitch: UInt32(w))])
}

private final class Token {}

@Suite struct KMSDisplayTests {
    @Test func firstFrameIsATestedModesetShowingTheComposedPicture() throws {
        let device = twoPorts()
        let display = try KMSDisplay(device: device, renderer: MemoryScanoutRenderer())
        #expect(display.outputSummary.map(\.name) == ["HDMI-A-1"])
        let f = try Fixtures.frames("counter.mp4", count: 1)[0]
        try display.present(f, orientation: .identity)
        #expect(device.commits.map(\.flags) == [[.testOnly, .allowModeset], [.allowModeset, .pageFlipEvent]])
        #expect(device.commits.allSatisfy { $0.accepted })
        #expect(device.commits[0].request == device.commits[1].request)
        #expect(device.value(of: 10, "ACTIVE") == 1)
        #expect(device.value(of: 30, "CRTC_ID") == 10)
        let blob = UInt32(device.value(of: 10, "MODE_ID")!)
        #expect(device.blobs[blob] == KMSMode(width: 640, height: 480, refresh: 60, preferred: true).modeInfoBytes)
        #expect(device.blobs[blob]?.count == 68)
        #expect(device.value(of: 40, "SRC_W") == 640 << 16)
        #expect(device.value(of: 40, "CRTC_H") == 480)
        // The buffer on the plane holds the frame fitted to 640x480 (exactly 2x), as the CPU
        // compositor draws it headless.
        let output = display.outputs[0]
        let shown = try display.renderer.read(output.buffers[output.queued ?? output.onScreen!])
        let reference = try CPUCompositor().compose(f, as: Composition(), width: 640, height: 480)
        #expect(shown == reference)
        #expect(UInt32(device.value(of: 40, "FB_ID")!) == output.framebufferIDs[output.queued ?? output.onScreen!])
    }

    /// `lightUp` puts the background on the screen with the modeset and waits for its flip: the
    /// vblank grid is known, and the first frame after it is a non-blocking flip. Lit already, it
    /// does nothing; with writeback capture it leaves the modeset to the first frame.
    @Test func lightingUpMakesTheModesetSoTheFirstFrameIsAFlip() throws {
        let (clock, device, renderer, display) = try onTwoPorts()
        try display.lightUp()
        #expect(device.commits.map(\.flags) == [[.testOnly, .allowModeset], [.allowModeset, .pageFlipEvent]])
        #expect(device.value(of: 10, "ACTIVE") == 1 && device.value(of: 30, "CRTC_ID") == 10)
        #expect(display.counters.flips == 1 && display.counters.composited == 0)
        #expect(display.lastFlipTimestamp == ClockTime(nanoseconds: 9_000))
        let output = display.outputs[0]
        let lit = try display.renderer.read(output.buffers[try #require(output.onScreen)])
        #expect(lit.bytes.allSatisfy { $0 == 0 }, "the background: black")
        // Every buffer of every output was drawn once, the one flipped to and the others.
        #expect(renderer.censoredDrawn == display.outputs.reduce(0) { $0 + $1.buffers.count })
        #expect(display.outputs.allSatisfy { $0.buffers.count == 3 })
        try display.lightUp()
        #expect(device.commits.count == 2)
        try display.present(try Fixtures.frames("counter.mp4", count: 1)[0], orientation: .identity)
        #expect(device.commits.dropFirst(2).map(\.flags) == [[.testOnly, .nonBlock], [.nonBlock, .pageFlipEvent]])

        let capturing = twoPorts(writeback: true, clock: clock)
        let withCapture = try KMSDisplay(device: capturing, renderer: MemoryScanoutRenderer(), options: .init(capture: true), clock: clock)
        try withCapture.lightUp()
        #expect(capturing.commits.isEmpty)
    }

    /// `warmUp` draws a frame into a buffer that is neither on screen nor queued and commits
    /// nothing, once per kind of frame: again for another layout or size, not for the same.
    @Test func warmingUpDrawsOncePerKindOfFrameAndShowsNothing() throws {
        let (_, device, renderer, display) = try onTwoPorts()
        try display.lightUp()
        let commits = device.commits.count
        let output = display.outputs[0]
        let onScreen = try #require(output.onScreen)
        let before = try output.buffers.map { try renderer.read($0) }
        let f = try Fixtures.frames("counter.mp4", count: 2)
        display.warmUp(for: f[0], layout: FrameLayout())
        #expect(renderer.framesDrawn == 1 && device.commits.count == commits)
        #expect(output.onScreen == onScreen && output.queued == nil)
        let after = try output.buffers.map { try renderer.read($0) }
        let changed = output.buffers.indices.filter { after[$0] != before[$0] }
        #expect(changed.count == 1 && changed[0] != onScreen, "one buffer drawn, not the one on screen")
        display.warmUp(for: f[1], layout: FrameLayout())
        #expect(renderer.framesDrawn == 1, "the same kind of frame: nothing more")
        display.warmUp(for: f[1], layout: FrameLayout(orientation: Orientation(rotation: 90)))
        #expect(renderer.framesDrawn == 2, "another layout")
        #expect(device.commits.count == commits)
    }

    /// A held commit: the present draws at once and commits (its flip's time here) no sooner
    /// than the time given, once; a time already past holds nothing.
    @Test func aHeldCommitWaitsForItsTimeOnce() throws {
        let (clock, _, _, display) = try onTwoPorts()
        #expect(display.holdsCommits)
        try display.lightUp()
        let f = try Fixtures.frames("counter.mp4", count: 3)
        clock.time = ClockTime(nanoseconds: 1_000_000_000)
        display.holdNextCommit(until: ClockTime(nanoseconds: 1_030_000_000))
        try display.present(f[0], orientation: .identity)
        try display.drainEvents()
        #expect(clock.time.nanoseconds == 1_030_000_000 && display.lastFlipTimestamp?.nanoseconds == 1_030_000_000)
        clock.time = ClockTime(nanoseconds: 1_050_000_000)
        try display.present(f[1], orientation: .identity)
        try display.drainEvents()
        #expect(display.lastFlipTimestamp?.nanoseconds == 1_050_000_000, "held once only")
        display.holdNextCommit(until: ClockTime(nanoseconds: 1_000_000_000))
        clock.time = ClockTime(nanoseconds: 1_070_000_000)
        try display.present(f[2], orientation: .identity)
        try display.drainEvents()
        #expect(display.lastFlipTimestamp?.nanoseconds == 1_070_000_000, "a time past holds nothing")
        // The draw's estimate is the draw's, not the hold's.
        #expect(display.commitLead == .zero)
    }

    @Test func laterFramesAreNonBlockingFlipsPacedByFlipEvents() throws {
        let clock = ManualClock(start: ClockTime(nanoseconds: 7_000))
        let device = twoPorts(clock: clock)
        let display = try KMSDisplay(device: device, renderer: MemoryScanoutRenderer(), clock: clock)
        var shownFBs: [UInt64] = []
        for (i, f) in try Fixtures.frames("counter.mp4", count: 5).enumerated() {
            clock.time = ClockTime(nanoseconds: 7_000 + UInt64(i) * 16_666_667)
            try display.present(f, orientation: .identity)
            shownFBs.append(device.value(of: 40, "FB_ID")!)
        }
        let real = device.commits.filter { !$0.flags.contains(.testOnly) }
        let tests = device.commits.filter { $0.flags.contains(.testOnly) }
        #expect(real.count == 5 && tests.count == 5)
        #expect(real.dropFirst().allSatisfy { $0.flags == [.nonBlock, .pageFlipEvent] })
        // Each real commit follows its own TEST_ONLY twin.
        for i in stride(from: 0, to: device.commits.count, by: 2) {
            #expect(device.commits[i].flags.contains(.testOnly))
            #expect(device.commits[i].request == device.commits[i + 1].request)
        }
        // Never the buffer on screen. The fake's flips complete before the next frame is drawn, so
        // two of the three buffers alternate (the third is for a flip still pending at draw time).
        #expect(Set(shownFBs).count == 2)
        for i in 1..<shownFBs.count { #expect(shownFBs[i] != shownFBs[i - 1]) }
        try display.drainEvents()
        #expect(display.counters.flips == 5)
        #expect(display.lastFlipTimestamp?.nanoseconds == 7_000 + 4 * 16_666_667)
        #expect(display.counters.composited == 5)
    }

    /// The first present is a modeset and takes 700 ms here; the draws after it take 10 ms. The
    /// estimate a frame's present starts ahead by (`commitLead`) is the draws' 10 ms, not moved
    /// by the modeset, and a single 200 ms draw moves it by at most a tenth of two refreshes.
    @Test func theCommitLeadLeavesTheModesetOutAndBoundsAnOutlier() throws {
        let clock = ManualClock(start: ClockTime(nanoseconds: 7_000))
        let device = twoPorts(clock: clock)
        let renderer = MemoryScanoutRenderer()
        let display = try KMSDisplay(device: device, renderer: renderer, clock: clock)
        var cost = Duration.milliseconds(700)
        renderer.onDraw = { clock.time += cost }
        for (i, f) in try Fixtures.frames("counter.mp4", count: 5).enumerated() {
            if i > 0 { cost = .milliseconds(10) }
            clock.time += .nanoseconds(16_666_667)
            try display.present(f, orientation: .identity)
        }
        #expect(display.commitLead == .milliseconds(10))
        cost = .milliseconds(200)
        try display.present(try Fixtures.frames("counter.mp4", count: 1)[0], orientation: .identity)
        #expect(display.commitLead.nanosecondCount == 10_000_000 * 9 / 10 + 2 * display.refreshInterval.nanosecondCount / 10)
    }

    @Test func aRefusedTestCommitStopsWithTheDeviceAndConnectorNamed() throws {
        let device = twoPorts()
        device.reject(.testOnly, errno: EINVAL)
        let display = try KMSDisplay(device: device, renderer: MemoryScanoutRenderer())
        #expect {
            try display.present(try Fixtures.frames("counter.mp4", count: 1)[0], orientation: .identity)
        } throws: { e in
            guard let e = e as? KMSDisplayError, case .commitRejected = e else { return false }
            return e.description.hasPrefix("/dev/dri/fake0 refused the commit for HDMI-A-1: atomic commit rejected (errno 22)")
        }
        #expect(device.commits.allSatisfy { $0.flags.contains(.testOnly) })
    }

    @Test func nativeFramesGoOnAPlaneAndStayReferencedUntilReplaced() throws {
        let device = twoPorts()
        let display = try KMSDisplay(device: device, renderer: MemoryScanoutRenderer())
        weak var first: Token?
        weak var second: Token?
        var path: KMSFramePath
        do {
            let a = Token(), b = Token()
            first = a
            second = b
            path = try display.presentNative(nv12(), keepAlive: a, orientation: .identity, fallback: { nil })
            #expect(path == .native)
            // On the overlay (the primary plane has no NV12), the primary switched off.
            #expect(device.value(of: 41, "CRTC_ID") == 10)
            #expect(device.framebuffers[UInt32(device.value(of: 41, "FB_ID")!)] == FourCC.nv12)
            #expect(device.value(of: 40, "FB_ID") == 0)
            path = try display.presentNative(nv12(), keepAlive: b, orientation: .identity, fallback: { nil })
            #expect(path == .native)
        }
        try display.drainEvents()
        // The first frame left the screen when the second one's flip completed; the second is on screen.
        #expect(first == nil)
        #expect(second != nil)
        // A composited frame replaces it: the overlay is switched off and the frame released.
        try display.present(try Fixtures.frames("counter.mp4", count: 1)[0], orientation: .identity)
        try display.drainEvents()
        #expect(second == nil)
        #expect(device.value(of: 41, "FB_ID") == 0)
        #expect(device.value(of: 40, "FB_ID") != 0)
        #expect(display.counters.native == 2 && display.counters.composited == 1 && display.counters.nativeRejected == 0)
    }

    @Test func aNativeFrameTheTestCommitRefusesIsComposited() throws {
        let device = twoPorts()
        device.reject(.format(FourCC.nv12), errno: EINVAL)
        let display = try KMSDisplay(device: device, renderer: MemoryScanoutRenderer())
        let f = try Fixtures.frames("counter.mp4", count: 1)[0]
        let path = try display.presentNative(nv12(), keepAlive: Token(), orientation: .identity, fallback: { f })
        #expect(path == .composited)
        #expect(display.counters.nativeRejected == 1 && display.counters.composited == 1 && display.counters.native == 0)
        #expect(display.lastNativeRejection?.hasPrefix("TEST_ONLY refused it: atomic commit rejected (errno 22): NV12 on plane 41 is refused") == true)
        // The refused framebuffer was removed again; only the three scanout buffers remain.
        #expect(device.framebuffers.count == 3)
        #expect(device.framebuffers.values.allSatisfy { $0 == FourCC.xrgb8888 })
        // Rotation and several outputs are not tried on a plane at all.
        let rotated = try display.presentNative(nv12(), keepAlive: Token(), orientation: Orientation(rotation: 90), fallback: { f })
        #expect(rotated == .composited)
        #expect(display.lastNativeRejection == "rotation needs composition")
    }

    @Test func hotplugAddsAndReleasesOutputsWithoutStoppingPlayback() throws {
        let device = twoPorts()
        let display = try KMSDisplay(device: device, renderer: MemoryScanoutRenderer())
        var changes: [String] = []
        display.onOutputsChanged = { changes.append($0) }
        let f = try Fixtures.frames("counter.mp4", count: 3)
        try display.present(f[0], orientation: .identity)
        try device.simulateHotplug(connectorID: 31, connected: true, modes: [KMSMode(width: 320, height: 240, refresh: 60, preferred: true)])
        try display.present(f[1], orientation: .identity)
        #expect(display.outputSummary.map(\.name) == ["HDMI-A-1", "DP-1"])
        #expect(device.value(of: 31, "CRTC_ID") == 11)
        #expect(device.value(of: 11, "ACTIVE") == 1)
        #expect(device.value(of: 43, "CRTC_W") == 320)
        try device.simulateHotplug(connectorID: 30, connected: false)
        try display.present(f[2], orientation: .identity)
        #expect(display.outputSummary.map(\.name) == ["DP-1"])
        #expect(device.value(of: 10, "ACTIVE") == 0)
        #expect(device.value(of: 40, "FB_ID") == 0)
        #expect(changes == ["DP-1 added (320x240@60)", "HDMI-A-1 removed"])
        #expect(display.counters.outputsAdded == 1 && display.counters.outputsRemoved == 1)
        #expect(display.counters.composited == 3)
    }

    @Test func twoScreensEachGetTheirOwnCRTCModeAndLetterboxedPicture() throws {
        let device = twoPorts()
        try device.simulateHotplug(connectorID: 31, connected: true, modes: [KMSMode(width: 320, height: 180, refresh: 60, preferred: true)])
        _ = try device.nextEvent()
        let display = try KMSDisplay(device: device, renderer: MemoryScanoutRenderer())
        #expect(display.outputSummary.map { "\($0.name) \($0.mode)" } == ["HDMI-A-1 640x480@60", "DP-1 320x180@60"])
        let f = try Fixtures.frames("counter.mp4", count: 1)[0]
        try display.present(f, orientation: .identity)
        // One modeset commit for both, each CRTC with its own mode and plane.
        let real = device.commits.filter { !$0.flags.contains(.testOnly) }
        #expect(real.count == 1)
        #expect(Set(real[0].request.objectIDs).isSuperset(of: [10, 11, 30, 31, 40, 43]))
        #expect(device.value(of: 30, "CRTC_ID") == 10 && device.value(of: 31, "CRTC_ID") == 11)
        // The 4:3 picture fills the 4:3 screen and is pillarboxed on the 16:9 one.
        let dp = try display.renderer.read(display.shownBuffer(named: "DP-1")!)
        #expect(dp.width == 320 && dp.height == 180)
        #expect(dp == (try CPUCompositor().compose(f, as: Composition(), width: 320, height: 180)))
        #expect(dp.pixel(x: 10, y: 90) == (0, 0, 0))
        let hdmi = try display.renderer.read(display.shownBuffer(named: "HDMI-A-1")!)
        #expect(hdmi == (try CPUCompositor().compose(f, as: Composition(), width: 640, height: 480)))
    }

    @Test func restorePutsBackWhatWasOnTheScreen() throws {
        let device = twoPorts()
        // Someone else's picture: a 320x240 mode and framebuffer on CRTC 10.
        let oldMode = KMSMode(width: 320, height: 240, refresh: 60).modeInfoBytes
        let oldBlob = try device.createPropertyBlob(oldMode)
        let oldFB = device.addFramebuffer(format: FourCC.xrgb8888)
        var before = AtomicRequest()
        before.set(10, "ACTIVE", 1); before.set(10, "MODE_ID", UInt64(oldBlob)); before.set(30, "CRTC_ID", 10)
        before.set(40, "FB_ID", UInt64(oldFB)); before.set(40, "CRTC_ID", 10); before.set(40, "SRC_W", 320 << 16)
        try device.atomicCommit(before, flags: [.allowModeset])
        do {
            let display = try KMSDisplay(device: device, renderer: MemoryScanoutRenderer())
            try display.present(try Fixtures.frames("counter.mp4", count: 1)[0], orientation: .identity)
            #expect(device.value(of: 40, "FB_ID") != UInt64(oldFB))
            display.restore()
            #expect(display.restoreReport == "restored the previous state of HDMI-A-1")
        }
        #expect(device.value(of: 40, "FB_ID") == UInt64(oldFB))
        #expect(device.value(of: 40, "SRC_W") == 320 << 16)
        #expect(device.value(of: 10, "ACTIVE") == 1)
        #expect(device.blobs[UInt32(device.value(of: 10, "MODE_ID")!)] == oldMode)
        // Every buffer of the display was released; the old framebuffer is all that is left.
        #expect(Array(device.framebuffers.keys) == [oldFB])
    }

    @Test func restoreSwitchesTheScreenOffWhenTheOldPictureIsGone() throws {
        let device = twoPorts()
        let oldFB = device.addFramebuffer(format: FourCC.xrgb8888)
        var before = AtomicRequest()
        before.set(40, "FB_ID", UInt64(oldFB)); before.set(40, "CRTC_ID", 10)
        try device.atomicCommit(before, flags: [.allowModeset])
        let display = try KMSDisplay(device: device, renderer: MemoryScanoutRenderer())
        try display.present(try Fixtures.frames("counter.mp4", count: 1)[0], orientation: .identity)
        try device.removeFramebuffer(oldFB)
        display.restore()
        #expect(display.restoreReport?.hasPrefix("could not restore the previous state (atomic commit rejected (errno 2)") == true)
        #expect(display.restoreReport?.hasSuffix("switched HDMI-A-1 off") == true)
        #expect(device.value(of: 10, "ACTIVE") == 0)
        #expect(device.value(of: 40, "FB_ID") == 0)
    }

    @Test func choosingOutputsFailsWithTheConnectorAndTheCauseNamed() throws {
        func failure(_ options: KMSDisplay.Options, _ device: FakeKMSDevice = twoPorts()) -> String? {
            do { _ = try KMSDisplay(device: device, renderer: MemoryScanoutRenderer(), options: options) } catch { return "\(error)" }
            return nil
        }
        #expect(failure(.init(connectors: ["HDMI-A-9"])) == "no connector HDMI-A-9 on /dev/dri/fake0 (it has HDMI-A-1, DP-1)")
        #expect(failure(.init(connectors: ["DP-1"])) == "connector DP-1 on /dev/dri/fake0 has no screen connected")
        #expect(failure(.init(mode: "1920x1080@60")) == "no mode matching \"1920x1080@60\" on HDMI-A-1 (it has 640x480@60, 320x240@60)")
        #expect(failure(.init(capture: true)) == "/dev/dri/fake0 has no writeback connector to capture the screen with")
        let dark = twoPorts()
        try dark.simulateHotplug(connectorID: 30, connected: false)
        #expect(failure(.init(), dark) == "no connected screen on /dev/dri/fake0 (connectors: HDMI-A-1 (disconnected), DP-1 (disconnected))")
        // The mode asked for is used.
        let display = try KMSDisplay(device: twoPorts(), renderer: MemoryScanoutRenderer(), options: .init(mode: "320x240"))
        #expect(display.outputSummary.map(\.mode.description) == ["320x240@60"])
    }

    @Test func captureAddsTheWritebackToEveryCommit() throws {
        let device = twoPorts(writeback: true)
        let display = try KMSDisplay(device: device, renderer: MemoryScanoutRenderer(), options: .init(capture: true))
        var captured: [Int] = []
        display.onCapture = { i, image in
            captured.append(i)
            #expect(image.width == 640 && image.height == 480)
        }
        for f in try Fixtures.frames("counter.mp4", count: 3) { try display.present(f, orientation: .identity) }
        #expect(captured == [0, 1, 2])
        let real = device.commits.filter { !$0.flags.contains(.testOnly) }
        #expect(real.allSatisfy { $0.request.value(of: 32, "WRITEBACK_FB_ID") != nil })
        #expect(real[0].request.value(of: 32, "CRTC_ID") == 10)
    }
}

/// The `native` player type end to end through the seams: the software stand-in for VA-API
/// exports every decoded frame as DMA-BUFs, `KMSDisplay.present` puts them on the fake's NV12
/// overlay plane, and a refused plane falls back to composition with the same frames.
@Suite struct NativePlayerTypeTests {
    private func standInReader(_ n: Int = 4) throws -> FrameReader {
        let options = DecoderOptions(playerType: .native,
                                     environment: SelectorEnvironment(nativePlane: .available, faults: FaultPlan(standIn: true)))
        return try FrameReader(input: try Fixtures.path("counter.mp4"), decoderOptions: options)
    }

    @Test func exportedFramesGoOnTheOverlayPlane() throws {
        let device = twoPorts()
        let display = try KMSDisplay(device: device, renderer: MemoryScanoutRenderer())
        display.nativePlanes = true
        let reader = try standInReader()
        #expect(reader.decision?.chosen == .native)
        let frame = VideoFrame()
        var shown = 0
        while shown < 4, try reader.next(into: frame) {
            #expect(frame.surface != nil)
            try display.present(frame, orientation: .identity)
            shown += 1
        }
        #expect(display.counters.native == 4 && display.counters.composited == 0)
        // The planes were read once, at start: none re-read per frame.
        #expect(device.resourceReads == 1)
        #expect(device.framebuffers[UInt32(device.value(of: 41, "FB_ID")!)] == FourCC.nv12)
        // 320x240 fitted to 640x480: the plane scales it to the whole screen.
        #expect(device.value(of: 41, "SRC_W") == 320 << 16 && device.value(of: 41, "CRTC_W") == 640)
    }

    @Test func aRotatedHardwareFrameIsCompositedTurned() throws {
        let device = twoPorts()
        let display = try KMSDisplay(device: device, renderer: MemoryScanoutRenderer())
        display.nativePlanes = true
        let reader = try standInReader()
        let frame = VideoFrame()
        _ = try reader.next(into: frame)
        let turned = Orientation(rotation: 90)
        try display.present(frame, orientation: turned)
        #expect(display.counters.nativeRejected == 1 && display.lastNativeRejection == "rotation needs composition")
        // The composited picture is turned as the plane would have had to show it.
        let shown = try display.renderer.read(display.shownBuffer(named: "HDMI-A-1")!)
        #expect(shown == (try CPUCompositor().compose(frame, as: Composition(orientation: turned), width: 640, height: 480)))
        #expect(shown != (try CPUCompositor().compose(frame, as: Composition(), width: 640, height: 480)))
    }

    @Test func aRefusedPlaneCompositesTheSameFrames() throws {
        let device = twoPorts()
        device.reject(.plane(41))
        let display = try KMSDisplay(device: device, renderer: MemoryScanoutRenderer())
        display.nativePlanes = true
        let reader = try standInReader()
        let frame = VideoFrame()
        _ = try reader.next(into: frame)
        try display.present(frame, orientation: .identity)
        #expect(display.counters.native == 0 && display.counters.nativeRejected == 1 && display.counters.composited == 1)
        // What the primary plane shows is the downloaded frame composited, as headless would draw it.
        let shown = try display.renderer.read(display.shownBuffer(named: "HDMI-A-1")!)
        #expect(shown == (try CPUCompositor().compose(frame, as: Composition(), width: 640, height: 480)))
    }

    @Test("each draw hands the renderer the whole composition as a value: the item's layout, the display's logo; nothing lingers")
    func compositionTravelsWithEachFrame() throws {
        let renderer = MemoryScanoutRenderer()
        let display = try KMSDisplay(device: twoPorts(), renderer: renderer, composition: Composition(background: RGBColor(r: 0, g: 0, b: 255)))
        let reader = try standInReader()
        let frame = VideoFrame()
        _ = try reader.next(into: frame)
        let logo = Overlay(image: RGBAImage(width: 2, height: 2, bytes: [UInt8](repeating: 255, count: 16)), x: 4, y: 4, opacity: 1)
        display.overlay = logo
        try display.present(frame, layout: FrameLayout(orientation: Orientation(rotation: 90), scaling: .fill))
        let turned = try #require(renderer.lastComposition)
        #expect(turned.orientation == Orientation(rotation: 90) && turned.scaling == .fill)
        #expect(turned.overlay == logo && turned.background == RGBColor(r: 0, g: 0, b: 255))
        display.overlay = nil
        try display.present(frame, layout: FrameLayout())
        let plain = try #require(renderer.lastComposition)
        #expect(plain.orientation == .identity && plain.scaling == .fit && plain.overlay == nil)
        let shown = try renderer.read(display.shownBuffer(named: "HDMI-A-1")!)
        #expect(shown == (try CPUCompositor().compose(frame, as: Composition(background: RGBColor(r: 0, g: 0, b: 255)), width: 640, height: 480)))
    }

    @Test("a wall of two screens with a bezel: each shows its rectangle of the one composed canvas; both flip in one commit per frame")
    func wallAcrossTwoOutputs() throws {
        let device = twoPorts()
        try device.simulateHotplug(connectorID: 31, connected: true, modes: [KMSMode(width: 640, height: 480, refresh: 60, preferred: true)])
        _ = try device.nextEvent()
        let display = try KMSDisplay(device: device, renderer: MemoryScanoutRenderer())
        display.wall = WallLayout.grid(["HDMI-A-1", "DP-1"], columns: 2, width: 640, height: 480, bezel: 20)
        #expect(display.wall["DP-1"] == PixelRect(x: 660, y: 0, width: 640, height: 480))
        let f = try Fixtures.frames("counter.mp4", count: 2)
        // A picture stretched over the whole wall, and an inset across the bezel.
        let canvas = Canvas(width: 1300, height: 480, background: RGBColor(r: 0, g: 0, b: 90),
                            zones: [Canvas.Zone(rect: PixelRect(x: 0, y: 0, width: 1300, height: 480), composition: Composition(scaling: .stretch)),
                                    Canvas.Zone(rect: PixelRect(x: 500, y: 100, width: 320, height: 240), composition: Composition(scaling: .none),
                                                border: Canvas.Border(width: 2, color: RGBColor(r: 255, g: 0, b: 0)))])
        let before = device.commits.filter { !$0.flags.contains(.testOnly) }.count
        for _ in 0..<3 { try display.present(canvas, frames: [f[0], f[1]]) }
        let real = device.commits.filter { !$0.flags.contains(.testOnly) }.dropFirst(before)
        #expect(real.count == 3)
        #expect(real.allSatisfy { Set($0.request.objectIDs).isSuperset(of: [40, 43]) })
        let whole = try CPUCompositor().compose([f[0], f[1]], on: canvas)
        for (name, x) in [("HDMI-A-1", 0), ("DP-1", 660)] {
            let shown = try display.renderer.read(display.shownBuffer(named: name)!)
            var part: [UInt8] = []
            for y in 0..<480 { part += whole.bytes[(3 * (y * 1300 + x))..<(3 * (y * 1300 + x + 640))] }
            #expect(shown.bytes == part, "\(name)")
        }
        #expect(display.counters.composited == 3)
        // A canvas that does not fit an output's mode, with no wall, is refused with both sizes named.
        display.wall = [:]
        #expect(throws: KMSDisplayError.bufferFailed("a 1300x480 canvas on HDMI-A-1, whose mode is 640x480")) {
            try display.present(canvas, frames: [f[0], f[1]])
        }
    }

    /// Censors connectors of one type (a content policy denying external outputs, say).
    final class DenyType: OutputFilter {
        let typeName: String
        init(_ typeName: String) { self.typeName = typeName }
        func verdict(for connector: KMSConnector, at now: ClockTime) -> OutputFilterVerdict<String> {
            connector.typeName == typeName ? .censor("\(typeName) is denied") : .show
        }
        func handle(_ event: KMSEvent, connectors: [KMSConnector]) {}
    }

    @Test("a zone whose policy denies an output shows its background there, the other zones and outputs untouched")
    func zoneCensoredOnOneOutput() throws {
        let device = twoPorts()
        try device.simulateHotplug(connectorID: 31, connected: true, modes: [KMSMode(width: 640, height: 480, refresh: 60, preferred: true)])
        _ = try device.nextEvent()
        let display = try KMSDisplay(device: device, renderer: MemoryScanoutRenderer())
        display.zoneFilters = [1: DenyType("HDMI-A")]
        let f = try Fixtures.frames("counter.mp4", count: 2)
        let inset = Canvas.Zone(rect: PixelRect(x: 320, y: 240, width: 320, height: 240), composition: Composition(background: RGBColor(r: 0, g: 90, b: 0)))
        let canvas = Canvas(width: 640, height: 480, zones: [Canvas.Zone(rect: PixelRect(x: 0, y: 0, width: 640, height: 480)), inset])
        try display.present(canvas, frames: [f[0], f[1]])
        let hdmi = try display.renderer.read(display.shownBuffer(named: "HDMI-A-1")!)
        let dp = try display.renderer.read(display.shownBuffer(named: "DP-1")!)
        #expect(dp == (try CPUCompositor().compose([f[0], f[1]], on: canvas)))
        #expect(hdmi == (try CPUCompositor().compose([f[0], nil], on: canvas)))
        #expect(hdmi.pixel(x: 400, y: 300) == (0, 90, 0))
        #expect(display.counters.censoredZones == 1 && display.counters.censored == 0)
        #expect(display.lastCensorReason["HDMI-A-1"] == "zone 1: HDMI-A is denied")
    }
}
