#if canImport(Glibc)
import ScanoutCore
import Glibc
#endif
@testable import ScanoutKMS
import ScanoutTesting
import Testing

/// A first modeset on the fake's single screen: CRTC 10 on, mode blob, connector 30 → CRTC 10,
/// primary plane 40 showing `fb`.
func modeset(_ device: FakeKMSDevice, fb: UInt32) throws -> AtomicRequest {
    let blob = try device.createPropertyBlob([1, 2, 3, 4])
    var r = AtomicRequest()
    r.set(10, "ACTIVE", 1)
    r.set(10, "MODE_ID", UInt64(blob))
    r.set(30, "CRTC_ID", 10)
    r.set(40, "FB_ID", UInt64(fb))
    r.set(40, "CRTC_ID", 10)
    return r
}

private func flip(plane: UInt32 = 40, fb: UInt32) -> AtomicRequest {
    var r = AtomicRequest()
    r.set(plane, "FB_ID", UInt64(fb))
    return r
}

private func rejection(_ body: () throws -> Void) -> KMSError? {
    do { try body() } catch let e as KMSError { return e } catch { return nil }
    return nil
}

@Suite struct KMSDeviceTests {
    @Test func resourcesDescribeTheScreen() throws {
        let res = try FakeKMSDevice.singleScreen().resources()
        #expect(res.connectors.map(\.name) == ["HDMI-A-1"])
        #expect(res.connectors[0].connection == .connected)
        #expect(res.crtcs.map(\.id) == [10])
        #expect(res.planes.map(\.type) == [.primary, .overlay, .cursor])
        #expect(res.planes[1].formats.contains(FourCC.nv12))
        #expect(res.planes[0].canUse(crtcIndex: res.crtcIndex(of: 10)!))
        #expect(!res.planes[0].canUse(crtcIndex: 1))
        #expect(FourCC.name(FourCC.p010) == "P010")
        #expect(FourCC.xrgb8888 == 0x3432_5258)
    }

    @Test func commitTraceRecordsRequestsFlagsAndOutcomes() throws {
        let device = FakeKMSDevice.singleScreen()
        let fb = device.addFramebuffer(format: FourCC.xrgb8888)
        let first = try modeset(device, fb: fb)
        try device.atomicCommit(first, flags: [.allowModeset, .testOnly])
        try device.atomicCommit(first, flags: [.allowModeset])
        #expect(rejection { try device.atomicCommit(flip(fb: 999), flags: []) } != nil)

        #expect(device.commits.count == 3)
        #expect(device.commits[0].request == first)
        #expect(device.commits[0].flags == [.allowModeset, .testOnly])
        #expect(device.commits[1].accepted)
        #expect(device.commits[2].error == .commitRejected(errno: ENOENT, reason: "plane 40: no framebuffer 999"))
        #expect(device.commits[1].request.assignments[2] ==
                AtomicRequest.Assignment(objectID: 30, property: "CRTC_ID", value: 10))
        // Only the real commit changed state.
        #expect(device.value(of: 10, "ACTIVE") == 1)
        #expect(device.value(of: 40, "FB_ID") == UInt64(fb))
        #expect(try device.resources().planes[0].properties["CRTC_ID"] == 10)
    }

    @Test func testOnlyCommitsChangeNothing() throws {
        let device = FakeKMSDevice.singleScreen()
        let fb = device.addFramebuffer(format: FourCC.xrgb8888)
        try device.atomicCommit(try modeset(device, fb: fb), flags: [.allowModeset, .testOnly])
        #expect(device.value(of: 10, "ACTIVE") == 0)
        #expect(try device.nextEvent() == nil)
    }

    @Test func rejectionRulesThrowTypedErrors() throws {
        let device = FakeKMSDevice.singleScreen()
        let xr = device.addFramebuffer(format: FourCC.xrgb8888)
        let nv = device.addFramebuffer(format: FourCC.nv12)
        try device.atomicCommit(try modeset(device, fb: xr), flags: .allowModeset)

        device.reject(.all, errno: EIO)
        #expect(rejection { try device.atomicCommit(flip(fb: xr), flags: []) }
                == .commitRejected(errno: EIO, reason: "every commit is refused"))
        device.acceptAll()
        try device.atomicCommit(flip(fb: xr), flags: [])

        device.reject(.plane(41))
        try device.atomicCommit(flip(plane: 40, fb: xr), flags: [])
        #expect(rejection { try device.atomicCommit(flip(plane: 41, fb: nv), flags: []) }
                == .commitRejected(errno: EINVAL, reason: "commits touching plane 41 are refused"))
        device.acceptAll()

        device.reject(.format(FourCC.nv12))
        try device.atomicCommit(flip(plane: 41, fb: xr), flags: [])
        let e = rejection { try device.atomicCommit(flip(plane: 41, fb: nv), flags: []) }
        #expect(e == .commitRejected(errno: EINVAL, reason: "NV12 on plane 41 is refused"))
        #expect(e?.description == "atomic commit rejected (errno 22): NV12 on plane 41 is refused")
        device.acceptAll()

        device.reject(.testOnly)
        #expect(rejection { try device.atomicCommit(flip(fb: xr), flags: .testOnly) }
                == .commitRejected(errno: EINVAL, reason: "test-only commits are refused"))
        try device.atomicCommit(flip(fb: xr), flags: [])
        #expect(device.commits.filter { !$0.accepted }.count == 4)
    }

    @Test func checksWhatTheKernelChecks() throws {
        let device = FakeKMSDevice.singleScreen()
        let nv = device.addFramebuffer(format: FourCC.nv12)
        let xr = device.addFramebuffer(format: FourCC.xrgb8888)
        // The primary plane has no NV12.
        #expect(rejection { try device.atomicCommit(flip(plane: 40, fb: nv), flags: []) }
                == .commitRejected(errno: EINVAL, reason: "plane 40 does not support NV12 (it supports XR24, AR24)"))
        // A modeset needs ALLOW_MODESET.
        let first = try modeset(device, fb: xr)
        #expect(rejection { try device.atomicCommit(first, flags: []) }
                == .commitRejected(errno: EINVAL, reason: "object 10: ACTIVE changes, which needs ALLOW_MODESET"))
        // Unknown objects and properties.
        var bad = AtomicRequest()
        bad.set(77, "FB_ID", 0)
        #expect(rejection { try device.atomicCommit(bad, flags: []) } == .unknownObject(77))
        bad = AtomicRequest()
        bad.set(40, "FB", 0)
        let e = rejection { try device.atomicCommit(bad, flags: []) }
        #expect(e?.description.hasPrefix("KMS object 40 has no property FB (it has CRTC_H, CRTC_ID") == true)
        // TEST_ONLY with PAGE_FLIP_EVENT is refused, as by the kernel.
        #expect(rejection { try device.atomicCommit(first, flags: [.allowModeset, .testOnly, .pageFlipEvent]) }
                == .commitRejected(errno: EINVAL, reason: "TEST_ONLY and PAGE_FLIP_EVENT together"))
        // Blobs.
        let blob = try device.createPropertyBlob([0])
        try device.destroyPropertyBlob(blob)
        #expect(rejection { try device.destroyPropertyBlob(blob) } == .unknownBlob(blob))
        #expect(device.blobs.count == 1)  // the one modeset(…) made
    }

    @Test func flipEventsCarryIncreasingSequencesAndInjectedTimestamps() throws {
        let clock = ManualClock(start: ClockTime(nanoseconds: 1_000))
        let device = FakeKMSDevice.singleScreen(clock: clock)
        let a = device.addFramebuffer(format: FourCC.xrgb8888)
        let b = device.addFramebuffer(format: FourCC.xrgb8888)
        try device.atomicCommit(try modeset(device, fb: a), flags: [.allowModeset, .pageFlipEvent])
        #expect(try device.nextEvent() == .flipComplete(crtcID: 10, sequence: 1, timestamp: ClockTime(nanoseconds: 1_000)))
        #expect(try device.nextEvent() == nil)

        var stamps: [ClockTime] = []
        var sequences: [UInt64] = []
        for i in 0..<5 {
            clock.time = ClockTime(nanoseconds: 1_000 + UInt64(i + 1) * 16_666_667)
            try device.atomicCommit(flip(fb: i % 2 == 0 ? b : a), flags: [.nonBlock, .pageFlipEvent])
            // A test-only commit and a commit without the flag add no event.
            try device.atomicCommit(flip(fb: a), flags: .testOnly)
            guard case let .flipComplete(crtc, sequence, ts) = try device.nextEvent() else {
                Issue.record("no flip event"); return
            }
            #expect(crtc == 10)
            sequences.append(sequence)
            stamps.append(ts)
            #expect(try device.nextEvent() == nil)
        }
        #expect(sequences == [2, 3, 4, 5, 6])
        #expect(stamps == (1...5).map { ClockTime(nanoseconds: 1_000 + UInt64($0) * 16_666_667) })
        try device.atomicCommit(flip(fb: b), flags: [])
        #expect(try device.nextEvent() == nil)
    }

    @Test func nonBlockingCommitWhileAFlipIsPendingIsBusy() throws {
        let device = FakeKMSDevice.singleScreen()
        let a = device.addFramebuffer(format: FourCC.xrgb8888)
        try device.atomicCommit(try modeset(device, fb: a), flags: [.allowModeset])
        try device.atomicCommit(flip(fb: a), flags: [.nonBlock, .pageFlipEvent])
        #expect(rejection { try device.atomicCommit(flip(fb: a), flags: [.nonBlock, .pageFlipEvent]) }
                == .commitRejected(errno: EBUSY, reason: "CRTC 10 still has a flip pending"))
        _ = try device.nextEvent()
        try device.atomicCommit(flip(fb: a), flags: [.nonBlock, .pageFlipEvent])
        // A flip event on a commit that touches no CRTC cannot be delivered.
        var none = AtomicRequest()
        none.set(41, "FB_ID", 0)
        #expect(rejection { try device.atomicCommit(none, flags: .pageFlipEvent) }
                == .commitRejected(errno: EINVAL, reason: "PAGE_FLIP_EVENT on a commit that touches no CRTC"))
    }

    @Test func hotplugChangesConnectionAndQueuesAnEvent() throws {
        let device = FakeKMSDevice.singleScreen()
        try device.simulateHotplug(connectorID: 30, connected: false)
        #expect(try device.nextEvent() == .hotplug)
        #expect(try device.nextEvent() == nil)
        var c = try device.resources().connectors[0]
        #expect(c.connection == .disconnected)
        #expect(c.modes.isEmpty)
        #expect(rejection { _ = try chooseMode(connector: c, requested: nil) } == .noModes(connector: "HDMI-A-1"))

        try device.simulateHotplug(connectorID: 30, connected: true, modes: [KMSMode(width: 3840, height: 2160, refresh: 30, preferred: true)])
        #expect(try device.nextEvent() == .hotplug)
        c = try device.resources().connectors[0]
        #expect(c.connection == .connected)
        #expect(try chooseMode(connector: c, requested: nil).description == "3840x2160@30")

        device.simulateConnectorAdded(KMSConnector(id: 31, typeName: "DP", typeID: 1, connection: .connected,
                                                   modes: [KMSMode(width: 800, height: 600, refresh: 60)]))
        #expect(try device.nextEvent() == .hotplug)
        #expect(try device.resources().connectors.map(\.name) == ["HDMI-A-1", "DP-1"])
        try device.simulateConnectorRemoved(31)
        #expect(try device.nextEvent() == .hotplug)
        #expect(try device.resources().connectors.map(\.name) == ["HDMI-A-1"])
        #expect(rejection { try device.simulateConnectorRemoved(31) } == .unknownObject(31))
    }

    @Test func chooseModeExactPreferredLargestAndErrors() throws {
        let modes = [
            KMSMode(width: 1280, height: 720, refresh: 60),
            KMSMode(width: 1920, height: 1080, refresh: 50),
            KMSMode(width: 1920, height: 1080, refresh: 60, preferred: true),
            KMSMode(width: 3840, height: 2160, refresh: 30),
            KMSMode(width: 3840, height: 2160, refresh: 24),
        ]
        let c = KMSConnector(id: 1, typeName: "HDMI-A", typeID: 2, connection: .connected, modes: modes)
        #expect(try chooseMode(connector: c, requested: "1920x1080@50") == modes[1])
        #expect(try chooseMode(connector: c, requested: "1920x1080") == modes[2])
        #expect(try chooseMode(connector: c, requested: "3840x2160") == modes[3])
        #expect(try chooseMode(connector: c, requested: nil) == modes[2])
        var unpreferred = c
        unpreferred.modes = modes.map { var m = $0; m.preferred = false; return m }
        #expect(try chooseMode(connector: unpreferred, requested: nil).description == "3840x2160@30")

        let e = rejection { _ = try chooseMode(connector: c, requested: "1280x720@50") }
        #expect(e?.description ==
                "no mode matching \"1280x720@50\" on HDMI-A-2 (it has 1280x720@60, 1920x1080@50, 1920x1080@60, 3840x2160@30, 3840x2160@24)")
        for bad in ["", "1920", "1920x", "x1080", "1920x1080@", "1920x1080@60@1", "axb", "0x0"] {
            #expect(rejection { _ = try chooseMode(connector: c, requested: bad) } == .invalidModeRequest(bad))
        }
    }

    @Test func connectorNamesFollowLibdrm() {
        #expect(connectorName(type: "HDMI-A", typeID: 1) == "HDMI-A-1")
        #expect(connectorName(type: UInt32(11), typeID: 1) == "HDMI-A-1")
        #expect(connectorName(type: UInt32(10), typeID: 2) == "DP-2")
        #expect(connectorName(type: UInt32(14), typeID: 1) == "eDP-1")
        #expect(connectorName(type: UInt32(15), typeID: 1) == "Virtual-1")
        #expect(connectorName(type: UInt32(18), typeID: 1) == "Writeback-1")
        #expect(connectorName(type: UInt32(999), typeID: 3) == "Unknown-3")
    }
}
