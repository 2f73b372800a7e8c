import ScanoutDisplay
import ScanoutKMS
import ScanoutCore
import ScanoutDecode
import ScanoutPolicy
import ScanoutRender
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

@Suite("HDCP asked for by the zones of a screen, not only by the screen")
struct ZoneHDCPTests {
    /// Two zones side by side on the HDMI screen and the panel (each output shows the whole
    /// 320x240 canvas), each zone with a guard of its own.
    static func canvas() -> Canvas {
        Canvas(width: 320, height: 240, zones: [
            Canvas.Zone(rect: PixelRect(x: 0, y: 0, width: 160, height: 240), composition: Composition(background: RGBColor(r: 0, g: 0, b: 90))),
            Canvas.Zone(rect: PixelRect(x: 160, y: 0, width: 160, height: 240), composition: Composition(background: RGBColor(r: 0, g: 90, b: 0))),
        ])
    }

    @Test("a zone needing HDCP asks for it itself; it shows once Enabled; one zone's release leaves the other's protection on")
    func zonesAskAndRelease() throws {
        let device = hdmiAndPanel()
        let display = try KMSDisplay(device: device, renderer: MemoryScanoutRenderer(), clock: ManualClock())
        let hdcp = ContentPolicy(externalOutput: .allow, hdcp: .type0, capture: .allow)
        let left = OutputGuard(policy: hdcp), right = OutputGuard(policy: hdcp)
        display.zoneFilters = [0: left, 1: right]
        let f = try firstFrame()
        let canvas = Self.canvas()
        func hdmi() throws -> RGBImage { try display.renderer.read(display.shownBuffer(named: "HDMI-A-1")!) }
        try display.present(canvas, frames: [f, f])
        // Asked for on the zones' behalf, in the frame's commit; both zones censored (their
        // backgrounds) on HDMI until the link is Enabled, shown on the panel.
        #expect(device.value(of: 30, "Content Protection") == 1)
        #expect(try hdmi().pixel(x: 10, y: 120) == (0, 0, 90) && (try hdmi()).pixel(x: 300, y: 120) == (0, 90, 0))
        try device.simulatePropertyChange(objectID: 30, "Content Protection", to: 2, hotplugEvent: true)
        try display.present(canvas, frames: [f, f])
        #expect(try hdmi().pixel(x: 10, y: 120) != (0, 0, 90) && (try hdmi()).pixel(x: 300, y: 120) != (0, 90, 0))
        // The left zone's item ends: its release is not committed while the right zone holds HDCP.
        left.play(policy: .unrestricted)
        try display.present(canvas, frames: [f, f])
        #expect(device.value(of: 30, "Content Protection") == 2)
        #expect(left.propertyChanges().isEmpty)
        #expect(try hdmi().pixel(x: 300, y: 120) != (0, 90, 0))
        // The right zone's ends too: now HDCP is released.
        right.play(policy: .unrestricted)
        try display.present(canvas, frames: [f, f])
        #expect(device.value(of: 30, "Content Protection") == 0)
        #expect(right.propertyChanges().isEmpty)
    }
}
