import Foundation
import ScanoutDemux

/// The per-pixel work of `CPUToneMapper`, with its tables built once per transfer, primaries,
/// curve and peak: 16-bit RGB (PQ or HLG coded) in, 8-bit BT.709 RGB out.
///
/// Three tables keep it fast: the transfer at each of the 65536 input code values, the curve's
/// gain at the brightest component and the BT.709 signal of linear light, the last two by their
/// argument's float bits (`FloatBitsTable`). The primaries' matrix is applied per pixel in single
/// precision.
struct ToneTables {
    struct Key: Equatable {
        var transfer: ColorTransfer
        var primaries: ColorPrimaries
        var curve: ToneCurve
        /// In units of reference white.
        var peak: Double
        var desaturation: Double
    }

    let key: Key
    /// Linear light (1 = reference white) of each 16-bit code value.
    let linear: [Float]
    /// The 8-bit BT.709 signal of linear light, by the light's float bits (2^-24 to 1).
    let encode: FloatBitsTable<UInt8>
    /// The curve's gain `curve(x) / x` at the brightest component `x`, by its float bits (2^-20
    /// to 2^8 reference whites): the curve's rational function (or BT.2390's spline) is worked out
    /// once per step instead of once per pixel.
    let gain: FloatBitsTable<Float>
    let matrix: [Float]

    init(_ key: Key) {
        self.key = key
        let hlg = key.transfer == .hlg
        linear = (0..<65536).map { i in
            let e = Double(i) / 65535
            return Float(hlg ? HDRTransfer.hlgDisplay(e) : HDRTransfer.nits(pq: e) / HDRTransfer.referenceWhite)
        }
        encode = FloatBitsTable(low: 0x1p-24, high: 1, mantissaBits: 11) { v in UInt8(min(max((HDRTransfer.bt709Signal(Double(v)) * 255).rounded(), 0), 255)) }
        matrix = HDRTransfer.matrixToBT709(from: key.primaries).map(Float.init)
        gain = FloatBitsTable(low: 0x1p-20, high: 256) { x in Float(key.curve.map(Double(x), peak: key.peak) / Double(x)) }
    }

    /// Bands of rows for a picture: one per core (up to 16) from 512×512 pixels on, else one.
    static func bands(width: Int, height: Int) -> Int {
        width * height >= 1 << 18 ? max(1, min(ProcessInfo.processInfo.activeProcessorCount, 16)) : 1
    }

    /// `body` with the per-pixel work's view of the tables (held for its duration).
    func withRows(rgba: Bool, _ body: (Rows) -> Void) {
        linear.withUnsafeBufferPointer { lin in
            encode.values.withUnsafeBufferPointer { enc in
                gain.values.withUnsafeBufferPointer { gains in
                    body(Rows(linear: lin.baseAddress!, encode: enc.baseAddress!, encodeTable: encode, gain: gains.baseAddress!, gainTable: gain,
                              matrix: matrix, desaturation: Float(key.desaturation), rgba: rgba))
                }
            }
        }
    }

    /// Maps `height` rows of `width` rgb48le pixels at `src` into bgr0 (or rgba) pixels at `dst`,
    /// in bands of rows on every core (a pixel depends on its own input alone; each band writes
    /// its own rows).
    func run(src: UnsafeRawPointer, srcStride: Int, dst: UnsafeMutableRawPointer, dstStride: Int,
             width: Int, height: Int, rgba: Bool) {
        withRows(rgba: rgba) { rows in
            let bands = Self.bands(width: width, height: height)
            let band = (height + bands - 1) / bands
            // The addresses as integers: the bands run on other threads, each on rows of its own.
            let (s, d) = (Int(bitPattern: src), Int(bitPattern: dst))
            DispatchQueue.concurrentPerform(iterations: bands) { i in
                for y in (i * band)..<min(height, (i + 1) * band) {
                    rows.map(UnsafePointer(bitPattern: s + y * srcStride)!, into: UnsafeMutablePointer(bitPattern: d + y * dstStride)!, count: width)
                }
            }
        }
    }
}

/// One row at a time, with everything the inner loop reads held in locals.
/// `@unchecked Sendable`: its pointers are the tables' storage, only read while `run` holds them
/// (the bands that share it finish before `run` returns), never written.
struct Rows: @unchecked Sendable {
    let linear: UnsafePointer<Float>
    let encode: UnsafePointer<UInt8>
    let gain: UnsafePointer<Float>
    let encodeBase: UInt32, encodeShift: UInt32, encodeLow: Float
    let gainBase: UInt32, gainShift: UInt32, gainLow: Float, gainHigh: Float
    let m0, m1, m2, m3, m4, m5, m6, m7, m8: Float
    let desaturation: Float
    let rgba: Bool

    init(linear: UnsafePointer<Float>, encode: UnsafePointer<UInt8>, encodeTable e: FloatBitsTable<UInt8>, gain: UnsafePointer<Float>,
         gainTable g: FloatBitsTable<Float>, matrix m: [Float], desaturation: Float, rgba: Bool) {
        self.linear = linear; self.encode = encode; self.gain = gain
        encodeBase = e.base; encodeShift = e.shift; encodeLow = e.low
        gainBase = g.base; gainShift = g.shift; gainLow = g.low; gainHigh = g.high
        m0 = m[0]; m1 = m[1]; m2 = m[2]; m3 = m[3]; m4 = m[4]; m5 = m[5]; m6 = m[6]; m7 = m[7]; m8 = m[8]
        self.desaturation = desaturation; self.rgba = rgba
    }

    @inline(__always)
    func map(_ src: UnsafePointer<UInt16>, into dst: UnsafeMutablePointer<UInt32>, count: Int) {
        for x in 0..<count {
            dst[x] = pixel(linear[Int(UInt16(littleEndian: src[3 * x]))], linear[Int(UInt16(littleEndian: src[3 * x + 1]))],
                           linear[Int(UInt16(littleEndian: src[3 * x + 2]))])
        }
    }

    /// One output pixel from linear light in the source primaries.
    @inline(__always)
    func pixel(_ ri: Float, _ gi: Float, _ bi: Float) -> UInt32 {
        var r = m0 * ri + m1 * gi + m2 * bi
        var g = m3 * ri + m4 * gi + m5 * bi
        var b = m6 * ri + m7 * gi + m8 * bi
        if desaturation > 0 {
            // FFmpeg's desat: mix toward luma by how far luma is over the threshold.
            let luma = 0.2126 * r + 0.7152 * g + 0.0722 * b
            let over = max(luma - desaturation, 1e-6) / max(luma, 1e-6)
            r += (luma - r) * over; g += (luma - g) * over; b += (luma - b) * over
        }
        let sig = max(max(r, g), b)
        let k = gain[Int((min(max(sig, gainLow), gainHigh).bitPattern &- gainBase) &>> gainShift)]
        let ro = UInt32(encode[index(r * k)]), go = UInt32(encode[index(g * k)]), bo = UInt32(encode[index(b * k)])
        return rgba ? (ro | go << 8 | bo << 16 | 0xff00_0000).littleEndian : (bo | go << 8 | ro << 16).littleEndian
    }

    /// The `encode` entry for linear `v`: the first at or below 2^-24 (black), the last at 1 and above.
    @inline(__always)
    private func index(_ v: Float) -> Int {
        Int((min(max(v, encodeLow), 1).bitPattern &- encodeBase) &>> encodeShift)
    }
}
