import ScanoutCore

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
