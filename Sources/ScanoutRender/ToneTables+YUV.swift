import Foundation

/// A 4:2:0 10-bit YCbCr picture as `ToneTables.run(yuv:…)` reads it: yuv420p10le (three planes)
/// or P010 (chroma interleaved, samples in the top 10 bits).
struct YUV420Planes: @unchecked Sendable {
    // @unchecked Sendable: the planes are only read, by bands of rows that all finish before
    // `run(yuv:…)` returns, while the frame that owns them is held by the caller.
    var luma: UnsafeRawPointer
    var lumaStride: Int
    var cb: UnsafeRawPointer
    var cr: UnsafeRawPointer
    var chromaStride: Int
    /// Samples from one chroma value to the next in a row: 1 planar, 2 interleaved.
    var chromaStep: Int
    /// Right shift of each 16-bit sample: 0 for yuv420p10le, 6 for P010.
    var shift: UInt16
    /// The matrix's luma weights of red and blue (BT.2020: 0.2627, 0.0593).
    var kr: Float
    var kb: Float
    var fullRange: Bool
}

extension ToneTables {
    /// Maps a 4:2:0 picture straight into bgr0 (or rgba) pixels, with no RGB picture in between:
    /// chroma brought to each pixel bilinearly from MPEG-2's siting (co-sited with even columns,
    /// halfway between row pairs), as zscale's default bilinear filter does, then the matrix, the
    /// transfer's table, the primaries and the curve as `run(src:…)`. In bands of rows on every core.
    func run(yuv p: YUV420Planes, dst: UnsafeMutableRawPointer, dstStride: Int, width: Int, height: Int, rgba: Bool) {
        withRows(rgba: rgba) { rows in
            let bands = Self.bands(width: width, height: height)
            let band = (height + bands - 1) / bands
            let d = Int(bitPattern: dst)   // each band writes rows of its own
            DispatchQueue.concurrentPerform(iterations: bands) { i in
                var row = YUVRow(p, width: width, height: height)
                for y in (i * band)..<min(height, (i + 1) * band) {
                    row.map(y, rows: rows, into: UnsafeMutablePointer(bitPattern: d + y * dstStride)!)
                }
            }
        }
    }
}

/// One band's work: a row's chroma interpolated between its two chroma rows, then each pixel.
private struct YUVRow {
    let p: YUV420Planes
    let width: Int, height: Int
    let chromaWidth: Int, chromaHeight: Int
    var cbRow: [Float], crRow: [Float]
    /// Code value to normalised signal: luma (v − yOffset) · yScale, chroma (v − 512) · cScale.
    let yOffset: Float, yScale: Float, cScale: Float
    /// R' = Y + rv·Cr; G' = Y − gu·Cb − gv·Cr; B' = Y + bu·Cb.
    let rv: Float, gu: Float, gv: Float, bu: Float

    init(_ p: YUV420Planes, width: Int, height: Int) {
        self.p = p
        self.width = width
        self.height = height
        chromaWidth = (width + 1) / 2
        chromaHeight = (height + 1) / 2
        cbRow = [Float](repeating: 0, count: chromaWidth)
        crRow = [Float](repeating: 0, count: chromaWidth)
        yOffset = p.fullRange ? 0 : 64
        yScale = p.fullRange ? 1 / 1023 : 1 / 876
        cScale = p.fullRange ? 1 / 1023 : 1 / 896
        let kg = 1 - p.kr - p.kb
        rv = 2 * (1 - p.kr)
        bu = 2 * (1 - p.kb)
        gu = bu * p.kb / kg
        gv = rv * p.kr / kg
    }

    @inline(__always)
    private func sample(_ base: UnsafeRawPointer, _ offset: Int) -> Float {
        Float(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: 2 * offset, as: UInt16.self)) &>> p.shift)
    }

    mutating func map(_ y: Int, rows: Rows, into dst: UnsafeMutablePointer<UInt32>) {
        // Chroma rows sit halfway between luma rows 2k and 2k + 1.
        let cy = (Float(y) - 0.5) / 2
        let c0 = min(max(Int(cy.rounded(.down)), 0), chromaHeight - 1), c1 = min(c0 + 1, chromaHeight - 1)
        let f = cy < 0 ? 0 : cy - cy.rounded(.down)
        let o0 = c0 * p.chromaStride / 2, o1 = c1 * p.chromaStride / 2
        for cx in 0..<chromaWidth {
            let s = cx * p.chromaStep
            let b0 = sample(p.cb, o0 + s), b1 = sample(p.cb, o1 + s)
            let r0 = sample(p.cr, o0 + s), r1 = sample(p.cr, o1 + s)
            cbRow[cx] = ((b0 + (b1 - b0) * f) - 512) * cScale
            crRow[cx] = ((r0 + (r1 - r0) * f) - 512) * cScale
        }
        let luma = (p.luma + y * p.lumaStride).assumingMemoryBound(to: UInt16.self)
        let top = Float(65535), lin = rows.linear
        @inline(__always) func code(_ v: Float) -> Int { Int(min(max(v, 0), 1) * top + 0.5) }
        cbRow.withUnsafeBufferPointer { cbs in
            crRow.withUnsafeBufferPointer { crs in
                // Pixels in pairs: the even one co-sited with chroma sample h, the odd one halfway
                // to the next; the chroma's share of R', G', B' worked out once for each.
                @inline(__always) func emit(_ x: Int, _ cb: Float, _ cr: Float) {
                    let l = (Float(UInt16(littleEndian: luma[x]) &>> p.shift) - yOffset) * yScale
                    dst[x] = rows.pixel(lin[code(l + rv * cr)], lin[code(l - gu * cb - gv * cr)], lin[code(l + bu * cb)])
                }
                var x = 0
                while x < width {
                    let h = x >> 1, next = min(h + 1, chromaWidth - 1)
                    emit(x, cbs[h], crs[h])
                    if x + 1 < width { emit(x + 1, (cbs[h] + cbs[next]) * 0.5, (crs[h] + crs[next]) * 0.5) }
                    x += 2
                }
            }
        }
    }
}
