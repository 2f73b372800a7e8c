import CEGL
import CFFmpeg
import ScanoutCore
import ScanoutDemux
import ScanoutDecode

/// The colour arithmetic of the YUV shader, as swscale does it: chroma reconstruction, the
/// Y'CbCr matrices and ranges, and swscale's integer tables.
extension GLRenderer {
    /// The chroma reconstruction swscale uses for `format` → rgb24 at the same size: its unscaled converter (nearest) for yuv420p / yuv422p with an
    /// even output height, otherwise its generic scaler (vertical cubic).
    static func swscaleChroma(_ format: PixelFormat, uprightHeight: Int) -> YUVProgramKey.Chroma {
        // swscale turns yuvj formats into their yuv twins with a full-range flag first.
        let unscaled: Set<String> = ["yuv420p", "yuv422p", "yuva420p", "yuvj420p", "yuvj422p"]
        return unscaled.contains(format.name) && uprightHeight % 2 == 0 ? .nearest : .cubic
    }

    /// Kr and Kb of the matrix swscale uses for `space` (`Scaler.effectiveMatrix`).
    static func lumaCoefficients(_ space: ColorSpace) -> (kr: Double, kb: Double) {
        switch Scaler.effectiveMatrix(for: space) {
        case 1: return (0.2126, 0.0722)        // BT.709
        case 4: return (0.30, 0.11)            // FCC
        case 7: return (0.212, 0.087)          // SMPTE 240M
        case 9, 10: return (0.2627, 0.0593)    // BT.2020
        default: return (0.299, 0.114)         // BT.601 (470BG, 170M, untagged)
        }
    }

    /// Y'CbCr → R'G'B' as a column-major 3×3 matrix for `rgb = M · (y, cb, cr)`.
    static func yuvToRGB(kr: Double, kb: Double) -> [Float] {
        let kg = 1 - kr - kb
        let cols: [Double] = [1, 1, 1,
                              0, -2 * kb * (1 - kb) / kg, 2 * (1 - kb),
                              2 * (1 - kr), -2 * kr * (1 - kr) / kg, 0]
        return cols.map { Float($0) }
    }

    /// (offset, scale) taking `bits`-bit luma and chroma code values to Y' in [0, 1] and Cb, Cr in
    /// [-0.5, 0.5], for limited or full range.
    static func ranges(bits: Int, full: Bool) -> (y: (Float, Float), c: (Float, Float)) {
        let k = Double(1 << (bits - 8))
        if full {
            let maxCode = Double((1 << bits) - 1)
            return ((0, Float(1 / maxCode)), (Float(128 * k), Float(1 / maxCode)))
        }
        return ((Float(16 * k), Float(1 / (219 * k))), (Float(128 * k), Float(1 / (224 * k))))
    }

    static func isFullRange(_ frame: VideoFrame) -> Bool {
        frame.colorRange == .full || (frame.colorRange == .unspecified && frame.pixelFormat.isFullRangeByDefinition)
    }

    /// The constants of swscale's table-driven yuv2rgb (`ff_yuv2rgb_c_init_tables` with neutral
    /// brightness, contrast and saturation), for the shader's integer path.
    static func swscaleTables(space: ColorSpace, full: Bool) -> (crv: Int32, cbu: Int32, cgu: Int32, cgv: Int32, cy: Int32, yoffs: Int32, oy: Int32) {
        let table = sws_getCoefficients(Scaler.effectiveMatrix(for: space))!
        var crv = Int64(table[0]), cbu = Int64(table[1]), cgu = -Int64(table[2]), cgv = -Int64(table[3])
        var cy: Int64 = 1 << 16
        var oy: Int64 = 0
        if !full {
            cy = cy * 255 / 219
            oy = 16 << 16
        } else {
            crv = crv * 224 / 255; cbu = cbu * 224 / 255; cgu = cgu * 224 / 255; cgv = cgv * 224 / 255
        }
        func scaled(_ c: Int64) -> Int32 { Int32((c * (1 << 16) + 0x8000) / cy) }
        return (scaled(crv), scaled(cbu), scaled(cgu), scaled(cgv), Int32(cy), full ? 384 : 326, Int32(oy))
    }
}
