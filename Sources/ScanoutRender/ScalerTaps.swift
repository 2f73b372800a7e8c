/// The filter taps libswscale computes for one axis of a `SWS_BICUBIC | SWS_BITEXACT` scale,
/// worked out again in Swift so that the GLES renderer can run the same integer arithmetic
/// (yuv.frag's SCALED_EXACT) and draw a scaled picture exactly as the CPU compositor does.
///
/// For every output position: the first input sample it reads (`positions`) and `size` integer
/// weights summing to `one` (2^14 horizontally, 2^12 vertically), after swscale's steps in its
/// order: the Keys cubic (B = 0, C = 0.6) in 2^-30 fixed point widened by the scale factor when
/// shrinking, near-zero taps trimmed from both ends (a 0.002 cut-off), the size rounded up to
/// the SIMD alignment (the extra taps zero, as `SWS_BITEXACT` asks), taps past either border
/// folded onto the edge sample, and each row normalised with its rounding error carried along.
/// Samples are centred (swscale's default chroma siting, position 128 of 256, for every plane).
struct ScalerTaps: Equatable, Sendable {
    /// Taps per output position.
    let size: Int
    /// The first input sample of each output position.
    let positions: [Int]
    /// `size` weights per output position, position by position.
    let weights: [Int]

    /// The weights of output position `i`.
    func weights(at i: Int) -> ArraySlice<Int> { weights[(i * size)..<((i + 1) * size)] }

    /// swscale's alignment of a filter's size: 4 horizontally and 2 vertically with SIMD (x86
    /// MMX and up, NEON), 1 in plain C. With `SWS_BITEXACT` the padding taps are zero, so the
    /// alignment only decides which vertical routine runs, and that only for sizes 1 and 2, which
    /// an alignment of 2 keeps.
    static var simd: Bool {
        #if arch(x86_64) || arch(arm64)
        true
        #else
        false
        #endif
    }

    /// A filter's taps are at most this many, or swscale cascades two scalers instead.
    static let maximumSize = 256

    /// The taps from `source` samples to `destination` along one axis; nil where swscale would
    /// not scale in one pass (a filter of `maximumSize` taps or more) or a size is not positive.
    init?(source srcW: Int, destination dstW: Int, vertical: Bool) {
        guard srcW > 0, dstW > 0 else { return nil }
        let one: Int64 = vertical ? 1 << 12 : 1 << 14
        var align = Self.simd ? (vertical ? 2 : 4) : 1
        let xInc = ((Int64(srcW) << 16) + Int64(dstW >> 1)) / Int64(dstW)
        let ratio = srcW / dstW
        let fone: Int64 = 1 << (54 - min(ratio > 0 ? Int64(ratio).bitWidth - 1 - Int64(ratio).leadingZeroBitCount : 0, 8))
        var (size, positions, raw) = Self.cubic(srcW: srcW, dstW: dstW, xInc: xInc, fone: fone)

        // Trim near-zero taps: from the left by moving the window right, from the right by size.
        let cutOff = 0.002 * Double(fone)
        var minSize = 0
        for i in stride(from: dstW - 1, through: 0, by: -1) {
            var kept = size
            var sum: Int64 = 0
            for _ in 0..<size {
                sum += abs(raw[i * size])
                if Double(sum) > cutOff { break }
                if i < dstW - 1 && positions[i] >= positions[i + 1] { break }
                for k in 1..<max(size, 1) { raw[i * size + k - 1] = raw[i * size + k] }
                raw[i * size + size - 1] = 0
                positions[i] += 1
            }
            sum = 0
            var j = size - 1
            while j > 0 {
                sum += abs(raw[i * size + j])
                if Double(sum) > cutOff { break }
                kept -= 1
                j -= 1
            }
            minSize = max(minSize, kept)
        }
        if Self.simd && minSize == 1 && align == 2 { align = 1 }
        let newSize = (minSize + align - 1) & ~(align - 1)
        guard minSize > 0, newSize < Self.maximumSize else { return nil }
        var taps = [Int64](repeating: 0, count: dstW * newSize)
        for i in 0..<dstW {
            for j in 0..<min(minSize, size) { taps[i * newSize + j] = raw[i * size + j] }
        }
        size = newSize
        Self.foldBorders(&taps, positions: &positions, size: size, srcW: srcW)
        self.size = size
        self.positions = positions
        self.weights = Self.normalised(taps, size: size, one: one)
    }

    /// The unscaled identity, or the cubic taps before trimming: (size, positions, weights in
    /// units of `fone`).
    private static func cubic(srcW: Int, dstW: Int, xInc: Int64, fone: Int64) -> (Int, [Int], [Int64]) {
        if abs(xInc - 0x10000) < 10 {
            return (1, Array(0..<dstW), [Int64](repeating: fone, count: dstW))
        }
        let sizeFactor = 4
        var size = xInc <= 1 << 16 ? 1 + sizeFactor : 1 + (sizeFactor * srcW + dstW - 1) / dstW
        size = max(min(size, srcW - 2), 1)
        let b: Int64 = 0
        let c = Int64(0.6 * Double(1 << 24))
        var positions = [Int](repeating: 0, count: dstW)
        var raw = [Int64](repeating: 0, count: dstW * size)
        // The centre of output sample 0 in input samples, in 2^-17 units (both sited at 128/256).
        var centre = xInc - 0x10000
        for i in 0..<dstW {
            var xx = (centre - Int64(size - 2) * (1 << 16)) / (1 << 17)
            positions[i] = Int(xx)
            for j in 0..<size {
                var d = abs(xx * (1 << 17) - centre) << 13
                if xInc > 1 << 16 { d = d * Int64(dstW) / Int64(srcW) }
                var coeff: Int64
                if d >= 1 << 31 {
                    coeff = 0
                } else {
                    let dd = (d * d) >> 30
                    let ddd = (dd * d) >> 30
                    if d < 1 << 30 {
                        coeff = (12 * (1 << 24) - 9 * b - 6 * c) * ddd + (-18 * (1 << 24) + 12 * b + 6 * c) * dd + (6 * (1 << 24) - 2 * b) * (1 << 30)
                    } else {
                        coeff = (-b - 6 * c) * ddd + (6 * b + 30 * c) * dd + (-12 * b - 48 * c) * d + (8 * b + 24 * c) * (1 << 30)
                    }
                }
                raw[i * size + j] = coeff / ((1 << 54) / fone)
                xx += 1
            }
            centre += 2 * xInc
        }
        return (size, positions, raw)
    }

    /// Taps before the first sample or past the last folded onto the edge, the window moved inside.
    private static func foldBorders(_ taps: inout [Int64], positions: inout [Int], size: Int, srcW: Int) {
        for i in positions.indices {
            let row = i * size
            if positions[i] < 0 {
                for j in 1..<max(size, 1) {
                    let left = max(j + positions[i], 0)
                    taps[row + left] += taps[row + j]
                    taps[row + j] = 0
                }
                positions[i] = 0
            }
            if positions[i] + size > srcW {
                let shift = positions[i] + min(size - srcW, 0)
                var acc: Int64 = 0
                for j in stride(from: size - 1, through: 0, by: -1) where positions[i] + j >= srcW {
                    acc += taps[row + j]
                    taps[row + j] = 0
                }
                for j in stride(from: size - 1, through: 0, by: -1) {
                    taps[row + j] = j < shift ? 0 : taps[row + j - shift]
                }
                positions[i] -= shift
                taps[row + srcW - 1 - positions[i]] += acc
            }
        }
    }

    /// Each row scaled to sum to `one`, rounding to nearest with the error carried to the next tap.
    private static func normalised(_ taps: [Int64], size: Int, one: Int64) -> [Int] {
        var out = [Int](repeating: 0, count: taps.count)
        for i in 0..<(taps.count / size) {
            var sum: Int64 = 0
            for j in 0..<size { sum += taps[i * size + j] }
            sum = (sum + one / 2) / one
            if sum == 0 { sum = 1 }
            var error: Int64 = 0
            for j in 0..<size {
                let v = taps[i * size + j] + error
                let rounded = (v >= 0 ? v + (sum >> 1) : v - (sum >> 1)) / sum
                out[i * size + j] = Int(rounded)
                error = v - rounded * sum
            }
        }
        return out
    }
}
