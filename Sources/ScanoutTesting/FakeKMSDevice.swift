#if canImport(Glibc)
import Glibc
#endif
import ScanoutKMS
import ScanoutCore
import ScanoutDemux
import ScanoutDecode

/// A KMS device in memory, for tests: configurable connectors, encoders, CRTCs and planes; every
/// commit is recorded; commits can be refused on demand; flip events and hotplug are simulated.
///
/// It checks what the kernel checks that a client most easily gets wrong, with the kernel's errno:
/// unknown objects/properties/blobs (EINVAL), unknown framebuffers (ENOENT), a framebuffer format a
/// plane does not support (EINVAL), `testOnly` together with `pageFlipEvent` (EINVAL), a modeset
/// (`ACTIVE`, `MODE_ID` or a connector's `CRTC_ID` changing) without `allowModeset` (EINVAL),
/// `pageFlipEvent` on a commit that touches no CRTC (EINVAL), a plane `rotation` with a bit its
/// property does not offer (`KMSPlane.rotations`, rotate-0 always; EINVAL), and a `nonBlock`
/// commit on a CRTC whose previous flip event has not been read yet (EBUSY). A flip "completes"
/// when its event is read with `nextEvent()`.
///
/// Framebuffers are not part of `KMSDevice` yet; a test registers them with `addFramebuffer`, and
/// a plane's `FB_ID` must name one.
public final class FakeKMSDevice: KMSDevice {
    /// What to refuse.
    public enum Rejection: Sendable, Equatable {
        case all
        /// Commits that assign any property of this plane.
        case plane(UInt32)
        /// Commits that put a framebuffer of this fourcc on a plane.
        case format(UInt32)
        /// Commits with `.testOnly`.
        case testOnly
        /// Commits that assign this property of this object (a plane's `rotation`, say).
        case property(UInt32, String)
        /// Commits that set a connector's `max bpc` above this (a link that cannot carry more).
        case maxBPCAbove(UInt64)
        /// Commits that change a connector's `HDR_OUTPUT_METADATA` without `allowModeset` (drivers
        /// that need a full modeset for it).
        case hdrMetadataNeedsModeset
    }

    /// One call of `atomicCommit`, accepted or not.
    public struct CommitRecord: Sendable, Equatable {
        public var request: AtomicRequest
        public var flags: AtomicFlags
        /// nil when the commit was accepted.
        public var error: KMSError?
        public var accepted: Bool { error == nil }
    }

    public internal(set) var connectors: [KMSConnector]
    public private(set) var encoders: [KMSEncoder]
    public private(set) var crtcs: [KMSCRTC]
    public private(set) var planes: [KMSPlane]
    /// Every commit, in order (test-only and refused ones included).
    public private(set) var commits: [CommitRecord] = []
    /// Live property blobs.
    public private(set) var blobs: [UInt32: [UInt8]] = [:]
    /// Registered framebuffers: id → fourcc.
    public private(set) var framebuffers: [UInt32: UInt32] = [:]
    /// Calls of `resources()` (each one is a connector and plane re-read on a real device).
    public private(set) var resourceReads = 0
    /// Active rejections, with the errno each one reports.
    public var rejections: [(rule: Rejection, errno: Int32)] = []

    private let clock: any PlaybackClock
    private var events: [KMSEvent] = []
    private var sequences: [UInt32: UInt64] = [:]
    private var pendingFlips: Set<UInt32> = []
    private var destroyedBlobs: Set<UInt32> = []
    private var nextID: UInt32

    /// `clock` gives the flip timestamps: the one the display and the session are given.
    public init(connectors: [KMSConnector], encoders: [KMSEncoder], crtcs: [KMSCRTC], planes: [KMSPlane],
                clock: any PlaybackClock = MonotonicClock(), path: String = "/dev/dri/fake0") {
        self.path = path
        self.connectors = connectors
        self.encoders = encoders
        self.crtcs = crtcs
        self.planes = planes
        self.clock = clock
        let ids = connectors.map(\.id) + encoders.map(\.id) + crtcs.map(\.id) + planes.map(\.id)
        nextID = max(1000, (ids.max() ?? 0) + 1)
    }

    /// Properties a plane has in the fake unless told otherwise.
    public static let planeProperties: [String: UInt64] = [
        "FB_ID": 0, "CRTC_ID": 0, "SRC_X": 0, "SRC_Y": 0, "SRC_W": 0, "SRC_H": 0,
        "CRTC_X": 0, "CRTC_Y": 0, "CRTC_W": 0, "CRTC_H": 0, "rotation": 1, "zpos": 0,
    ]
    public static let crtcProperties: [String: UInt64] = ["ACTIVE": 0, "MODE_ID": 0]
    public static let connectorProperties: [String: UInt64] = ["CRTC_ID": 0, "DPMS": 0]

    /// One screen, "HDMI-A-1" (id 30), offering 1920x1080@60 (preferred), 1280x720@60 and
    /// 1280x720@50; encoder 20; CRTC 10; primary plane 40 (XR24, AR24), overlay plane 41 (NV12,
    /// P010, XR24), cursor plane 42 (AR24).
    public static func singleScreen(clock: any PlaybackClock = MonotonicClock()) -> FakeKMSDevice {
        let modes = [
            KMSMode(width: 1920, height: 1080, refresh: 60, preferred: true),
            KMSMode(width: 1280, height: 720, refresh: 60),
            KMSMode(width: 1280, height: 720, refresh: 50),
        ]
        return FakeKMSDevice(
            connectors: [KMSConnector(id: 30, typeName: "HDMI-A", typeID: 1, connection: .connected, modes: modes,
                                      encoderIDs: [20], properties: connectorProperties)],
            encoders: [KMSEncoder(id: 20, possibleCRTCs: 0b1)],
            crtcs: [KMSCRTC(id: 10, properties: crtcProperties)],
            planes: [
                KMSPlane(id: 40, type: .primary, possibleCRTCs: 0b1, formats: [FourCC.xrgb8888, FourCC.argb8888],
                         properties: planeProperties),
                KMSPlane(id: 41, type: .overlay, possibleCRTCs: 0b1,
                         formats: [FourCC.nv12, FourCC.p010, FourCC.xrgb8888], properties: planeProperties),
                KMSPlane(id: 42, type: .cursor, possibleCRTCs: 0b1, formats: [FourCC.argb8888],
                         properties: planeProperties),
            ],
            clock: clock)
    }

    /// One screen, "HDMI-A-1" (id 30), offering `width`×`height`@60 only; encoder 20, CRTC 10,
    /// primary plane 40 (XR24) whose `rotation` property offers `rotations` (no `rotation`
    /// property at all when nil), and the writeback connector 32 when asked.
    public static func oneMode(width: Int = 640, height: Int = 480, rotations: KMSRotation? = nil, writeback: Bool = false,
                               clock: any PlaybackClock = MonotonicClock()) -> FakeKMSDevice {
        var connectors = [KMSConnector(id: 30, typeName: "HDMI-A", typeID: 1, connection: .connected,
                                       modes: [KMSMode(width: width, height: height, refresh: 60, preferred: true)], encoderIDs: [20],
                                       properties: connectorProperties)]
        if writeback {
            connectors.append(KMSConnector(id: 32, typeName: "Writeback", typeID: 1, connection: .unknown, modes: [], encoderIDs: [20],
                                           properties: ["CRTC_ID": 0, "WRITEBACK_FB_ID": 0, "WRITEBACK_OUT_FENCE_PTR": 0]))
        }
        var properties = planeProperties
        if rotations == nil { properties["rotation"] = nil }
        return FakeKMSDevice(
            connectors: connectors, encoders: [KMSEncoder(id: 20, possibleCRTCs: 0b1)],
            crtcs: [KMSCRTC(id: 10, properties: crtcProperties)],
            planes: [KMSPlane(id: 40, type: .primary, possibleCRTCs: 0b1, formats: [FourCC.xrgb8888], properties: properties,
                              rotations: rotations ?? [])],
            clock: clock)
    }

    /// Screens side by side for a wall: "HDMI-A-1", "HDMI-A-2", … (ids 30, 31, …), each
    /// offering its own `width`×`height`@60 (`modes[i]`, else that), `widthMM` millimetres wide
    /// (its EDID's), with its own encoder (20 + i), CRTC (10 + i) and primary plane (40 + 3i, XR24).
    public static func screens(_ count: Int, width: Int = 320, height: Int = 240, modes: [Int: KMSMode] = [:], widthMM: Int = 0,
                               clock: any PlaybackClock = MonotonicClock()) -> FakeKMSDevice {
        let ids = 0..<count
        return FakeKMSDevice(
            connectors: ids.map { i in
                KMSConnector(id: UInt32(30 + i), typeName: "HDMI-A", typeID: UInt32(i + 1), connection: .connected,
                             modes: [modes[i] ?? KMSMode(width: width, height: height, refresh: 60, preferred: true)],
                             encoderIDs: [UInt32(20 + i)], properties: connectorProperties, widthMM: widthMM)
            },
            encoders: ids.map { KMSEncoder(id: UInt32(20 + $0), possibleCRTCs: 1 << UInt32($0)) },
            crtcs: ids.map { KMSCRTC(id: UInt32(10 + $0), properties: crtcProperties) },
            planes: ids.map { i in
                KMSPlane(id: UInt32(40 + 3 * i), type: .primary, possibleCRTCs: 1 << UInt32(i), formats: [FourCC.xrgb8888], properties: planeProperties)
            },
            clock: clock)
    }

    // MARK: Test controls

    /// Refuses commits matching `rule` with `errno` (EINVAL by default) until `acceptAll()`.
    public func reject(_ rule: Rejection, errno: Int32 = EINVAL) { rejections.append((rule, errno)) }
    public func acceptAll() { rejections.removeAll() }

    /// Registers a framebuffer of `format` and returns its id, for planes' `FB_ID`.
    @discardableResult
    public func addFramebuffer(format: UInt32) -> UInt32 {
        let id = allocateID()
        framebuffers[id] = format
        return id
    }

    /// The current value of a property (as the last accepted commit left it).
    public func value(of objectID: UInt32, _ property: String) -> UInt64? {
        properties(of: objectID)?[property]
    }

    /// The kernel changes a property by itself (a connector's `Content Protection` going from
    /// Desired to Enabled once the HDCP link is up, or back when it fails). With `hotplugEvent`, a
    /// hotplug event is queued, as the kernel sends a uevent for content-protection changes.
    public func simulatePropertyChange(objectID: UInt32, _ property: String, to value: UInt64, hotplugEvent: Bool = false) throws {
        guard let props = properties(of: objectID) else { throw KMSError.unknownObject(objectID) }
        guard props[property] != nil else {
            throw KMSError.unknownProperty(objectID: objectID, property: property, available: Array(props.keys))
        }
        setProperty(objectID, property, value)
        if hotplugEvent { events.append(.hotplug) }
    }

    /// A screen is plugged into (`connected: true`) or pulled from connector `connectorID`; `modes`,
    /// when given, replace its modes (a different screen). Queues a hotplug event.
    public func simulateHotplug(connectorID: UInt32, connected: Bool, modes: [KMSMode]? = nil) throws {
        guard let i = connectors.firstIndex(where: { $0.id == connectorID }) else { throw KMSError.unknownObject(connectorID) }
        connectors[i].connection = connected ? .connected : .disconnected
        if let modes { connectors[i].modes = modes }
        if !connected { connectors[i].modes = [] }
        events.append(.hotplug)
    }

    /// A connector appears (a DP MST sink, for example). Queues a hotplug event.
    public func simulateConnectorAdded(_ connector: KMSConnector) {
        connectors.append(connector)
        nextID = max(nextID, connector.id + 1)
        events.append(.hotplug)
    }

    /// A connector disappears. Queues a hotplug event.
    public func simulateConnectorRemoved(_ connectorID: UInt32) throws {
        guard let i = connectors.firstIndex(where: { $0.id == connectorID }) else { throw KMSError.unknownObject(connectorID) }
        connectors.remove(at: i)
        events.append(.hotplug)
    }

    // MARK: KMSDevice

    public func resources() throws -> KMSResources {
        resourceReads += 1
        return KMSResources(connectors: connectors, encoders: encoders, crtcs: crtcs, planes: planes)
    }

    public let path: String

    public func addFramebuffer(_ description: KMSFramebufferDescription) throws -> UInt32 {
        guard description.width > 0, description.height > 0, !description.planes.isEmpty else {
            throw KMSError.drmCallFailed(call: "drmModeAddFB2WithModifiers", errno: EINVAL)
        }
        return addFramebuffer(format: description.format)
    }

    public func removeFramebuffer(_ id: UInt32) throws {
        guard framebuffers.removeValue(forKey: id) != nil else { throw KMSError.drmCallFailed(call: "drmModeRmFB", errno: ENOENT) }
    }

    public func propertyBlob(_ id: UInt32) throws -> [UInt8] {
        guard let b = blobs[id] else { throw KMSError.unknownBlob(id) }
        return b
    }

    /// Never blocks: events are queued synchronously by commits and the simulate calls.
    public func waitForEvents(timeoutMs: Int32) throws -> Bool { !events.isEmpty }

    /// Writeback fences are already signalled (fd -1): the fake composes nothing.
    public func atomicCommit(_ request: AtomicRequest, flags: AtomicFlags, writebackConnector: UInt32?) throws -> KMSFence? {
        try commit(request, flags: flags)
        guard let writebackConnector, !flags.contains(.testOnly) else { return nil }
        guard connectors.contains(where: { $0.id == writebackConnector }) else { throw KMSError.unknownObject(writebackConnector) }
        return KMSFence(fd: -1)
    }

    private func commit(_ request: AtomicRequest, flags: AtomicFlags) throws {
        do {
            let flipCRTCs = try check(request, flags: flags)
            commits.append(CommitRecord(request: request, flags: flags, error: nil))
            guard !flags.contains(.testOnly) else { return }
            for a in request.assignments { setProperty(a.objectID, a.property, a.value) }
            if flags.contains(.pageFlipEvent) {
                let now = clock.now()
                for crtc in flipCRTCs {
                    let sequence = (sequences[crtc] ?? 0) + 1
                    sequences[crtc] = sequence
                    pendingFlips.insert(crtc)
                    events.append(.flipComplete(crtcID: crtc, sequence: sequence, timestamp: now))
                }
            }
        } catch let error as KMSError {
            commits.append(CommitRecord(request: request, flags: flags, error: error))
            throw error
        }
    }

    public func createPropertyBlob(_ data: [UInt8]) throws -> UInt32 {
        guard !data.isEmpty else { throw KMSError.drmCallFailed(call: "drmModeCreatePropertyBlob", errno: EINVAL) }
        let id = allocateID()
        blobs[id] = data
        return id
    }

    /// As in the kernel, a blob a CRTC still uses (its `MODE_ID`) lives on after the client
    /// destroys it; only the client's reference goes.
    public func destroyPropertyBlob(_ id: UInt32) throws {
        guard blobs[id] != nil, !destroyedBlobs.contains(id) else { throw KMSError.unknownBlob(id) }
        if crtcs.contains(where: { $0.properties["MODE_ID"] == UInt64(id) }) {
            destroyedBlobs.insert(id)
        } else {
            blobs.removeValue(forKey: id)
        }
    }

    public func nextEvent() throws -> KMSEvent? {
        guard !events.isEmpty else { return nil }
        let event = events.removeFirst()
        if case let .flipComplete(crtc, _, _) = event,
           !events.contains(where: { if case .flipComplete(crtc, _, _) = $0 { true } else { false } }) {
            pendingFlips.remove(crtc)
        }
        return event
    }

    // MARK: Checks

    /// Throws what the kernel (or a rejection rule) would; returns the CRTCs the commit touches.
    /// Over 60 lines on purpose: the kernel's checks one after another, in its order.
    private func check(_ request: AtomicRequest, flags: AtomicFlags) throws -> [UInt32] {
        func refuse(_ errno: Int32, _ reason: String) -> KMSError { .commitRejected(errno: errno, reason: reason) }
        if flags.contains(.testOnly) && flags.contains(.pageFlipEvent) {
            throw refuse(EINVAL, "TEST_ONLY and PAGE_FLIP_EVENT together")
        }
        for a in request.assignments {
            guard let props = properties(of: a.objectID) else { throw KMSError.unknownObject(a.objectID) }
            guard props[a.property] != nil else {
                throw KMSError.unknownProperty(objectID: a.objectID, property: a.property, available: Array(props.keys))
            }
        }
        try checkPropertyValues(request, flags: flags)
        // Framebuffers on planes, and their formats.
        var formatsShown: [(plane: UInt32, format: UInt32)] = []
        for plane in planes {
            guard let fb = request.value(of: plane.id, "FB_ID"), fb != 0 else { continue }
            guard fb <= UInt64(UInt32.max), let format = framebuffers[UInt32(fb)] else { throw refuse(ENOENT, "plane \(plane.id): no framebuffer \(fb)") }
            guard plane.formats.contains(format) else {
                throw refuse(EINVAL, "plane \(plane.id) does not support \(FourCC.name(format)) "
                    + "(it supports \(plane.formats.map(FourCC.name).joined(separator: ", ")))")
            }
            formatsShown.append((plane.id, format))
        }
        // Rotations a plane's property does not offer.
        for plane in planes {
            guard let r = request.value(of: plane.id, "rotation") else { continue }
            let offered = plane.rotations.union(.rotate0)
            guard r & ~offered.rawValue == 0 else {
                throw refuse(EINVAL, "plane \(plane.id): rotation \(KMSRotation(rawValue: r)) is not offered (it offers \(offered))")
            }
        }
        // MODE_ID blobs.
        for crtc in crtcs {
            if let blob = request.value(of: crtc.id, "MODE_ID"), blob != 0, blob > UInt64(UInt32.max) || blobs[UInt32(blob)] == nil {
                throw refuse(EINVAL, "CRTC \(crtc.id): MODE_ID \(blob) is no blob")
            }
        }
        // Modesets.
        if !flags.contains(.allowModeset) {
            for a in request.assignments {
                let routing = (a.property == "ACTIVE" || a.property == "MODE_ID") && crtcs.contains { $0.id == a.objectID }
                    || a.property == "CRTC_ID" && connectors.contains { $0.id == a.objectID }
                if routing && value(of: a.objectID, a.property) != a.value {
                    throw refuse(EINVAL, "object \(a.objectID): \(a.property) changes, which needs ALLOW_MODESET")
                }
            }
        }
        // The CRTCs the commit touches: named directly, or through a plane's or connector's CRTC_ID.
        var touched: [UInt32] = []
        func touch(_ id: UInt32) { if id != 0 && !touched.contains(id) && crtcs.contains(where: { $0.id == id }) { touched.append(id) } }
        for id in request.objectIDs {
            if crtcs.contains(where: { $0.id == id }) { touch(id) }
            if planes.contains(where: { $0.id == id }) || connectors.contains(where: { $0.id == id }) {
                touch(UInt32(truncatingIfNeeded: request.value(of: id, "CRTC_ID") ?? value(of: id, "CRTC_ID") ?? 0))
            }
        }
        if flags.contains(.pageFlipEvent) && touched.isEmpty {
            throw refuse(EINVAL, "PAGE_FLIP_EVENT on a commit that touches no CRTC")
        }
        // Rejection rules.
        for (rule, errno) in rejections {
            switch rule {
            case .all:
                throw refuse(errno, "every commit is refused")
            case .testOnly where flags.contains(.testOnly):
                throw refuse(errno, "test-only commits are refused")
            case let .plane(id) where request.objectIDs.contains(id):
                throw refuse(errno, "commits touching plane \(id) are refused")
            case let .property(id, name) where request.value(of: id, name) != nil:
                throw refuse(errno, "commits setting \(name) of object \(id) are refused")
            case let .format(format):
                if let shown = formatsShown.first(where: { $0.format == format }) {
                    throw refuse(errno, "\(FourCC.name(format)) on plane \(shown.plane) is refused")
                }
            default:
                break
            }
        }
        if flags.contains(.nonBlock) && !flags.contains(.testOnly), let busy = touched.first(where: pendingFlips.contains) {
            throw refuse(EBUSY, "CRTC \(busy) still has a flip pending")
        }
        return touched
    }

    private func properties(of id: UInt32) -> [String: UInt64]? {
        if let c = connectors.first(where: { $0.id == id }) { return c.properties }
        if let c = crtcs.first(where: { $0.id == id }) { return c.properties }
        if let p = planes.first(where: { $0.id == id }) { return p.properties }
        return nil
    }

    private func setProperty(_ id: UInt32, _ name: String, _ value: UInt64) {
        if let i = connectors.firstIndex(where: { $0.id == id }) { connectors[i].properties[name] = value }
        if let i = crtcs.firstIndex(where: { $0.id == id }) { crtcs[i].properties[name] = value }
        if let i = planes.firstIndex(where: { $0.id == id }) { planes[i].properties[name] = value }
    }

    private func allocateID() -> UInt32 {
        defer { nextID += 1 }
        return nextID
    }
}
