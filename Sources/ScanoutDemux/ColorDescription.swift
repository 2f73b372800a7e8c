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

/// The primaries a stream is tagged with (FFmpeg's `AVColorPrimaries` numbering).
public struct ColorPrimaries: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static let bt709 = ColorPrimaries(rawValue: AVCOL_PRI_BT709.rawValue)
    public static let bt2020 = ColorPrimaries(rawValue: AVCOL_PRI_BT2020.rawValue)
    public static let unspecified = ColorPrimaries(rawValue: AVCOL_PRI_UNSPECIFIED.rawValue)
    public var description: String {
        guard let p = av_color_primaries_name(AVColorPrimaries(rawValue: rawValue)) else { return "unknown" }
        return String(cString: p)
    }
}

/// The transfer function a stream is tagged with (FFmpeg's `AVColorTransferCharacteristic`).
public struct ColorTransfer: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static let bt709 = ColorTransfer(rawValue: AVCOL_TRC_BT709.rawValue)
    /// SMPTE ST 2084, the perceptual quantizer of HDR10.
    public static let pq = ColorTransfer(rawValue: AVCOL_TRC_SMPTE2084.rawValue)
    /// ARIB STD-B67, hybrid log-gamma.
    public static let hlg = ColorTransfer(rawValue: AVCOL_TRC_ARIB_STD_B67.rawValue)
    public static let unspecified = ColorTransfer(rawValue: AVCOL_TRC_UNSPECIFIED.rawValue)

    /// What the transfer makes of the picture: SDR, or HDR through PQ or HLG.
    public var dynamicRange: DynamicRange { self == .pq ? .pq : (self == .hlg ? .hlg : .sdr) }

    public var description: String {
        guard let p = av_color_transfer_name(AVColorTransferCharacteristic(rawValue: rawValue)) else { return "unknown" }
        return String(cString: p)
    }
}

/// SDR, or HDR by its transfer: PQ (HDR10's) or HLG.
public enum DynamicRange: String, Sendable {
    case sdr, pq, hlg
}

/// A point of the CIE 1931 chromaticity diagram; in JSON, `[x, y]`.
public struct Chromaticity: Sendable, Equatable, Codable {
    public var x: Double
    public var y: Double
    public init(x: Double, y: Double) { self.x = x; self.y = y }

    public init(from decoder: any Decoder) throws {
        var c = try decoder.unkeyedContainer()
        x = try c.decode(Double.self)
        y = try c.decode(Double.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.unkeyedContainer()
        try c.encode(x)
        try c.encode(y)
    }
}

/// The display the content was mastered on (SMPTE ST 2086): its primaries and white point, and
/// its luminance range in cd/m². Either half may be missing from a stream.
public struct MasteringDisplay: Sendable, Equatable, Codable {
    public var red, green, blue, white: Chromaticity?
    public var minLuminance, maxLuminance: Double?

    /// From libavutil's value (`AVMasteringDisplayMetadata`).
    package init(_ m: AVMasteringDisplayMetadata) {
        if m.has_primaries != 0 {
            let p = m.display_primaries
            func point(_ r: (AVRational, AVRational)) -> Chromaticity { Chromaticity(x: av_q2d(r.0), y: av_q2d(r.1)) }
            red = point((p.0.0, p.0.1)); green = point((p.1.0, p.1.1)); blue = point((p.2.0, p.2.1))
            white = point((m.white_point.0, m.white_point.1))
        }
        if m.has_luminance != 0 {
            minLuminance = av_q2d(m.min_luminance)
            maxLuminance = av_q2d(m.max_luminance)
        }
    }

    public init(red: Chromaticity?, green: Chromaticity?, blue: Chromaticity?, white: Chromaticity?, minLuminance: Double?, maxLuminance: Double?) {
        self.red = red; self.green = green; self.blue = blue; self.white = white
        self.minLuminance = minLuminance; self.maxLuminance = maxLuminance
    }
}

/// The content's light levels (CTA-861.3): its brightest pixel and its brightest frame's average,
/// in cd/m².
public struct ContentLightLevel: Sendable, Equatable, Codable {
    public var maxCLL: Int
    public var maxFALL: Int
    public init(maxCLL: Int, maxFALL: Int) { self.maxCLL = maxCLL; self.maxFALL = maxFALL }
    package init(_ c: AVContentLightMetadata) { self.init(maxCLL: Int(c.MaxCLL), maxFALL: Int(c.MaxFALL)) }
}

extension MasteringDisplay {
    /// The stream's mastering display, from its side data; nil when it states none.
    static func of(stream st: UnsafeMutablePointer<AVStream>) -> MasteringDisplay? {
        var size = 0
        guard let sd = av_stream_get_side_data(st, AV_PKT_DATA_MASTERING_DISPLAY_METADATA, &size),
              size >= MemoryLayout<AVMasteringDisplayMetadata>.size else { return nil }
        let m = UnsafeRawPointer(sd).loadUnaligned(as: AVMasteringDisplayMetadata.self)
        guard m.has_primaries != 0 || m.has_luminance != 0 else { return nil }
        return MasteringDisplay(m)
    }
}

extension ContentLightLevel {
    /// The stream's light levels, from its side data; nil when it states none.
    static func of(stream st: UnsafeMutablePointer<AVStream>) -> ContentLightLevel? {
        var size = 0
        guard let sd = av_stream_get_side_data(st, AV_PKT_DATA_CONTENT_LIGHT_LEVEL, &size),
              size >= MemoryLayout<AVContentLightMetadata>.size else { return nil }
        return ContentLightLevel(UnsafeRawPointer(sd).loadUnaligned(as: AVContentLightMetadata.self))
    }
}
