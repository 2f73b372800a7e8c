import CFFmpeg
import ScanoutCore
import ScanoutDemux

/// The lossless turns and mirrors of `Orientation` applied to memory: each element of a plane
/// (1, 2, 3 or 4 bytes) moves, none is interpolated.
package enum PlaneTransform {
    /// Size of the result of applying `o` to a `width`×`height` picture.
    package static func outputSize(width: Int, height: Int, _ o: Orientation) -> (width: Int, height: Int) {
        o.swapsDimensions ? (height, width) : (width, height)
    }

    /// Copies `src` (`width`×`height` elements of `elementSize` bytes, rows `srcStride` apart) into
    /// `dst` turned by `o` (rows `dstStride` apart).
    package static func apply(_ o: Orientation, src: UnsafeRawPointer, srcStride: Int, width: Int, height: Int,
                      elementSize: Int, dst: UnsafeMutableRawPointer, dstStride: Int) {
        let (ow, oh) = outputSize(width: width, height: height, o)
        // For output (x, y): source column and row as affine functions of x and y.
        // Rotate clockwise first, then mirror left-right.
        for y in 0..<oh {
            let dstRow = dst + y * dstStride
            for x in 0..<ow {
                let mx = o.mirrored ? ow - 1 - x : x
                let sx: Int, sy: Int
                switch o.rotation {
                case 90: sx = y; sy = height - 1 - mx
                case 180: sx = width - 1 - mx; sy = height - 1 - y
                case 270: sx = width - 1 - y; sy = mx
                default: sx = mx; sy = y
                }
                let s = src + sy * srcStride + sx * elementSize
                let d = dstRow + x * elementSize
                switch elementSize {
                case 1: d.storeBytes(of: s.load(as: UInt8.self), as: UInt8.self)
                case 2: d.storeBytes(of: s.loadUnaligned(as: UInt16.self), as: UInt16.self)
                case 4: d.storeBytes(of: s.loadUnaligned(as: UInt32.self), as: UInt32.self)
                default: d.copyMemory(from: s, byteCount: elementSize)
                }
            }
        }
    }
}

extension VideoFrame {
    /// Whether `oriented(_:)` can turn this frame's planes directly (planar or semi-planar
    /// layouts whose chroma is subsampled equally in both directions, as ffmpeg's transpose
    /// filter requires).
    public func canOrientPlanes(_ o: Orientation) -> Bool {
        guard let d = pixelFormat.descriptor else { return false }
        let flags = d.pointee.flags
        if flags & UInt64(AV_PIX_FMT_FLAG_BITSTREAM | AV_PIX_FMT_FLAG_PAL | AV_PIX_FMT_FLAG_HWACCEL) != 0 { return false }
        return !o.swapsDimensions || d.pointee.log2_chroma_w == d.pointee.log2_chroma_h
    }

    /// A new frame holding this one's picture turned by `o`, plane by plane, before any colour
    /// conversion (as the ffmpeg tool's autorotation does). Throws for layouts that
    /// `canOrientPlanes` rejects.
    public func oriented(_ o: Orientation) throws -> VideoFrame {
        guard canOrientPlanes(o), let d = pixelFormat.descriptor else {
            throw MediaError.unsupportedPixelFormat(name: "\(pixelFormat.name) (cannot be rotated plane by plane)")
        }
        let out = VideoFrame()
        let (w, h) = PlaneTransform.outputSize(width: width, height: height, o)
        out.pointer.pointee.format = pointer.pointee.format
        out.pointer.pointee.width = Int32(w)
        out.pointer.pointee.height = Int32(h)
        try check(av_frame_get_buffer(out.pointer, 0), "av_frame_get_buffer")
        av_frame_copy_props(out.pointer, pointer)
        let comps = withUnsafeBytes(of: d.pointee.comp) { Array($0.bindMemory(to: AVComponentDescriptor.self)) }
        for plane in 0..<pixelFormat.planeCount {
            guard let comp = comps.prefix(Int(d.pointee.nb_components)).first(where: { Int($0.plane) == plane }),
                  let src = planeData(plane), let dst = out.planeData(plane) else { continue }
            let isChroma = plane > 0 && pixelFormat.isYUV && plane < 3
            let sw = isChroma ? -((-width) >> Int(d.pointee.log2_chroma_w)) : width
            let sh = isChroma ? -((-height) >> Int(d.pointee.log2_chroma_h)) : height
            PlaneTransform.apply(o, src: src, srcStride: lineSize(plane), width: sw, height: sh,
                                 elementSize: Int(comp.step), dst: dst, dstStride: out.lineSize(plane))
        }
        return out
    }
}

extension VideoFrame {
    /// This frame when `o` is the identity, otherwise a copy turned by `o` (see `oriented(_:)`).
    public func upright(_ o: Orientation) throws -> VideoFrame {
        o.isIdentity ? self : try oriented(o)
    }
}
