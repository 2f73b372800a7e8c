import Foundation
#if canImport(Glibc)
import Glibc
#endif
import ScanoutKMS
import ScanoutTestSupport
import ScanoutTesting
import Testing

/// Atomic requests and property lookups, through ScanoutTesting's fake device: what a commit
/// changes is what the next lookup reads, a refused commit changes nothing of what it named, and
/// the kernel's own changes are seen as the display sees them (a value and a hotplug event).
@Suite struct AtomicCommitTests {
    /// The fake's one screen lit: CRTC 10 active with a mode blob, connector 30 on it, primary
    /// plane 40 showing a framebuffer of its first format. Returns the framebuffer.
    static func lightUp(_ device: FakeKMSDevice) throws -> UInt32 {
        let format = try #require(try device.resources().planes.first { $0.type == .primary }?.formats.first)
        let fb = device.addFramebuffer(format: format)
        _ = try device.atomicCommit(try modeset(device, fb: fb), flags: .allowModeset, writebackConnector: nil)
        return fb
    }

    @Test func aRequestKeepsTheLastValueOfAPropertyAndTheOrderObjectsWereTouchedIn() {
        var r = AtomicRequest()
        r.set(40, "FB_ID", 7)
        r.set(10, "ACTIVE", 1)
        r.set(40, "FB_ID", 9)
        r.set(30, "CRTC_ID", 10)
        #expect(r.value(of: 40, "FB_ID") == 9)
        #expect(r.value(of: 40, "CRTC_ID") == nil)
        #expect(r.value(of: 41, "FB_ID") == nil)
        #expect(r.objectIDs == [40, 10, 30])
        #expect(r.assignments.count == 4)
        #expect(r == AtomicRequest(r.assignments))
    }

    @Test func aCommitsValuesAreWhatTheNextLookupReads() throws {
        let device = FakeKMSDevice.singleScreen()
        #expect(device.value(of: 10, "ACTIVE") == 0 && device.value(of: 40, "FB_ID") == 0)
        let fb = try Self.lightUp(device)
        #expect(device.value(of: 10, "ACTIVE") == 1)
        #expect(device.value(of: 30, "CRTC_ID") == 10)
        #expect(device.value(of: 40, "FB_ID") == UInt64(fb) && device.value(of: 40, "CRTC_ID") == 10)
        // The same values in the resources the display reads, and none on the planes not named.
        let res = try device.resources()
        #expect(res.crtcs.first { $0.id == 10 }?.properties["ACTIVE"] == 1)
        #expect(res.connectors.first { $0.id == 30 }?.properties["CRTC_ID"] == 10)
        #expect(res.planes.first { $0.id == 41 }?.properties["FB_ID"] == 0)
        // The mode blob reads back as written, and lives on while the CRTC uses it.
        let blob = try #require(device.value(of: 10, "MODE_ID"))
        #expect(try device.propertyBlob(UInt32(blob)) == [1, 2, 3, 4])
        try device.destroyPropertyBlob(UInt32(blob))
        #expect(try device.propertyBlob(UInt32(blob)) == [1, 2, 3, 4])
        // No such property, no such object: nil.
        #expect(device.value(of: 10, "GAMMA_LUT") == nil && device.value(of: 99, "ACTIVE") == nil)
    }

    @Test func aRefusedCommitChangesNothingItNamed() throws {
        let device = FakeKMSDevice.singleScreen()
        let fb = try Self.lightUp(device)
        // A good flip and an unknown framebuffer in one request: all or nothing.
        var r = AtomicRequest()
        r.set(40, "FB_ID", 0)
        r.set(41, "FB_ID", 999)
        r.set(41, "CRTC_ID", 10)
        #expect(throws: KMSError.commitRejected(errno: ENOENT, reason: "plane 41: no framebuffer 999")) {
            _ = try device.atomicCommit(r, flags: [], writebackConnector: nil)
        }
        #expect(device.value(of: 40, "FB_ID") == UInt64(fb) && device.value(of: 41, "CRTC_ID") == 0)
        // A property the object does not have: the error names it and lists what it has.
        var bad = AtomicRequest()
        bad.set(10, "ACTIVE", 0)
        bad.set(10, "VRR_ENABLED", 1)
        let error = #expect(throws: KMSError.self) { _ = try device.atomicCommit(bad, flags: .allowModeset, writebackConnector: nil) }
        #expect(error?.description == "KMS object 10 has no property VRR_ENABLED (it has ACTIVE, MODE_ID)")
        #expect(device.value(of: 10, "ACTIVE") == 1)
        #expect(device.commits.map(\.accepted) == [true, false, false])
    }

    @Test func theKernelsOwnChangesAreReadAndAnnounced() throws {
        var properties = FakeKMSDevice.connectorProperties
        properties["Content Protection"] = 0
        let device = FakeKMSDevice(
            connectors: [KMSConnector(id: 30, typeName: "HDMI-A", typeID: 1, connection: .connected,
                                      modes: [KMSMode(width: 640, height: 480, refresh: 60, preferred: true)],
                                      encoderIDs: [20], properties: properties)],
            encoders: [KMSEncoder(id: 20, possibleCRTCs: 1)], crtcs: [KMSCRTC(id: 10, properties: FakeKMSDevice.crtcProperties)],
            planes: [])
        try device.simulatePropertyChange(objectID: 30, "Content Protection", to: 2, hotplugEvent: true)
        #expect(device.value(of: 30, "Content Protection") == 2)
        #expect(try device.resources().connectors[0].properties["Content Protection"] == 2)
        #expect(try device.nextEvent() == .hotplug)
        #expect(try device.nextEvent() == nil)
        #expect(throws: KMSError.unknownObject(31)) { try device.simulatePropertyChange(objectID: 31, "DPMS", to: 0) }
        let error = #expect(throws: KMSError.self) { try device.simulatePropertyChange(objectID: 30, "HDCP Content Type", to: 1) }
        #expect(error?.description == "KMS object 30 has no property HDCP Content Type (it has CRTC_ID, Content Protection, DPMS)")
    }

    @Test func aWritebackCommitGetsASignalledFenceAndTestOnlyOneNone() throws {
        var writeback = KMSConnector(id: 32, typeName: "Writeback", typeID: 1, connection: .connected, modes: [],
                                     encoderIDs: [], properties: FakeKMSDevice.connectorProperties)
        writeback.properties["WRITEBACK_FB_ID"] = 0
        let device = FakeKMSDevice.singleScreen()
        device.simulateConnectorAdded(writeback)
        #expect(try device.nextEvent() == .hotplug)
        let fb = try Self.lightUp(device)
        var r = AtomicRequest()
        r.set(32, "WRITEBACK_FB_ID", UInt64(fb))
        #expect(try device.atomicCommit(r, flags: .testOnly, writebackConnector: 32) == nil)
        let fence = try #require(try device.atomicCommit(r, flags: [], writebackConnector: 32))
        #expect(try fence.wait(timeoutMs: 0), "signalled already: the fake composes nothing")
        #expect(device.value(of: 32, "WRITEBACK_FB_ID") == UInt64(fb))
        #expect(throws: KMSError.unknownObject(33)) { _ = try device.atomicCommit(AtomicRequest(), flags: [], writebackConnector: 33) }
    }
}

/// Which output `auto` picks, from the cards a directory holds.
@Suite struct OutputSelectorTests {
    @Test func noCardIsHeadlessAndSaysWhereItLooked() throws {
        let scratch = try Scratch()
        let choice = OutputSelector.choose(requested: "auto", directory: scratch.url.path)
        #expect(choice == OutputChoice(kind: .headless, reason: "no KMS device (\(scratch.url.path) has no card that opens)"))
        #expect(OutputSelector.choose(requested: "headless", directory: scratch.url.path)
                == OutputChoice(kind: .headless, reason: "headless output requested"))
        #expect(OutputSelector.cards(directory: scratch.path("missing")).isEmpty)
    }

    @Test func aCardThatIsNoDRMDeviceHasNoScreen() throws {
        let scratch = try Scratch()
        try Data(count: 16).write(to: scratch.url.appendingPathComponent("card0"))
        let cards = OutputSelector.cards(directory: scratch.url.path)
        #expect(cards.map(\.path) == [scratch.path("card0")])
        #expect(cards.first?.driver == "unknown" && cards.first?.connectors == 0 && cards.first?.connectedConnectors == [])
        #expect(OutputSelector.choose(directory: scratch.url.path)
                == OutputChoice(kind: .headless, reason: "no connected screen on \(scratch.path("card0"))"))
    }
}
