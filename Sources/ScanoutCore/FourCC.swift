/// DRM fourccs (`DRM_FORMAT_*`, which GBM's `GBM_FORMAT_*` equal): four ASCII characters,
/// little-endian in a UInt32. The one definition the decoders' exports, the renderer's imports and
/// KMS framebuffers share.
public enum FourCC {
    /// The fourcc of four ASCII characters ("XR24"); shorter names are padded with spaces ("R8  ").
    public static func code(_ s: String) -> UInt32 {
        let b = Array(s.utf8) + [0x20, 0x20, 0x20, 0x20]
        return UInt32(b[0]) | UInt32(b[1]) << 8 | UInt32(b[2]) << 16 | UInt32(b[3]) << 24
    }

    /// The four characters of a fourcc ("NV12"), for logs and errors; "0x…" when they are not
    /// printable.
    public static func name(_ code: UInt32) -> String {
        let bytes = (0..<4).map { UInt8(truncatingIfNeeded: code >> (8 * $0)) }
        if bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7f }) { return String(decoding: bytes, as: UTF8.self) }
        return "0x" + String(code, radix: 16)
    }

    public static let xrgb8888 = code("XR24")
    public static let argb8888 = code("AR24")
    /// 10 bits a channel, for HDR scanout (`DRM_FORMAT_XRGB2101010`).
    public static let xrgb2101010 = code("XR30")
    /// Whole surfaces: 8-bit and 10-bit 4:2:0, luma plane then interleaved chroma.
    public static let nv12 = code("NV12")
    public static let p010 = code("P010")
    /// One plane of them each: R8 / GR88 (NV12), R16 / GR1616 (P010).
    public static let r8 = code("R8  ")
    public static let gr88 = code("GR88")
    public static let r16 = code("R16 ")
    public static let gr1616 = code("GR32")
}
