import Foundation
import ScanoutDemux

/// The pixel layout of a canvas the CPU compositor draws into, and what its code values mean.
public enum CanvasFormat: Sendable, Equatable {
    /// 8 bits a channel (B, G, R, X in memory): SDR.
    case xrgb8888
    /// 10 bits a channel (DRM's XRGB2101010) carrying an HDR signal: the picture's own code values
    /// (PQ or HLG, BT.2020, converted from YCbCr by the stream's matrix and nothing else), and
    /// graphics (background, logo, subtitles) placed at HDR reference white as BT.2408 advises
    /// (`HDRGraphics`), so that they look on an HDR screen as they look on an SDR one.
    case xrgb2101010(DynamicRange)

    /// The layout swscale converts the picture into.
    public var pixelFormat: PixelFormat { self == .xrgb8888 ? .bgr0 : .x2rgb10le }

    /// `c` as one pixel of this canvas (in host order).
    public func pixel(_ c: RGBColor) -> UInt32 {
        switch self {
        case .xrgb8888: UInt32(c.r) << 16 | UInt32(c.g) << 8 | UInt32(c.b)
        case let .xrgb2101010(range): HDRGraphics(range).pixel(c)
        }
    }
}

/// SDR graphics colours (8-bit BT.709, gamma 2.4 as BT.1886 displays them) as 10-bit HDR code
/// values in BT.2020: PQ with 100 % graphics white at 203 cd/m², HLG with it at 75 % signal
/// (ITU-R BT.2408). One table per channel value, so a pixel costs three lookups and a 3×3 matrix.
public struct HDRGraphics: Sendable {
    public let range: DynamicRange
    /// Display light of each 8-bit code (BT.1886, relative to white).
    private let linear: [Double]

    public init(_ range: DynamicRange) {
        self.range = range
        linear = (0..<256).map { pow(Double($0) / 255, 2.4) }
    }

    /// BT.709 primaries in BT.2020 (linear light, row-major).
    static let bt709To2020 = HDRTransfer.matrix(from: .bt709, to: .bt2020)

    /// The 10-bit code of `c`'s channels.
    public func codes(_ c: RGBColor) -> (r: UInt32, g: UInt32, b: UInt32) {
        let l = [linear[Int(c.r)], linear[Int(c.g)], linear[Int(c.b)]]
        let out = apply(Self.bt709To2020, l).map(encode)
        return (out[0], out[1], out[2])
    }

    /// `c` as an XRGB2101010 pixel.
    public func pixel(_ c: RGBColor) -> UInt32 {
        let (r, g, b) = codes(c)
        return r << 20 | g << 10 | b
    }

    /// Relative display light (1 = graphics white) to a 10-bit full-range code.
    func encode(_ v: Double) -> UInt32 {
        let e: Double
        switch range {
        case .sdr:
            e = HDRTransfer.bt709Signal(v)
        case .pq:
            e = HDRTransfer.pq(nits: max(v, 0) * 203)
        case .hlg:
            // Graphics white at 75 % signal: scene light 0.2646 (BT.2408), the OOTF left aside.
            e = HDRTransfer.hlg(scene: max(v, 0) * 0.2646)
        }
        return UInt32((min(max(e, 0), 1) * 1023).rounded())
    }
}

extension Overlay {
    /// Blends the image over a canvas of `format`: in 8 bits as `blend(into:…order: .xrgb8888)`,
    /// in 10 bits with the image's colours made HDR graphics (`HDRGraphics`) and mixed by its alpha.
    public func blend(into pixels: UnsafeMutableRawPointer, stride: Int, width W: Int, height H: Int, format: CanvasFormat) {
        guard case let .xrgb2101010(range) = format else {
            return blend(into: pixels, stride: stride, width: W, height: H, order: .xrgb8888)
        }
        let a0 = min(max(opacity, 0), 1)
        guard a0 > 0 else { return }
        let graphics = HDRGraphics(range)
        let (ox, oy) = origin(outputWidth: W, outputHeight: H)
        image.bytes.withUnsafeBufferPointer { src in
            for y in max(0, oy)..<max(max(0, oy), min(H, oy + image.height)) {
                let row = (pixels + y * stride).assumingMemoryBound(to: UInt32.self)
                for x in max(0, ox)..<max(max(0, ox), min(W, ox + image.width)) {
                    let s = 4 * ((y - oy) * image.width + (x - ox))
                    let a = Double(src[s + 3]) / 255 * a0
                    guard a > 0 else { continue }
                    let (r, g, b) = graphics.codes(RGBColor(r: src[s], g: src[s + 1], b: src[s + 2]))
                    let d = UInt32(littleEndian: row[x])
                    func mix(_ v: UInt32, _ shift: UInt32) -> UInt32 {
                        let old = Double(d >> shift & 0x3ff)
                        return UInt32((Double(v) * a + old * (1 - a)).rounded()) << shift
                    }
                    row[x] = (mix(r, 20) | mix(g, 10) | mix(b, 0)).littleEndian
                }
            }
        }
    }
}

extension RGBImage {
    /// Packed rgb24 from an XRGB2101010 canvas: each channel's top 8 bits. The signal as it is
    /// (PQ or HLG code values, BT.2020), not tone mapped: a snapshot of an HDR screen's buffer.
    public init(xrgb2101010 bytes: UnsafeRawBufferPointer, width: Int, height: Int, stride: Int) {
        var out = [UInt8](repeating: 0, count: 3 * width * height)
        for y in 0..<height {
            for x in 0..<width {
                let v = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: y * stride + 4 * x, as: UInt32.self))
                let d = 3 * (y * width + x)
                out[d] = UInt8(v >> 22 & 0xff); out[d + 1] = UInt8(v >> 12 & 0xff); out[d + 2] = UInt8(v >> 2 & 0xff)
            }
        }
        self.init(width: width, height: height, layout: .rgb24, bytes: out)
    }
}
