#if canImport(Glibc)
import Glibc
import ScanoutCore
#endif
import ScanoutKMS
import ScanoutPolicy
import ScanoutTesting
import Testing

// The guard against the fake KMS device, driven frame by frame as a display loop drives it: read
// the events, read the connectors, ask for a verdict per connector, commit the property changes the
// guard asks for (TEST_ONLY first) and report back. Time is a number the test sets.

private let hdcpProperties: [String: UInt64] = FakeKMSDevice.connectorProperties
    .merging(["Content Protection": 0, "HDCP Content Type": 0]) { a, _ in a }

private func connector(_ id: UInt32, _ type: String, hdcp: Bool, connected: Bool = true) -> KMSConnector {
    KMSConnector(id: id, typeName: type, typeID: 1, connection: connected ? .connected : .disconnected,
                 modes: connected ? [KMSMode(width: 1920, height: 1080, refresh: 60, preferred: true)] : [],
                 encoderIDs: [20], properties: hdcp ? hdcpProperties : FakeKMSDevice.connectorProperties)
}

/// HDMI-A-1 (30, with the HDCP properties), eDP-1 (31), Virtual-1 (32), Writeback-1 (33) and DP-1
/// (34, without the HDCP properties).
private func makeDevice() -> FakeKMSDevice {
    FakeKMSDevice(
        connectors: [connector(30, "HDMI-A", hdcp: true), connector(31, "eDP", hdcp: false), connector(32, "Virtual", hdcp: false),
                     connector(33, "Writeback", hdcp: false), connector(34, "DP", hdcp: false)],
        encoders: [KMSEncoder(id: 20, possibleCRTCs: 0b1)],
        crtcs: [KMSCRTC(id: 10, properties: FakeKMSDevice.crtcProperties)],
        planes: [])
}

private let second: UInt64 = 1_000_000_000

/// A display loop around a guard: `frame(at:)` handles pending events and returns every
/// connector's verdict by name.
private final class Loop {
    let device: FakeKMSDevice
    let guardian: OutputGuard
    var events: [OutputGuardEvent] = []

    init(device: FakeKMSDevice = makeDevice(), policy: ContentPolicy, timeoutNs: UInt64 = 5 * second) throws {
        self.device = device
        guardian = OutputGuard(policy: .unrestricted,
                               configuration: OutputGuard.Configuration(hdcpTimeout: .nanoseconds(timeoutNs)))
        guardian.onEvent = { [unowned self] in self.events.append($0) }
        guardian.update(from: try device.resources())
        guardian.play(policy: policy)
    }

    /// The verdicts for one frame at `now` nanoseconds on the display's clock.
    func frame(at now: UInt64) throws -> [String: OutputVerdict] {
        while let e = try device.nextEvent() { guardian.handle(e, connectors: try device.resources().connectors) }
        var verdicts: [String: OutputVerdict] = [:]
        for c in try device.resources().connectors { verdicts[c.name] = guardian.verdict(for: c, at: ClockTime(nanoseconds: now)) }
        commitPropertyChanges()
        return verdicts
    }

    /// What a display does with the guard's property changes after the verdicts: one request,
    /// `TEST_ONLY` first, allowing a modeset; the outcome reported back.
    func commitPropertyChanges() {
        let changes = guardian.propertyChanges()
        guard !changes.isEmpty else { return }
        var request = AtomicRequest()
        request.add(changes)
        do {
            try device.atomicCommit(request, flags: [.testOnly, .allowModeset])
            try device.atomicCommit(request, flags: [.allowModeset])
            guardian.propertyChangesCommitted(changes, error: nil)
        } catch {
            guardian.propertyChangesCommitted(changes, error: error as? KMSError)
        }
    }

    /// The commits that touched Content Protection, as (connector, value, test-only).
    var protectionCommits: [(UInt32, UInt64, Bool)] {
        device.commits.flatMap { record in
            record.request.assignments.filter { $0.property == "Content Protection" }
                .map { ($0.objectID, $0.value, record.flags.contains(.testOnly)) }
        }
    }

    func takeEvents() -> [OutputGuardEvent] {
        defer { events.removeAll() }
        return events
    }
}

@Suite struct OutputGuardTests {
    @Test func connectorClassesFromLibdrmNames() {
        for name in ["eDP", "LVDS", "DSI", "DPI"] { #expect(ConnectorClass(typeName: name) == .internal) }
        for name in ["HDMI-A", "HDMI-B", "DP", "DVI-I", "DVI-D", "DVI-A", "VGA", "TV", "Composite", "SVIDEO", "Component",
                     "9PinDIN", "DIN", "USB"] {
            #expect(ConnectorClass(typeName: name) == .external)
        }
        #expect(ConnectorClass(typeName: "Virtual") == .virtual)
        #expect(ConnectorClass(typeName: "Writeback") == .writeback)
        // Unknown types fail closed.
        for name in ["Unknown", "SPI", "", "FutureLink"] { #expect(ConnectorClass(typeName: name) == .external) }
        // Every libdrm name has a class, and only the four panel types are internal.
        #expect(drmConnectorTypeNames.filter { ConnectorClass(typeName: $0) == .internal } == ["LVDS", "eDP", "DSI", "DPI"])
    }

    @Test func unrestrictedContentShowsEverywhereWithoutCommits() throws {
        let loop = try Loop(policy: .unrestricted)
        let v = try loop.frame(at: 0)
        #expect(v.count == 5 && v.values.allSatisfy { $0 == .show })
        #expect(loop.device.commits.isEmpty)
        #expect(loop.takeEvents().isEmpty)
        #expect(loop.guardian.outputs.allSatisfy { $0.screenConnectEnabled && $0.hdcp == .notRequired })
    }

    @Test func externalOutputDenyCensorsExternalAndVirtualButNotInternal() throws {
        let loop = try Loop(policy: ContentPolicy(externalOutput: .deny, hdcp: .none, capture: .allow))
        loop.device.simulateConnectorAdded(connector(35, "Unknown", hdcp: false))
        for frame in 0..<3 {
            let v = try loop.frame(at: UInt64(frame) * 16_000_000)
            #expect(v["eDP-1"] == .show)
            #expect(v["Writeback-1"] == .show)  // capture is allowed
            #expect(v["HDMI-A-1"] == .censor(.externalOutputDenied(output: "HDMI-A-1", connectorClass: .external)))
            #expect(v["DP-1"] == .censor(.externalOutputDenied(output: "DP-1", connectorClass: .external)))
            #expect(v["Virtual-1"] == .censor(.externalOutputDenied(output: "Virtual-1", connectorClass: .virtual)))
            #expect(v["Unknown-1"] == .censor(.externalOutputDenied(output: "Unknown-1", connectorClass: .external)))
        }
        // One event per output, on the first change only.
        let events = loop.takeEvents()
        #expect(events.count == 4)
        #expect(events.contains(.outputRestricted(output: "HDMI-A-1", reason: .externalOutputDenied(output: "HDMI-A-1", connectorClass: .external))))
        #expect(loop.guardian.counters.framesCensored == ["HDMI-A-1": 3, "DP-1": 3, "Virtual-1": 3, "Unknown-1": 3])
        #expect(loop.guardian.screenConnectEnabled("eDP-1"))
        #expect(!loop.guardian.screenConnectEnabled("HDMI-A-1"))
        #expect(loop.guardian.status(of: "HDMI-A-1")?.reason?.description == "HDMI-A-1: external output, and the content policy denies external outputs")
        #expect(loop.device.commits.isEmpty)
    }

    @Test func captureDenyCensorsWriteback() throws {
        let loop = try Loop(policy: ContentPolicy(externalOutput: .allow, hdcp: .none, capture: .deny))
        let v = try loop.frame(at: 0)
        #expect(v["Writeback-1"] == .censor(.captureDenied(output: "Writeback-1")))
        #expect(v.filter { $0.key != "Writeback-1" }.values.allSatisfy { $0 == .show })
    }

    @Test func hdcpShowsOnlyOnceTheKernelReportsEnabled() throws {
        let loop = try Loop(policy: ContentPolicy(externalOutput: .allow, hdcp: .type0, capture: .allow))
        var v = try loop.frame(at: 0)
        #expect(v["HDMI-A-1"] == .censor(.hdcpPending(output: "HDMI-A-1", required: .type0)))
        #expect(v["eDP-1"] == .show)
        // Desired and type 0 asked for, TEST_ONLY first, allowing the modeset i915 makes of it.
        #expect(loop.device.commits.count == 2)
        #expect(loop.device.commits.map(\.flags) == [[.testOnly, .allowModeset], [.allowModeset]])
        #expect(loop.device.commits[1].request.assignments == [
            .init(objectID: 30, property: "Content Protection", value: 1), .init(objectID: 30, property: "HDCP Content Type", value: 0)])
        #expect(loop.device.value(of: 30, "Content Protection") == 1)
        #expect(loop.guardian.status(of: "HDMI-A-1")?.hdcp == .pending)

        // Still Desired: still censored, no second request.
        v = try loop.frame(at: second)
        #expect(v["HDMI-A-1"] == .censor(.hdcpPending(output: "HDMI-A-1", required: .type0)))
        #expect(loop.device.commits.count == 2)

        // The kernel authenticates the link and reports it with a uevent.
        try loop.device.simulatePropertyChange(objectID: 30, "Content Protection", to: 2, hotplugEvent: true)
        v = try loop.frame(at: 2 * second)
        #expect(v["HDMI-A-1"] == .show)
        #expect(loop.guardian.screenConnectEnabled("HDMI-A-1"))
        #expect(loop.guardian.status(of: "HDMI-A-1")?.hdcp == .enabled)
        #expect(loop.device.commits.count == 2)
        let hdmiEvents = loop.takeEvents().filter { event in
            switch event {
            case let .outputRestricted(o, _), let .outputUnrestricted(o): o == "HDMI-A-1"
            }
        }
        #expect(hdmiEvents == [.outputRestricted(output: "HDMI-A-1", reason: .hdcpPending(output: "HDMI-A-1", required: .type0)),
                               .outputUnrestricted(output: "HDMI-A-1")])
        #expect(loop.guardian.counters.framesCensored["HDMI-A-1"] == 2)
    }

    @Test func linkFallingBackToDesiredIsCensoredOnTheNextFrame() throws {
        let loop = try Loop(policy: ContentPolicy(externalOutput: .allow, hdcp: .type0, capture: .allow))
        _ = try loop.frame(at: 0)
        try loop.device.simulatePropertyChange(objectID: 30, "Content Protection", to: 2, hotplugEvent: true)
        #expect(try loop.frame(at: 16_000_000)["HDMI-A-1"] == .show)
        _ = loop.takeEvents()

        // Mid-playback the link drops back to Desired: the very next frame is censored.
        try loop.device.simulatePropertyChange(objectID: 30, "Content Protection", to: 1)
        #expect(try loop.frame(at: 32_000_000)["HDMI-A-1"] == .censor(.hdcpLost(output: "HDMI-A-1")))
        #expect(loop.takeEvents() == [.outputRestricted(output: "HDMI-A-1", reason: .hdcpLost(output: "HDMI-A-1"))])
        #expect(loop.guardian.counters.hdcpLinkLosses == 1)
        #expect(loop.guardian.status(of: "HDMI-A-1")?.hdcp == .lost)
        #expect(!loop.guardian.screenConnectEnabled("HDMI-A-1"))
        #expect(try loop.frame(at: 48_000_000)["HDMI-A-1"] == .censor(.hdcpLost(output: "HDMI-A-1")))
        // The kernel re-authenticates (Desired stays set, so no new request is needed).
        try loop.device.simulatePropertyChange(objectID: 30, "Content Protection", to: 2, hotplugEvent: true)
        #expect(try loop.frame(at: 64_000_000)["HDMI-A-1"] == .show)
        #expect(loop.device.commits.count == 2)
        // Lost for longer than the timeout: the reason becomes the timeout.
        try loop.device.simulatePropertyChange(objectID: 30, "Content Protection", to: 1)
        #expect(try loop.frame(at: 80_000_000)["HDMI-A-1"] == .censor(.hdcpLost(output: "HDMI-A-1")))
        #expect(try loop.frame(at: 80_000_000 + 5 * second)["HDMI-A-1"]
                == .censor(.hdcpTimedOut(output: "HDMI-A-1", required: .type0, seconds: 5)))
        #expect(loop.guardian.counters.hdcpLinkLosses == 2)
    }

    @Test func hdcpNotEnabledInTimeIsATimeout() throws {
        let loop = try Loop(policy: ContentPolicy(externalOutput: .allow, hdcp: .type1, capture: .allow), timeoutNs: 2 * second)
        let start: UInt64 = 7 * second
        #expect(try loop.frame(at: start)["HDMI-A-1"] == .censor(.hdcpPending(output: "HDMI-A-1", required: .type1)))
        #expect(loop.device.value(of: 30, "HDCP Content Type") == 1)
        #expect(try loop.frame(at: start + 2 * second - 1)["HDMI-A-1"] == .censor(.hdcpPending(output: "HDMI-A-1", required: .type1)))
        let timedOut = OutputVerdict.censor(.hdcpTimedOut(output: "HDMI-A-1", required: .type1, seconds: 2))
        #expect(try loop.frame(at: start + 2 * second)["HDMI-A-1"] == timedOut)
        #expect(try loop.frame(at: start + 3 * second)["HDMI-A-1"] == timedOut)
        #expect(loop.guardian.counters.hdcpTimeouts == 1)  // counted once, not per frame
        #expect(loop.guardian.status(of: "HDMI-A-1")?.hdcp == .timedOut)
        #expect(timedOut != .show)
        if case let .censor(reason) = timedOut {
            #expect(reason.description == "HDMI-A-1: HDCP type1 was not enabled within 2.0 s; check the cable and that the screen supports HDCP")
        }
        let hdmi = loop.takeEvents().filter { if case let .outputRestricted(o, _) = $0 { o == "HDMI-A-1" } else { false } }
        #expect(hdmi.count == 2)  // pending, then timed out: one event per change
        // Enabled late, at type 1: shown.
        try loop.device.simulatePropertyChange(objectID: 30, "Content Protection", to: 2, hotplugEvent: true)
        #expect(try loop.frame(at: start + 4 * second)["HDMI-A-1"] == .show)
    }

    @Test func type1NeedsTheLinkAtType1() throws {
        let loop = try Loop(policy: ContentPolicy(externalOutput: .allow, hdcp: .type1, capture: .allow))
        _ = try loop.frame(at: 0)
        // Enabled, but the kernel reports the link at type 0.
        try loop.device.simulatePropertyChange(objectID: 30, "HDCP Content Type", to: 0)
        try loop.device.simulatePropertyChange(objectID: 30, "Content Protection", to: 2, hotplugEvent: true)
        #expect(try loop.frame(at: 1)["HDMI-A-1"] == .censor(.hdcpPending(output: "HDMI-A-1", required: .type1)))
        try loop.device.simulatePropertyChange(objectID: 30, "HDCP Content Type", to: 1, hotplugEvent: true)
        #expect(try loop.frame(at: 2)["HDMI-A-1"] == .show)
    }

    @Test func connectorsWithoutTheHDCPPropertyCannotShowProtectedContent() throws {
        let loop = try Loop(policy: ContentPolicy(externalOutput: .allow, hdcp: .type0, capture: .allow))
        let v = try loop.frame(at: 0)
        #expect(v["DP-1"] == .censor(.hdcpUnsupported(output: "DP-1", missingProperty: "Content Protection")))
        #expect(v["Virtual-1"] == .censor(.hdcpUnsupported(output: "Virtual-1", missingProperty: "Content Protection")))
        #expect(v["Writeback-1"] == .censor(.hdcpUnsupported(output: "Writeback-1", missingProperty: "Content Protection")))
        #expect(v["eDP-1"] == .show)  // the built-in panel is part of the device
        if case let .censor(reason)? = v["DP-1"] {
            #expect(reason.description == "DP-1: the content needs HDCP and the connector has no \"Content Protection\" property")
        }
        // No commit was tried on them.
        #expect(loop.protectionCommits.allSatisfy { $0.0 == 30 })
        #expect(loop.guardian.status(of: "DP-1")?.hdcp == .notRequested)

        // Type 1 also needs "HDCP Content Type".
        let device = FakeKMSDevice(connectors: [KMSConnector(id: 40, typeName: "HDMI-A", typeID: 2, connection: .connected, modes: [],
                                                             properties: ["Content Protection": 0])],
                                   encoders: [], crtcs: [], planes: [])
        let type1 = try Loop(device: device, policy: ContentPolicy(externalOutput: .allow, hdcp: .type1, capture: .allow))
        #expect(try type1.frame(at: 0)["HDMI-A-2"] == .censor(.hdcpUnsupported(output: "HDMI-A-2", missingProperty: "HDCP Content Type")))
        #expect(device.commits.isEmpty)
    }

    @Test func hotplugDuringProtectedPlaybackIsCheckedAgain() throws {
        let loop = try Loop(policy: ContentPolicy(externalOutput: .allow, hdcp: .type0, capture: .allow))
        _ = try loop.frame(at: 0)
        try loop.device.simulatePropertyChange(objectID: 30, "Content Protection", to: 2, hotplugEvent: true)
        #expect(try loop.frame(at: 1)["HDMI-A-1"] == .show)

        // A new external screen appears (a DP MST sink): censored until its own link is Enabled.
        var mst = connector(50, "DP", hdcp: true)
        mst.typeID = 2
        loop.device.simulateConnectorAdded(mst)
        var v = try loop.frame(at: 2)
        #expect(v["DP-2"] == .censor(.hdcpPending(output: "DP-2", required: .type0)))
        #expect(v["HDMI-A-1"] == .show && v["eDP-1"] == .show)
        #expect(loop.device.value(of: 50, "Content Protection") == 1)

        // The HDMI screen is unplugged and another plugged in: the kernel drops the link to
        // Desired, and the guard asks again and waits for the new screen's link.
        let requestsBefore = loop.protectionCommits.filter { $0.0 == 30 }.count
        try loop.device.simulateHotplug(connectorID: 30, connected: false)
        try loop.device.simulatePropertyChange(objectID: 30, "Content Protection", to: 1)
        v = try loop.frame(at: 3)
        #expect(v["HDMI-A-1"] == .censor(.hdcpNotConnected(output: "HDMI-A-1")))
        try loop.device.simulateHotplug(connectorID: 30, connected: true, modes: [KMSMode(width: 3840, height: 2160, refresh: 60)])
        v = try loop.frame(at: 4)
        #expect(v["HDMI-A-1"] == .censor(.hdcpPending(output: "HDMI-A-1", required: .type0)))
        #expect(loop.protectionCommits.filter { $0.0 == 30 }.count == requestsBefore + 2)  // TEST_ONLY + real
        try loop.device.simulatePropertyChange(objectID: 30, "Content Protection", to: 2, hotplugEvent: true)
        #expect(try loop.frame(at: 5)["HDMI-A-1"] == .show)
        // A removed connector is forgotten.
        try loop.device.simulateConnectorRemoved(50)
        _ = try loop.frame(at: 6)
        #expect(loop.guardian.status(of: "DP-2") == nil)
    }

    @Test func protectionIsReleasedWhenProtectedContentEnds() throws {
        let loop = try Loop(policy: ContentPolicy(externalOutput: .allow, hdcp: .type0, capture: .allow))
        _ = try loop.frame(at: 0)
        try loop.device.simulatePropertyChange(objectID: 30, "Content Protection", to: 2, hotplugEvent: true)
        _ = try loop.frame(at: 1)
        // Another protected item at the same level keeps the link.
        loop.guardian.play(policy: ContentPolicy(externalOutput: .allow, hdcp: .type0, capture: .deny))
        #expect(try loop.frame(at: 2)["HDMI-A-1"] == .show)
        #expect(loop.protectionCommits.count == 2)
        // An unprotected item: Content Protection back to Undesired with the next frame's commit,
        // TEST_ONLY first.
        loop.guardian.play(policy: .unrestricted)
        let v = try loop.frame(at: 3)
        #expect(loop.protectionCommits.suffix(2).map { "\($0.0)=\($0.1)\($0.2 ? " test-only" : "")" } == ["30=0 test-only", "30=0"])
        #expect(loop.device.value(of: 30, "Content Protection") == 0)
        #expect(v.values.allSatisfy { $0 == .show })
        // Nothing left to release.
        loop.guardian.stop()
        _ = try loop.frame(at: 4)
        #expect(loop.protectionCommits.count == 4)
    }

    @Test func stopReleasesAndAFailedReleaseIsReported() throws {
        let loop = try Loop(policy: ContentPolicy(externalOutput: .allow, hdcp: .type1, capture: .allow))
        _ = try loop.frame(at: 0)
        loop.device.reject(.all, errno: EIO)
        loop.guardian.stop()
        _ = try loop.frame(at: 1)
        #expect(loop.guardian.releaseFailure == .releaseFailed(output: "HDMI-A-1", error: .commitRejected(errno: EIO, reason: "every commit is refused")))
        #expect(loop.guardian.releaseFailure?.description == "HDMI-A-1: setting Content Protection back to Undesired failed: atomic commit rejected (errno 5): every commit is refused")
        #expect(loop.guardian.counters.hdcpCommitFailures == 1)
        loop.device.acceptAll()
        loop.guardian.play(policy: ContentPolicy(externalOutput: .allow, hdcp: .type1, capture: .allow))
        _ = try loop.frame(at: 2)
        loop.guardian.stop()
        _ = try loop.frame(at: 3)
        #expect(loop.device.value(of: 30, "Content Protection") == 0)
    }

    @Test func aRefusedRequestCensorsWithTheKernelsReason() throws {
        let device = makeDevice()
        device.reject(.testOnly, errno: EINVAL)
        let loop = try Loop(device: device, policy: ContentPolicy(externalOutput: .allow, hdcp: .type0, capture: .allow))
        // Asked for with the first frame's commit, which the device refuses: the next frame names why.
        #expect(try loop.frame(at: 0)["HDMI-A-1"] == .censor(.hdcpPending(output: "HDMI-A-1", required: .type0)))
        let v = try loop.frame(at: 0)
        let refused = KMSError.commitRejected(errno: EINVAL, reason: "test-only commits are refused")
        #expect(v["HDMI-A-1"] == .censor(.hdcpRequestFailed(output: "HDMI-A-1", error: refused)))
        // The TEST_ONLY commit failed, so the real one was never made.
        #expect(device.commits.count == 1 && device.commits[0].flags.contains(.testOnly))
        #expect(device.value(of: 30, "Content Protection") == 0)
        #expect(loop.guardian.counters.hdcpCommitFailures == 1)
        #expect(loop.guardian.status(of: "HDMI-A-1")?.hdcp == .failed)
        // Not retried every frame; a hotplug (re-plug) tries again.
        _ = try loop.frame(at: 1)
        #expect(device.commits.count == 1)
        device.acceptAll()
        try device.simulateHotplug(connectorID: 30, connected: false)
        _ = try loop.frame(at: 2)
        try device.simulateHotplug(connectorID: 30, connected: true)
        #expect(try loop.frame(at: 3)["HDMI-A-1"] == .censor(.hdcpPending(output: "HDMI-A-1", required: .type0)))
        #expect(device.value(of: 30, "Content Protection") == 1)
        // A new item also tries again after a refusal.
        loop.guardian.stop()
        loop.guardian.play(policy: ContentPolicy(externalOutput: .allow, hdcp: .type0, capture: .allow))
        device.reject(.all)
        _ = try loop.frame(at: 4)
        #expect(loop.guardian.status(of: "HDMI-A-1")?.hdcp == .failed)
        device.acceptAll()
        let before = device.commits.count
        loop.guardian.play(policy: ContentPolicy(externalOutput: .allow, hdcp: .type0, capture: .deny))
        #expect(try loop.frame(at: 5)["HDMI-A-1"] == .censor(.hdcpPending(output: "HDMI-A-1", required: .type0)))
        #expect(device.commits.count == before + 2)
    }

    @Test func protectionResetBehindTheGuardsBackIsAskedForAgain() throws {
        let loop = try Loop(policy: ContentPolicy(externalOutput: .allow, hdcp: .type0, capture: .allow))
        _ = try loop.frame(at: 0)
        try loop.device.simulatePropertyChange(objectID: 30, "Content Protection", to: 2, hotplugEvent: true)
        #expect(try loop.frame(at: 1)["HDMI-A-1"] == .show)
        #expect(loop.protectionCommits.count == 2)
        // Something else sets it to Undesired and the kernel reports the change.
        try loop.device.simulatePropertyChange(objectID: 30, "Content Protection", to: 0, hotplugEvent: true)
        #expect(try loop.frame(at: 2)["HDMI-A-1"] == .censor(.hdcpPending(output: "HDMI-A-1", required: .type0)))
        #expect(loop.protectionCommits.count == 4)
        #expect(loop.device.value(of: 30, "Content Protection") == 1)
    }

    @Test func changingTheRequiredTypeAsksAgain() throws {
        let loop = try Loop(policy: ContentPolicy(externalOutput: .allow, hdcp: .type0, capture: .allow))
        _ = try loop.frame(at: 0)
        try loop.device.simulatePropertyChange(objectID: 30, "Content Protection", to: 2, hotplugEvent: true)
        #expect(try loop.frame(at: 1)["HDMI-A-1"] == .show)
        loop.guardian.play(policy: ContentPolicy(externalOutput: .allow, hdcp: .type1, capture: .allow))
        #expect(try loop.frame(at: 2)["HDMI-A-1"] == .censor(.hdcpPending(output: "HDMI-A-1", required: .type1)))
        #expect(loop.device.commits.last?.request.value(of: 30, "HDCP Content Type") == 1)
        // Back to type 0: the type 1 link satisfies it, nothing is asked again.
        try loop.device.simulatePropertyChange(objectID: 30, "Content Protection", to: 2, hotplugEvent: true)
        #expect(try loop.frame(at: 3)["HDMI-A-1"] == .show)
        let commits = loop.device.commits.count
        loop.guardian.play(policy: ContentPolicy(externalOutput: .allow, hdcp: .type0, capture: .allow))
        #expect(try loop.frame(at: 4)["HDMI-A-1"] == .show)
        #expect(loop.device.commits.count == commits)
    }

    @Test func externalDenyComesBeforeHDCP() throws {
        let loop = try Loop(policy: .strictest)
        let v = try loop.frame(at: 0)
        #expect(v["HDMI-A-1"] == .censor(.externalOutputDenied(output: "HDMI-A-1", connectorClass: .external)))
        #expect(v["Writeback-1"] == .censor(.captureDenied(output: "Writeback-1")))
        #expect(v["eDP-1"] == .show)
        #expect(loop.device.commits.isEmpty)  // no HDCP asked for on an output that is censored anyway
    }
}
