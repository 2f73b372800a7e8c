import CFFmpeg

/// The YCbCr matrix a stream is tagged with (FFmpeg's `AVColorSpace` numbering).
public struct ColorSpace: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static let rgb = ColorSpace(rawValue: AVCOL_SPC_RGB.rawValue)
    public static let bt709 = ColorSpace(rawValue: AVCOL_SPC_BT709.rawValue)
    public static let unspecified = ColorSpace(rawValue: AVCOL_SPC_UNSPECIFIED.rawValue)
    public static let bt470bg = ColorSpace(rawValue: AVCOL_SPC_BT470BG.rawValue)
    public static let smpte170m = ColorSpace(rawValue: AVCOL_SPC_SMPTE170M.rawValue)
    public static let bt2020ncl = ColorSpace(rawValue: AVCOL_SPC_BT2020_NCL.rawValue)
    public var description: String {
        guard let p = av_color_space_name(AVColorSpace(rawValue: rawValue)) else { return "unknown" }
        return String(cString: p)
    }
}

/// Limited ("TV", 16–235) or full ("PC", 0–255) range.
public enum ColorRange: String, Sendable {
    case unspecified, limited, full
}
