/// What a connector's `HDR_OUTPUT_METADATA` blob holds: the kernel's `struct hdr_output_metadata`
/// (metadata type 0, then CTA-861-G's HDR static metadata infoframe), which the driver sends to
/// the screen as its Dynamic Range and Mastering InfoFrame. Little-endian, 32 bytes (4 + 26,
/// padded to the struct's 4-byte alignment); the kernel refuses a blob of any other size.
///
/// Units are the infoframe's: chromaticities in 0.00002 steps, the mastering display's maximum in
/// cd/m², its minimum in 0.0001 cd/m², MaxCLL and MaxFALL in cd/m². Primaries go red, green,
/// blue (the order of libavutil's mastering display metadata, which the HEVC decoder already
/// turned from the SEI's green, blue, red).
public struct HDROutputMetadata: Sendable, Equatable {
    /// The infoframe's EOTF field.
    public enum EOTF: UInt8, Sendable, Equatable {
        case sdr = 0, hdrGamma = 1, pq = 2, hlg = 3
    }

    /// A chromaticity in 0.00002 steps (x = 0.708 → 35400).
    public struct Point: Sendable, Equatable {
        public var x: UInt16, y: UInt16
        public init(x: UInt16, y: UInt16) { self.x = x; self.y = y }
        /// From CIE 1931 coordinates, clamped to the field.
        public init(cieX x: Double, y: Double) { self.init(x: Self.code(x), y: Self.code(y)) }
        static func code(_ v: Double) -> UInt16 { UInt16(max(0, min(65535, (v * 50_000).rounded()))) }
    }

    public var eotf: EOTF
    /// red, green, blue
    public var primaries: [Point]
    public var whitePoint: Point
    /// cd/m².
    public var maxMasteringLuminance: UInt16
    /// 0.0001 cd/m².
    public var minMasteringLuminance: UInt16
    /// cd/m²; 0: unknown.
    public var maxCLL: UInt16
    public var maxFALL: UInt16

    /// The blob's size (`sizeof(struct hdr_output_metadata)`).
    public static let byteCount = 32

    public init(eotf: EOTF, primaries: [Point] = [], whitePoint: Point = Point(x: UInt16(0), y: 0), maxMasteringLuminance: UInt16 = 0,
                minMasteringLuminance: UInt16 = 0, maxCLL: UInt16 = 0, maxFALL: UInt16 = 0) {
        self.eotf = eotf
        self.primaries = primaries.count == 3 ? primaries : [Point](repeating: Point(x: UInt16(0), y: 0), count: 3)
        self.whitePoint = whitePoint
        self.maxMasteringLuminance = maxMasteringLuminance
        self.minMasteringLuminance = minMasteringLuminance
        self.maxCLL = maxCLL
        self.maxFALL = maxFALL
    }

    /// The blob's bytes.
    public var bytes: [UInt8] {
        var b = [UInt8](repeating: 0, count: Self.byteCount)
        // metadata_type (u32) = 0: HDMI static metadata type 1; then the infoframe from offset 4.
        b[4] = eotf.rawValue
        b[5] = 0   // Static_Metadata_Descriptor_ID: type 1
        var o = 6
        func put(_ v: UInt16) { b[o] = UInt8(v & 0xff); b[o + 1] = UInt8(v >> 8); o += 2 }
        for p in primaries { put(p.x); put(p.y) }
        put(whitePoint.x); put(whitePoint.y)
        put(maxMasteringLuminance); put(minMasteringLuminance); put(maxCLL); put(maxFALL)
        return b
    }

    /// Reads a blob; nil when it is not a type-1 static metadata blob of the kernel's size.
    public init?(bytes b: [UInt8]) {
        guard b.count == Self.byteCount, b[0] == 0, b[1] == 0, b[2] == 0, b[3] == 0, b[5] == 0, let eotf = EOTF(rawValue: b[4]) else { return nil }
        var o = 6
        func get() -> UInt16 { defer { o += 2 }; return UInt16(b[o]) | UInt16(b[o + 1]) << 8 }
        let primaries = (0..<3).map { _ in Point(x: get(), y: get()) }
        let white = Point(x: get(), y: get())
        self.init(eotf: eotf, primaries: primaries, whitePoint: white, maxMasteringLuminance: get(), minMasteringLuminance: get(),
                  maxCLL: get(), maxFALL: get())
    }
}

/// The connector properties HDR output sets, as the kernel names them.
public enum HDRConnectorProperty {
    public static let metadata = "HDR_OUTPUT_METADATA"
    public static let colorspace = "Colorspace"
    public static let maxBPC = "max bpc"
    /// The `Colorspace` entries: the driver's default (the screen's usual RGB) and BT.2020 RGB.
    public static let defaultColorspace = "Default"
    public static let bt2020RGB = "BT2020_RGB"
}
