import ScanoutCore
#if canImport(Glibc)
import Glibc
#endif

// The seam between the KMS display and libdrm: what an atomic KMS client needs from a DRM device,
// in plain Swift values (no C pointers). `DRMDevice` (libdrm) and `FakeKMSDevice` (tests) sit
// behind it, so that mode choice, plane assignment, commit building and flip pacing can be tested
// without a screen.

/// A connector's link state (`DRM_MODE_CONNECTED` and friends).
public enum KMSConnectionState: String, Sendable, Equatable {
    case connected, disconnected, unknown
}

/// The full timing of a mode (`drmModeModeInfo` less the C layout), kept so that a real device can
/// turn a chosen mode back into a `MODE_ID` blob. Absent for modes made up in tests.
public struct KMSModeTiming: Sendable, Equatable {
    public var clock: UInt32
    public var hdisplay, hsyncStart, hsyncEnd, htotal, hskew: UInt16
    public var vdisplay, vsyncStart, vsyncEnd, vtotal, vscan: UInt16
    public var vrefresh: UInt32
    public var flags: UInt32
    public var type: UInt32
    public var name: String

    public init(clock: UInt32, hdisplay: UInt16, hsyncStart: UInt16, hsyncEnd: UInt16, htotal: UInt16, hskew: UInt16,
                vdisplay: UInt16, vsyncStart: UInt16, vsyncEnd: UInt16, vtotal: UInt16, vscan: UInt16,
                vrefresh: UInt32, flags: UInt32, type: UInt32, name: String) {
        self.clock = clock
        self.hdisplay = hdisplay; self.hsyncStart = hsyncStart; self.hsyncEnd = hsyncEnd
        self.htotal = htotal; self.hskew = hskew
        self.vdisplay = vdisplay; self.vsyncStart = vsyncStart; self.vsyncEnd = vsyncEnd
        self.vtotal = vtotal; self.vscan = vscan
        self.vrefresh = vrefresh; self.flags = flags; self.type = type; self.name = name
    }
}

/// One display mode a connector offers.
public struct KMSMode: Sendable, Equatable, CustomStringConvertible {
    public var width: Int
    public var height: Int
    /// Vertical refresh in whole hertz (libdrm's `vrefresh`).
    public var refresh: Int
    /// The sink's preferred mode (`DRM_MODE_TYPE_PREFERRED`).
    public var preferred: Bool
    public var timing: KMSModeTiming?

    public init(width: Int, height: Int, refresh: Int, preferred: Bool = false, timing: KMSModeTiming? = nil) {
        self.width = width
        self.height = height
        self.refresh = refresh
        self.preferred = preferred
        self.timing = timing
    }

    /// "1920x1080@60", the form `chooseMode` accepts.
    public var description: String { "\(width)x\(height)@\(refresh)" }
}

/// A connector (a screen's socket).
public struct KMSConnector: Sendable, Equatable {
    public var id: UInt32
    /// libdrm's type name ("HDMI-A", "DP", "Virtual").
    public var typeName: String
    /// The number among connectors of the same type (the 1 in "HDMI-A-1").
    public var typeID: UInt32
    public var connection: KMSConnectionState
    public var modes: [KMSMode]
    /// Encoders that can drive this connector.
    public var encoderIDs: [UInt32]
    /// Property values by name ("CRTC_ID", "DPMS", ...).
    public var properties: [String: UInt64]

    public init(id: UInt32, typeName: String, typeID: UInt32, connection: KMSConnectionState,
                modes: [KMSMode], encoderIDs: [UInt32] = [], properties: [String: UInt64] = [:]) {
        self.id = id
        self.typeName = typeName
        self.typeID = typeID
        self.connection = connection
        self.modes = modes
        self.encoderIDs = encoderIDs
        self.properties = properties
    }

    /// "HDMI-A-1", as libdrm and the kernel name it.
    public var name: String { connectorName(type: typeName, typeID: typeID) }
}

/// An encoder and the CRTCs it can be fed from.
public struct KMSEncoder: Sendable, Equatable {
    public var id: UInt32
    /// Bit i set: the i-th CRTC of `KMSResources.crtcs` can feed this encoder.
    public var possibleCRTCs: UInt32

    public init(id: UInt32, possibleCRTCs: UInt32) {
        self.id = id
        self.possibleCRTCs = possibleCRTCs
    }
}

/// A CRTC (a scanout engine).
public struct KMSCRTC: Sendable, Equatable {
    public var id: UInt32
    /// Property values by name ("ACTIVE", "MODE_ID", ...).
    public var properties: [String: UInt64]

    public init(id: UInt32, properties: [String: UInt64] = [:]) {
        self.id = id
        self.properties = properties
    }
}

/// A plane's role (the `type` property).
public enum KMSPlaneType: String, Sendable, Equatable {
    case primary, overlay, cursor
}

/// A plane (a layer a CRTC composes).
public struct KMSPlane: Sendable, Equatable {
    public var id: UInt32
    public var type: KMSPlaneType
    /// Bit i set: the plane can be used with the i-th CRTC of `KMSResources.crtcs`.
    public var possibleCRTCs: UInt32
    /// Supported pixel formats (DRM fourccs).
    public var formats: [UInt32]
    /// Property values by name ("FB_ID", "CRTC_ID", "SRC_X", ...).
    public var properties: [String: UInt64]
    /// Layout modifiers per format, from `IN_FORMATS`; empty when the driver does not say.
    public var modifiers: [UInt32: [UInt64]]

    public init(id: UInt32, type: KMSPlaneType, possibleCRTCs: UInt32, formats: [UInt32], properties: [String: UInt64] = [:],
                modifiers: [UInt32: [UInt64]] = [:]) {
        self.modifiers = modifiers
        self.id = id
        self.type = type
        self.possibleCRTCs = possibleCRTCs
        self.formats = formats
        self.properties = properties
    }

    /// Whether the plane can be used with the CRTC at `crtcIndex` in `KMSResources.crtcs`.
    public func canUse(crtcIndex: Int) -> Bool {
        crtcIndex >= 0 && crtcIndex < 32 && possibleCRTCs & (1 << UInt32(crtcIndex)) != 0
    }
}

/// Everything a device offers, at one moment.
public struct KMSResources: Sendable, Equatable {
    public var connectors: [KMSConnector]
    public var encoders: [KMSEncoder]
    public var crtcs: [KMSCRTC]
    public var planes: [KMSPlane]

    public init(connectors: [KMSConnector], encoders: [KMSEncoder], crtcs: [KMSCRTC], planes: [KMSPlane]) {
        self.connectors = connectors
        self.encoders = encoders
        self.crtcs = crtcs
        self.planes = planes
    }

    /// The index of a CRTC in `crtcs`, the bit that `possibleCRTCs` masks use.
    public func crtcIndex(of id: UInt32) -> Int? { crtcs.firstIndex { $0.id == id } }
}

/// One atomic commit: property assignments by object id and property name.
public struct AtomicRequest: Sendable, Equatable {
    public struct Assignment: Sendable, Equatable {
        public var objectID: UInt32
        public var property: String
        public var value: UInt64
        public init(objectID: UInt32, property: String, value: UInt64) {
            self.objectID = objectID
            self.property = property
            self.value = value
        }
    }

    public var assignments: [Assignment]

    public init(_ assignments: [Assignment] = []) { self.assignments = assignments }

    /// Adds `property = value` on `objectID`.
    public mutating func set(_ objectID: UInt32, _ property: String, _ value: UInt64) {
        assignments.append(Assignment(objectID: objectID, property: property, value: value))
    }

    /// The last value assigned to `property` of `objectID` in this request.
    public func value(of objectID: UInt32, _ property: String) -> UInt64? {
        assignments.last { $0.objectID == objectID && $0.property == property }?.value
    }

    /// The objects this request touches, in first-touched order.
    public var objectIDs: [UInt32] {
        var seen = Set<UInt32>()
        return assignments.compactMap { seen.insert($0.objectID).inserted ? $0.objectID : nil }
    }
}

/// `DRM_MODE_ATOMIC_*` and `DRM_MODE_PAGE_FLIP_EVENT`.
public struct AtomicFlags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Check the commit, change nothing (`DRM_MODE_ATOMIC_TEST_ONLY`).
    public static let testOnly = AtomicFlags(rawValue: 0x0100)
    /// Return before the commit reaches the screen (`DRM_MODE_ATOMIC_NONBLOCK`).
    public static let nonBlock = AtomicFlags(rawValue: 0x0200)
    /// The commit may change modes or routing (`DRM_MODE_ATOMIC_ALLOW_MODESET`).
    public static let allowModeset = AtomicFlags(rawValue: 0x0400)
    /// Send a flip-complete event per CRTC when it is shown (`DRM_MODE_PAGE_FLIP_EVENT`).
    public static let pageFlipEvent = AtomicFlags(rawValue: 0x01)
}

/// What the device reports on its fd.
public enum KMSEvent: Sendable, Equatable {
    /// A commit with `pageFlipEvent` reached the screen on `crtcID`: vblank `sequence`, at
    /// `timestampNs` (CLOCK_MONOTONIC).
    case flipComplete(crtcID: UInt32, sequence: UInt64, timestampNs: UInt64)
    /// Connectors changed (a screen was plugged in or out); read the resources again.
    case hotplug
}

/// Why a KMS operation failed. `description` is one line for stderr.
public enum KMSError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kernel (or the fake) refused the commit; `errno` as the ioctl returned it.
    case commitRejected(errno: Int32, reason: String)
    /// The request names an object the device does not have.
    case unknownObject(UInt32)
    /// The request names a property the object does not have.
    case unknownProperty(objectID: UInt32, property: String, available: [String])
    case unknownBlob(UInt32)
    /// A mode request that is not "WxH" or "WxH@R".
    case invalidModeRequest(String)
    case noModes(connector: String)
    case noModeMatching(requested: String, connector: String, available: [String])
    /// A libdrm call failed.
    case drmCallFailed(call: String, errno: Int32)

    public var description: String {
        switch self {
        case let .commitRejected(errno, reason): "atomic commit rejected (errno \(errno)): \(reason)"
        case let .unknownObject(id): "no KMS object \(id)"
        case let .unknownProperty(id, property, available):
            "KMS object \(id) has no property \(property) (it has \(available.sorted().joined(separator: ", ")))"
        case let .unknownBlob(id): "no property blob \(id)"
        case let .invalidModeRequest(s): "mode \"\(s)\" is not WIDTHxHEIGHT or WIDTHxHEIGHT@REFRESH (e.g. 1920x1080@60)"
        case let .noModes(connector): "\(connector) offers no modes"
        case let .noModeMatching(requested, connector, available):
            "no mode matching \"\(requested)\" on \(connector) (it has \(available.joined(separator: ", ")))"
        case let .drmCallFailed(call, errno): "\(call) failed (errno \(errno))"
        }
    }
}

/// One plane of a framebuffer: where its memory is and how it is laid out.
public struct KMSFramebufferPlane: Sendable, Equatable {
    public enum Memory: Sendable, Equatable {
        /// A DMA-BUF, borrowed: its owner keeps it open and closes it.
        case dmaBuf(BorrowedDescriptor)
        /// A GEM handle already valid on the device's own descriptor.
        case gemHandle(UInt32)
    }
    public var memory: Memory
    public var offset: UInt32
    public var pitch: UInt32
    public init(memory: Memory, offset: UInt32 = 0, pitch: UInt32) {
        self.memory = memory
        self.offset = offset
        self.pitch = pitch
    }
}

/// A buffer to scan out (`drmModeAddFB2WithModifiers`).
public struct KMSFramebufferDescription: Sendable, Equatable {
    public var width: Int
    public var height: Int
    /// DRM fourcc.
    public var format: UInt32
    /// The layout modifier; nil: none given (implicit, usually linear).
    public var modifier: UInt64?
    public var planes: [KMSFramebufferPlane]
    public init(width: Int, height: Int, format: UInt32, modifier: UInt64? = nil, planes: [KMSFramebufferPlane]) {
        self.width = width
        self.height = height
        self.format = format
        self.modifier = modifier
        self.planes = planes
    }
}

/// An out-fence of a commit (a writeback connector's `WRITEBACK_OUT_FENCE_PTR`): signalled when the
/// write-back is complete. Owns its descriptor (closed once, in `deinit`); fd -1 is an already
/// signalled fence (what the fake hands out).
public final class KMSFence {
    public let fd: Int32
    public init(fd: Int32) { self.fd = fd }
    deinit { if fd >= 0 { close(fd) } }

    /// Waits until the fence signals; false when `timeoutMs` passed first.
    public func wait(timeoutMs: Int32) throws -> Bool {
        guard fd >= 0 else { return true }
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while true {
            let r = poll(&p, 1, timeoutMs)
            if r > 0 { return true }
            if r == 0 { return false }
            if errno != EINTR { throw KMSError.drmCallFailed(call: "poll(fence)", errno: errno) }
        }
    }
}

/// What an atomic KMS client needs from a DRM device. Not `Sendable`: one thread uses a device.
public protocol KMSDevice: AnyObject {
    /// The device node ("/dev/dri/card0"), for messages.
    var path: String { get }
    /// Registers a framebuffer and returns its id, for planes' `FB_ID` and `WRITEBACK_FB_ID`.
    func addFramebuffer(_ description: KMSFramebufferDescription) throws -> UInt32
    func removeFramebuffer(_ id: UInt32) throws
    /// The bytes of a property blob (a writeback connector's `WRITEBACK_PIXEL_FORMATS`, `IN_FORMATS`).
    func propertyBlob(_ id: UInt32) throws -> [UInt8]
    /// Blocks until an event is pending or `timeoutMs` passes (-1: no limit); true when one is.
    func waitForEvents(timeoutMs: Int32) throws -> Bool
    /// Applies (or checks) `request` and, when it names `writebackConnector`, asks for that
    /// connector's out-fence (`WRITEBACK_OUT_FENCE_PTR`) and returns it.
    func atomicCommit(_ request: AtomicRequest, flags: AtomicFlags, writebackConnector: UInt32?) throws -> KMSFence?
    /// Connectors, encoders, CRTCs and planes as they are now (with universal planes).
    func resources() throws -> KMSResources
    /// Creates a property blob (a `MODE_ID` mode, for example) and returns its id.
    func createPropertyBlob(_ data: [UInt8]) throws -> UInt32
    func destroyPropertyBlob(_ id: UInt32) throws
    /// The next pending event, or nil when none is pending (never blocks).
    func nextEvent() throws -> KMSEvent?
}

// MARK: - Names and mode choice

/// libdrm's connector type names (`drmModeGetConnectorTypeName`), by `DRM_MODE_CONNECTOR_*`.
public let drmConnectorTypeNames: [String] = [
    "Unknown", "VGA", "DVI-I", "DVI-D", "DVI-A", "Composite", "SVIDEO", "LVDS", "Component",
    "DIN", "DP", "HDMI-A", "HDMI-B", "TV", "eDP", "Virtual", "DSI", "DPI", "Writeback", "SPI", "USB",
]

/// "HDMI-A-1": a connector's name as libdrm and the kernel form it.
public func connectorName(type: String, typeID: UInt32) -> String { "\(type)-\(typeID)" }

/// "HDMI-A-1" from the numeric `DRM_MODE_CONNECTOR_*` type (11); unknown numbers are "Unknown".
public func connectorName(type: UInt32, typeID: UInt32) -> String {
    let name = Int(type) < drmConnectorTypeNames.count ? drmConnectorTypeNames[Int(type)] : "Unknown"
    return connectorName(type: name, typeID: typeID)
}

/// The mode to use on `connector`: `requested` as "WxH@R" (exact) or "WxH" (the preferred one of
/// that size, else the highest refresh); nil → the preferred mode, else the largest (area, then
/// refresh).
public func chooseMode(connector: KMSConnector, requested: String?) throws -> KMSMode {
    let modes = connector.modes
    guard !modes.isEmpty else { throw KMSError.noModes(connector: connector.name) }
    func larger(_ a: KMSMode, _ b: KMSMode) -> Bool {
        (a.width * a.height, a.refresh) < (b.width * b.height, b.refresh)
    }
    guard let requested else {
        if let preferred = modes.first(where: \.preferred) { return preferred }
        return modes.max(by: larger)!
    }
    let parts = requested.split(separator: "@", omittingEmptySubsequences: false)
    let size = parts[0].split(separator: "x", omittingEmptySubsequences: false)
    guard parts.count <= 2, size.count == 2, let w = Int(size[0]), let h = Int(size[1]), w > 0, h > 0 else {
        throw KMSError.invalidModeRequest(requested)
    }
    var refresh: Int?
    if parts.count == 2 {
        guard let r = Int(parts[1]), r > 0 else { throw KMSError.invalidModeRequest(requested) }
        refresh = r
    }
    let matching = modes.filter { $0.width == w && $0.height == h && (refresh == nil || $0.refresh == refresh) }
    if let preferred = matching.first(where: \.preferred) { return preferred }
    if let best = matching.max(by: { $0.refresh < $1.refresh }) { return best }
    var seen = Set<String>()
    let available = modes.map(\.description).filter { seen.insert($0).inserted }
    throw KMSError.noModeMatching(requested: requested, connector: connector.name, available: available)
}

extension KMSMode {
    /// The kernel's `struct drm_mode_modeinfo` for this mode (68 bytes, the `MODE_ID` blob). Modes
    /// without a timing (made up in tests) get one with blanking-free totals.
    public var modeInfoBytes: [UInt8] {
        let t = timing ?? KMSModeTiming(clock: UInt32(width * height * refresh / 1000), hdisplay: UInt16(width), hsyncStart: UInt16(width),
                                        hsyncEnd: UInt16(width), htotal: UInt16(width), hskew: 0, vdisplay: UInt16(height),
                                        vsyncStart: UInt16(height), vsyncEnd: UInt16(height), vtotal: UInt16(height), vscan: 0,
                                        vrefresh: UInt32(refresh), flags: 0, type: preferred ? 1 << 3 : 0, name: "\(width)x\(height)")
        var b: [UInt8] = []
        b.reserveCapacity(68)
        func u32(_ v: UInt32) { for i in 0..<4 { b.append(UInt8(truncatingIfNeeded: v >> (8 * UInt32(i)))) } }
        func u16(_ v: UInt16) { b.append(UInt8(truncatingIfNeeded: v)); b.append(UInt8(truncatingIfNeeded: v >> 8)) }
        u32(t.clock)
        for v in [t.hdisplay, t.hsyncStart, t.hsyncEnd, t.htotal, t.hskew, t.vdisplay, t.vsyncStart, t.vsyncEnd, t.vtotal, t.vscan] { u16(v) }
        u32(t.vrefresh); u32(t.flags); u32(t.type)
        let name = Array(t.name.utf8.prefix(31))
        b += name + [UInt8](repeating: 0, count: 32 - name.count)
        return b
    }
}

extension KMSDevice {
    /// Applies (or with `.testOnly`, checks) every assignment of `request` at once.
    public func atomicCommit(_ request: AtomicRequest, flags: AtomicFlags) throws {
        _ = try atomicCommit(request, flags: flags, writebackConnector: nil)
    }
}
