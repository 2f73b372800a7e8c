import ScanoutDisplay
import ScanoutKMS
import ScanoutCore
import ScanoutDecode
import ScanoutPolicy
import ScanoutTestSupport
import ScanoutTesting
import Testing

/// An HDMI screen with Content Protection (Undesired) and an eDP panel, one CRTC and primary plane
/// each, 320x240@60.
private func hdmiAndPanel() -> FakeKMSDevice {
    let mode = [KMSMode(width: 320, height: 240, refresh: 60, preferred: true)]
    var hdmiProps = FakeKMSDevice.connectorProperties
    hdmiProps["Content Protection"] = 0
    hdmiProps["HDCP Content Type"] = 0
    return FakeKMSDevice(
        connectors: [
            KMSConnector(id: 30, typeName: "HDMI-A", typeID: 1, connection: .connected, modes: mode, encoderIDs: [20], properties: hdmiProps),
            KMSConnector(id: 31, typeName: "eDP", typeID: 1, connection: .connected, modes: mode, encoderIDs: [21],
                         properties: FakeKMSDevice.connectorProperties),
        ],
        encoders: [KMSEncoder(id: 20, possibleCRTCs: 0b01), KMSEncoder(id: 21, possibleCRTCs: 0b10)],
        crtcs: [KMSCRTC(id: 10, properties: FakeKMSDevice.crtcProperties), KMSCRTC(id: 11, properties: FakeKMSDevice.crtcProperties)],
        planes: [
            KMSPlane(id: 40, type: .primary, possibleCRTCs: 0b01, formats: [FourCC.xrgb8888], properties: FakeKMSDevice.planeProperties),
            KMSPlane(id: 41, type: .primary, possibleCRTCs: 0b10, formats: [FourCC.xrgb8888], properties: FakeKMSDevice.planeProperties),
        ])
}

/// A KMS display on the fake with the guard plugged in as `play` does it.
private final class GuardedScreen {
    let device = hdmiAndPanel()
    let display: KMSDisplay
    let guardian: OutputGuard
    let renderer = MemoryScanoutRenderer()
    let clock = ManualClock()

    init(policy: ContentPolicy) throws {
        display = try KMSDisplay(device: device, renderer: renderer, clock: clock)
        guardian = OutputGuard(policy: policy, configuration: .init(hdcpTimeout: .seconds(2)))
        display.outputFilter = guardian
    }

    /// Whether each output (by name) shows a picture (anything but the black background).
    func showing(_ frame: VideoFrame) throws -> [String: Bool] {
        try display.present(frame, orientation: .identity)
        var out: [String: Bool] = [:]
        for name in ["HDMI-A-1", "eDP-1"] {
            let image = try renderer.read(display.shownBuffer(named: name)!)
            out[name] = image.bytes.contains { $0 != 0 }
        }
        return out
    }
}

private func firstFrame() throws -> VideoFrame {
    let reader = try FrameReader(input: try Fixtures.path("counter.mp4"))
    let f = VideoFrame()
    _ = try reader.next(into: f)
    return f
}

@Suite struct GuardedDisplayTests {
    @Test func externalOutputDenyBlanksTheHDMIScreenAndKeepsThePanel() throws {
        let screen = try GuardedScreen(policy: ContentPolicy(externalOutput: .deny, hdcp: .none, capture: .allow))
        let f = try firstFrame()
        #expect(try screen.showing(f) == ["HDMI-A-1": false, "eDP-1": true])
        #expect(screen.display.lastCensorReason["HDMI-A-1"] == "HDMI-A-1: external output, and the content policy denies external outputs")
        #expect(screen.guardian.screenConnectEnabled("eDP-1"))
        #expect(!screen.guardian.screenConnectEnabled("HDMI-A-1"))
    }

    @Test func hdcpContentShowsOnlyWhileTheLinkIsEnabled() throws {
        let screen = try GuardedScreen(policy: ContentPolicy(externalOutput: .allow, hdcp: .type0, capture: .allow))
        let f = try firstFrame()
        // Asked for, not yet Enabled: censored; the panel needs no HDCP.
        #expect(try screen.showing(f) == ["HDMI-A-1": false, "eDP-1": true])
        #expect(screen.device.value(of: 30, "Content Protection") == 1)
        // The display is the one writer: the request rides on its frame commit, TEST_ONLY first.
        let carrying = screen.device.commits.filter { $0.request.value(of: 30, "Content Protection") == 1 }
        #expect(carrying.map(\.flags) == [[.testOnly, .allowModeset], [.allowModeset, .pageFlipEvent]])
        #expect(carrying.allSatisfy { $0.request.value(of: 40, "FB_ID") != nil && $0.request.value(of: 30, "HDCP Content Type") == 0 })
        // The kernel enables the link (and says so with a uevent): the next frame shows.
        try screen.device.simulatePropertyChange(objectID: 30, "Content Protection", to: 2, hotplugEvent: true)
        #expect(try screen.showing(f) == ["HDMI-A-1": true, "eDP-1": true])
        // The link falls back to Desired: the very next frame is censored.
        try screen.device.simulatePropertyChange(objectID: 30, "Content Protection", to: 1, hotplugEvent: true)
        #expect(try screen.showing(f) == ["HDMI-A-1": false, "eDP-1": true])
        #expect(screen.display.lastCensorReason["HDMI-A-1"]?.contains("HDCP link lost") == true)
        #expect(screen.display.counters.censored == 2)
    }

    @Test func theGuardJudgesAtTheDisplaysClock() throws {
        let screen = try GuardedScreen(policy: ContentPolicy(externalOutput: .allow, hdcp: .type0, capture: .allow))
        let f = try firstFrame()
        _ = try screen.showing(f)
        #expect(screen.display.lastCensorReason["HDMI-A-1"]?.contains("waiting for HDCP") == true)
        // Two seconds on the injected clock (none on the wall clock) and the request has timed out.
        screen.clock.advance(by: .seconds(2))
        #expect(try screen.showing(f) == ["HDMI-A-1": false, "eDP-1": true])
        #expect(screen.display.lastCensorReason["HDMI-A-1"]?.contains("was not enabled within 2.0 s") == true)
        #expect(screen.guardian.status(of: "HDMI-A-1")?.hdcp == .timedOut)
    }

    @Test func aCensoredHardwareFrameIsJudgedAndCountedOnce() throws {
        let device = FakeKMSDevice.singleScreen()
        let display = try KMSDisplay(device: device, renderer: MemoryScanoutRenderer())
        display.nativePlanes = true
        let guardian = OutputGuard(policy: ContentPolicy(externalOutput: .deny, hdcp: .none, capture: .allow))
        display.outputFilter = guardian
        let options = DecoderOptions(playerType: .native,
                                     environment: SelectorEnvironment(nativePlane: .available, faults: FaultPlan(standIn: true)))
        let reader = try FrameReader(input: try Fixtures.path("counter.mp4"), decoderOptions: options)
        let frame = VideoFrame()
        for _ in 0..<3 {
            _ = try reader.next(into: frame)
            #expect(frame.surface != nil)
            try display.present(frame, orientation: .identity)
        }
        #expect(display.counters.censored == 3 && display.counters.native == 0)
        #expect(guardian.counters.framesCensored == ["HDMI-A-1": 3])
        #expect(guardian.status(of: "HDMI-A-1")?.framesCensored == 3)
    }
}
