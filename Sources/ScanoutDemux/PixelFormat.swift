import CFFmpeg
import ScanoutCore

/// A pixel layout, by FFmpeg's `AVPixelFormat` numbering. Names are FFmpeg's (`yuv420p`, `nv12`,
/// `yuv420p10le`), so `--pixel-format` accepts whatever `ffmpeg -pix_fmts` lists.
public struct PixelFormat: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue }
    package init(_ f: AVPixelFormat) { rawValue = f.rawValue }

    /// Looks a format up by FFmpeg's name (`av_get_pix_fmt`).
    public init?(name: String) {
        let f = av_get_pix_fmt(name)
        guard f != AV_PIX_FMT_NONE else { return nil }
        rawValue = f.rawValue
    }

    package var av: AVPixelFormat { AVPixelFormat(rawValue: rawValue) }

    public static let yuv420p = PixelFormat(AV_PIX_FMT_YUV420P)
    public static let nv12 = PixelFormat(AV_PIX_FMT_NV12)
    public static let p010 = PixelFormat(AV_PIX_FMT_P010LE)
    public static let yuv420p10 = PixelFormat(AV_PIX_FMT_YUV420P10LE)
    public static let rgb24 = PixelFormat(AV_PIX_FMT_RGB24)
    public static let rgb48be = PixelFormat(AV_PIX_FMT_RGB48BE)
    public static let rgba = PixelFormat(AV_PIX_FMT_RGBA)
    /// B, G, R, unused byte: DRM's XRGB8888 in memory on little-endian machines.
    public static let bgr0 = PixelFormat(AV_PIX_FMT_BGR0)
    /// 10-bit R, G, B in a little-endian 32-bit word, 2 bits unused: DRM's XRGB2101010.
    public static let x2rgb10le = PixelFormat(AV_PIX_FMT_X2RGB10LE)
    public static let yuv444p = PixelFormat(AV_PIX_FMT_YUV444P)
    public static let yuvj420p = PixelFormat(AV_PIX_FMT_YUVJ420P)
    /// A VA-API surface (`AVFrame.data[3]` holds its `VASurfaceID`), not CPU planes.
    public static let vaapi = PixelFormat(AV_PIX_FMT_VAAPI)
    public static let cuda = PixelFormat(AV_PIX_FMT_CUDA)
    public static let drmPrime = PixelFormat(AV_PIX_FMT_DRM_PRIME)

    public var name: String {
        guard let p = av_get_pix_fmt_name(av) else { return "none" }
        return String(cString: p)
    }

    public var description: String { name }

    package var descriptor: UnsafePointer<AVPixFmtDescriptor>? { av_pix_fmt_desc_get(av) }

    /// Bits per component of the first component (8 for yuv420p, 10 for p010 and yuv420p10le).
    public var bitDepth: Int { Int(descriptor?.pointee.comp.0.depth ?? 8) }

    /// Planes in memory (3 for yuv420p, 2 for nv12, 1 for rgb24).
    public var planeCount: Int { Int(av_pix_fmt_count_planes(av)) }

    /// Whether the format holds YUV (as opposed to RGB or grey).
    public var isYUV: Bool {
        guard let d = descriptor else { return false }
        return d.pointee.flags & UInt64(AV_PIX_FMT_FLAG_RGB) == 0 && d.pointee.nb_components >= 3
    }

    /// Whether the format's name says it is full ("JPEG") range by definition (yuvj420p ...).
    public var isFullRangeByDefinition: Bool { name.hasPrefix("yuvj") }

    /// Bytes needed for one `width`×`height` image packed with no padding (`av_image_get_buffer_size`, align 1).
    public func packedSize(width: Int, height: Int) -> Int {
        Int(av_image_get_buffer_size(av, Int32(width), Int32(height), 1))
    }
}
