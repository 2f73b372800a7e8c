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
        let c = swscaleConstants(space: space, full: full)
        func scaled(_ v: Int64) -> Int32 { Int32((v * (1 << 16) + 0x8000) / c.cy) }
        return (scaled(c.crv), scaled(c.cbu), scaled(c.cgu), scaled(c.cgv), Int32(c.cy), full ? 384 : 326, Int32(c.oy))
    }

    /// `ff_yuv2rgb_c_init_tables`'s constants before they become tables (16.16 fixed point).
    private static func swscaleConstants(space: ColorSpace, full: Bool) -> (crv: Int64, cbu: Int64, cgu: Int64, cgv: Int64, cy: Int64, oy: Int64) {
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
        return (crv, cbu, cgu, cgv, cy, oy)
    }

    /// The 16-bit constants of swscale's full-chroma conversion (`yuv2rgb_write_full`): v2r,
    /// v2g, u2g, u2b, and the luma coefficient and offset, each rounded as its `roundToInt16`.
    static func swscaleFullChroma(space: ColorSpace, full: Bool) -> (v2r: Int, v2g: Int, u2g: Int, u2b: Int, y: Int, yOffset: Int) {
        let c = swscaleConstants(space: space, full: full)
        func round16(_ f: Int64) -> Int {
            let r = (f + (1 << 15)) >> 16
            return Int(min(max(r, -0x8000), 0x7FFF))
        }
        return (round16(c.crv << 13), round16(c.cgv << 13), round16(c.cgu << 13), round16(c.cbu << 13), round16(c.cy << 13), round16(c.oy << 9))
    }
}
