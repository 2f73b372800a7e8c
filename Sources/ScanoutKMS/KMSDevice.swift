import ScanoutCore
#if canImport(Glibc)
import Glibc
#endif

// The seam between the KMS display and libdrm: what an atomic KMS client needs from a DRM device,
// in plain Swift values (no C pointers). `DRMDevice` (libdrm) and `FakeKMSDevice` (tests) sit
// behind it, so that mode choice, plane assignment, commit building and flip pacing can be tested
// without a screen.

/// What the device reports on its fd.
public enum KMSEvent: Sendable, Equatable {
    /// A commit with `pageFlipEvent` reached the screen on `crtcID`: vblank `sequence`, at
    /// `timestamp` (the vblank's time on the monotonic clock).
    case flipComplete(crtcID: UInt32, sequence: UInt64, timestamp: ClockTime)
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

extension KMSDevice {
    /// Applies (or with `.testOnly`, checks) every assignment of `request` at once.
    public func atomicCommit(_ request: AtomicRequest, flags: AtomicFlags) throws {
        _ = try atomicCommit(request, flags: flags, writebackConnector: nil)
    }
}
