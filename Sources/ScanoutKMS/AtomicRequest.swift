#if canImport(Glibc)
import Glibc
#endif

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
