import CFFmpeg
import ScanoutDemux

/// A cheap look at a picture: its luma read at a grid of points (16×9 by default), enough to tell
/// a black picture (every point dark) and an unchanged one (the same values as before) without
/// reading the frame: what a multiviewer watches on each tile.
public struct PictureSample: Equatable, Sendable {
    /// The points' luma, scaled to 8 bits, row by row.
    public var luma: [UInt8]
    /// Whether the frame's range is full (0...255) rather than limited (16...235).
    public var fullRange: Bool

    public init(luma: [UInt8], fullRange: Bool) {
        self.luma = luma
        self.fullRange = fullRange
    }

    /// Mean luma of the points.
    public var mean: Double { luma.isEmpty ? 0 : Double(luma.reduce(0) { $0 + Int($1) }) / Double(luma.count) }

    /// Whether every point is dark: at most 32 (limited range; black is 16) or 20 (full; 0).
    public var isBlack: Bool {
        let limit: UInt8 = fullRange ? 20 : 32
        return !luma.isEmpty && luma.allSatisfy { $0 <= limit }
    }

    /// Whether `other` shows the same picture: no point differs by more than 2 (encoder noise).
    public func looksLike(_ other: PictureSample) -> Bool {
        luma.count == other.luma.count && zip(luma, other.luma).allSatisfy { abs(Int($0) - Int($1)) <= 2 }
    }
}

extension VideoFrame {
    /// The picture's luma at `columns`×`rows` points (each at the centre of its cell); nil for a
    /// frame with no CPU planes (only in GPU memory: `isGPUOnly`), or one that is not YUV (an RGB
    /// still image). A hardware frame that has its planes too is sampled from them.
    public func pictureSample(columns: Int = 16, rows: Int = 9) -> PictureSample? {
        guard !isGPUOnly, pixelFormat.isYUV, let d = pixelFormat.descriptor,
              d.pointee.flags & UInt64(AV_PIX_FMT_FLAG_HWACCEL) == 0, width > 0, height > 0 else { return nil }
        let comp = d.pointee.comp.0
        guard let base = planeData(Int(comp.plane)) else { return nil }
        let stride = lineSize(Int(comp.plane)), step = Int(comp.step), offset = Int(comp.offset)
        let depth = Int(comp.depth), shift = Int(comp.shift)
        var luma: [UInt8] = []
        luma.reserveCapacity(columns * rows)
        for r in 0..<rows {
            let y = (2 * r + 1) * height / (2 * rows)
            for c in 0..<columns {
                let x = (2 * c + 1) * width / (2 * columns)
                let p = base + y * stride + x * step + offset
                if depth <= 8 {
                    luma.append(p.pointee)
                } else {
                    let v = (Int(p.pointee) | Int(p[1]) << 8) >> shift
                    luma.append(UInt8(truncatingIfNeeded: min(255, v >> (depth - 8))))
                }
            }
        }
        return PictureSample(luma: luma, fullRange: colorRange == .full || pixelFormat.isFullRangeByDefinition)
    }
}
