#if canImport(Glibc)
import Glibc
#endif

/// A file descriptor this object owns: closed exactly once, when the object goes. Whoever needs
/// the descriptor for a while takes `borrowed` and keeps this object (or its owner) alive
/// meanwhile; whoever must keep it beyond that takes a `duplicate()` of its own.
///
/// swift-system's `FileDescriptor` is a bare number (closing it is the caller's business, and it
/// is not `Sendable`); the ownership is what this type adds, so Scanout's descriptors are these.
public final class OwnedDescriptor: Sendable, CustomStringConvertible {
    public let rawValue: Int32

    /// Takes over `rawValue` (a valid, open descriptor): it is closed when this object goes.
    public init(taking rawValue: Int32) {
        precondition(rawValue >= 0, "OwnedDescriptor(taking:) needs an open descriptor")
        self.rawValue = rawValue
    }

    deinit { close(rawValue) }

    /// The descriptor, borrowed: valid while this object lives.
    public var borrowed: BorrowedDescriptor { BorrowedDescriptor(rawValue) }

    /// A new descriptor of the same open file (close-on-exec), owned by the object returned.
    /// Nil with `errno` set when the process is out of descriptors.
    public func duplicate() -> OwnedDescriptor? { borrowed.duplicate() }

    public var description: String { "fd \(rawValue) (owned)" }
}

/// A file descriptor owned by someone else (an `OwnedDescriptor`, a GBM buffer, a decoder's
/// export): valid while its owner lives, never closed through this value.
public struct BorrowedDescriptor: Sendable, Hashable, CustomStringConvertible {
    public let rawValue: Int32
    /// `rawValue` as lent by its owner, who keeps it open while the value is used.
    public init(_ rawValue: Int32) { self.rawValue = rawValue }
    public var description: String { "fd \(rawValue)" }

    /// A new descriptor of the same open file (close-on-exec), owned by the object returned: what
    /// a consumer keeps beyond its owner's life. Nil with `errno` set when the process is out of
    /// descriptors.
    public func duplicate() -> OwnedDescriptor? {
        let copy = fcntl(rawValue, F_DUPFD_CLOEXEC, 0)
        return copy >= 0 ? OwnedDescriptor(taking: copy) : nil
    }
}

/// One plane of a picture in a DMA-BUF: the buffer (borrowed from the object that owns it: an
/// exported surface, a GBM buffer), where the plane starts in it, and its row pitch. The one
/// plane type decoders' exports, the renderer's imports and KMS framebuffers share.
public struct DMABufPlane: Sendable, Equatable {
    public let buffer: BorrowedDescriptor
    public let offset: UInt32
    public let pitch: UInt32
    public init(buffer: BorrowedDescriptor, offset: UInt32 = 0, pitch: UInt32) {
        self.buffer = buffer
        self.offset = offset
        self.pitch = pitch
    }
}
