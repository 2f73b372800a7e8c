import ScanoutCore
import ScanoutDemux
import ScanoutDecode

/// A picture ready to show or store: packed RGB rows with no padding.
public struct RGBImage: Sendable, Equatable {
    public enum Layout: Sendable, Equatable {
        /// 8 bits per channel, R G B.
        case rgb24
        /// 16 bits per channel, big-endian, R G B (PNG's deep layout).
        case rgb48be

        public var bytesPerPixel: Int { self == .rgb24 ? 3 : 6 }
        public var pixelFormat: PixelFormat { self == .rgb24 ? .rgb24 : .rgb48be }
    }

    public var width: Int
    public var height: Int
    public var layout: Layout
    /// `height` rows of `width * layout.bytesPerPixel` bytes.
    public var bytes: [UInt8]
    /// Shape of one stored pixel; written to PNG's pHYs chunk.
    public var sampleAspectRatio: Rational

    public init(width: Int, height: Int, layout: Layout = .rgb24, bytes: [UInt8], sampleAspectRatio: Rational = Rational(1, 1)) {
        precondition(bytes.count == width * height * layout.bytesPerPixel, "RGBImage: byte count does not match its size")
        self.width = width
        self.height = height
        self.layout = layout
        self.bytes = bytes
        self.sampleAspectRatio = sampleAspectRatio
    }

    public var rowBytes: Int { width * layout.bytesPerPixel }

    /// The 8-bit colour at (x, y); 16-bit layouts return the high bytes.
    public func pixel(x: Int, y: Int) -> (r: UInt8, g: UInt8, b: UInt8) {
        let o = y * rowBytes + x * layout.bytesPerPixel
        switch layout {
        case .rgb24: return (bytes[o], bytes[o + 1], bytes[o + 2])
        case .rgb48be: return (bytes[o], bytes[o + 2], bytes[o + 4])
        }
    }

    /// Largest per-channel difference with `other` (same size and layout), for agreement checks.
    public func maxChannelDifference(_ other: RGBImage) -> Int? {
        guard width == other.width, height == other.height, layout == other.layout else { return nil }
        var m = 0
        for i in bytes.indices { m = max(m, abs(Int(bytes[i]) - Int(other.bytes[i]))) }
        return m
    }
}
