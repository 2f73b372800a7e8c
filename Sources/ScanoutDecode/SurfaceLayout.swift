import CFFmpeg
import ScanoutCore
import ScanoutDemux

/// The two layouts a hardware surface holds 4:2:0 pictures in, and the exact, lossless moves
/// between them and the planar formats software decoders output:
///
/// | stream (planar) | surface (semi-planar) |
/// | --- | --- |
/// | yuv420p, yuvj420p | nv12 (Y, then CbCr interleaved) |
/// | yuv420p10le | p010le (the same, 16-bit samples with the 10 bits at the top) |
///
/// Written out rather than left to swscale so that the round trip is bit-exact by construction:
/// a downloaded hardware frame hashes (`framemd5`) exactly as the software decoder's would.
enum SurfaceLayout {
    /// The surface format for frames of `stream`, nil when no NV12/P010 surface can hold them.
    static func surfaceFormat(for stream: PixelFormat) -> PixelFormat? {
        switch stream {
        case .yuv420p, .yuvj420p: return .nv12
        case .yuv420p10: return .p010
        default: return nil
        }
    }

    /// yuv420p → nv12, yuv420p10le → p010le; timestamps and tags copied.
    static func pack(_ planar: VideoFrame, into semi: VideoFrame) throws {
        guard let target = surfaceFormat(for: planar.pixelFormat) else {
            throw HardwareFailure.exportFailed("no NV12/P010 surface for \(planar.pixelFormat.name)")
        }
        let w = planar.width, h = planar.height, cw = (w + 1) / 2, ch = (h + 1) / 2
        try semi.allocate(format: target, width: w, height: h)
        semi.copyProperties(from: planar)
        guard let sy = planar.planeData(0), let su = planar.planeData(1), let sv = planar.planeData(2),
              let dy = semi.planeData(0), let duv = semi.planeData(1) else {
            throw HardwareFailure.exportFailed("a plane has no data")
        }
        let ls = (planar.lineSize(0), planar.lineSize(1), planar.lineSize(2)), ld = (semi.lineSize(0), semi.lineSize(1))
        if target == .nv12 {
            for y in 0..<h { (dy + y * ld.0).update(from: sy + y * ls.0, count: w) }
            for y in 0..<ch {
                let u = su + y * ls.1, v = sv + y * ls.2, d = duv + y * ld.1
                for x in 0..<cw { d[2 * x] = u[x]; d[2 * x + 1] = v[x] }
            }
        } else {
            func row16(_ p: UnsafeMutablePointer<UInt8>, _ stride: Int, _ y: Int) -> UnsafeMutableRawPointer { UnsafeMutableRawPointer(p + y * stride) }
            for y in 0..<h {
                let s = row16(sy, ls.0, y), d = row16(dy, ld.0, y)
                for x in 0..<w { store16(d, x, load16(s, x) << 6) }
            }
            for y in 0..<ch {
                let u = row16(su, ls.1, y), v = row16(sv, ls.2, y), d = row16(duv, ld.1, y)
                for x in 0..<cw { store16(d, 2 * x, load16(u, x) << 6); store16(d, 2 * x + 1, load16(v, x) << 6) }
            }
        }
    }

    /// nv12 → yuv420p (or yuvj420p), p010le → yuv420p10le; a frame already in `format` is
    /// referenced as is. Timestamps and tags copied.
    static func unpack(_ semi: VideoFrame, to format: PixelFormat, into planar: VideoFrame) throws {
        if semi.pixelFormat == format {
            planar.reference(semi)
            return
        }
        guard surfaceFormat(for: format) == semi.pixelFormat else {
            throw HardwareFailure.importFailed("cannot unpack \(semi.pixelFormat.name) into \(format.name)")
        }
        let w = semi.width, h = semi.height, cw = (w + 1) / 2, ch = (h + 1) / 2
        try planar.allocate(format: format, width: w, height: h)
        planar.copyProperties(from: semi)
        guard let sy = semi.planeData(0), let suv = semi.planeData(1),
              let dy = planar.planeData(0), let du = planar.planeData(1), let dv = planar.planeData(2) else {
            throw HardwareFailure.importFailed("a plane has no data")
        }
        let ls = (semi.lineSize(0), semi.lineSize(1)), ld = (planar.lineSize(0), planar.lineSize(1), planar.lineSize(2))
        if semi.pixelFormat == .nv12 {
            for y in 0..<h { (dy + y * ld.0).update(from: sy + y * ls.0, count: w) }
            for y in 0..<ch {
                let s = suv + y * ls.1, u = du + y * ld.1, v = dv + y * ld.2
                for x in 0..<cw { u[x] = s[2 * x]; v[x] = s[2 * x + 1] }
            }
        } else {
            func row16(_ p: UnsafeMutablePointer<UInt8>, _ stride: Int, _ y: Int) -> UnsafeMutableRawPointer { UnsafeMutableRawPointer(p + y * stride) }
            for y in 0..<h {
                let s = row16(sy, ls.0, y), d = row16(dy, ld.0, y)
                for x in 0..<w { store16(d, x, load16(s, x) >> 6) }
            }
            for y in 0..<ch {
                let s = row16(suv, ls.1, y), u = row16(du, ld.1, y), v = row16(dv, ld.2, y)
                for x in 0..<cw { store16(u, x, load16(s, 2 * x) >> 6); store16(v, x, load16(s, 2 * x + 1) >> 6) }
            }
        }
    }
}

@inline(__always) private func load16(_ p: UnsafeMutableRawPointer, _ i: Int) -> UInt16 {
    UInt16(littleEndian: p.loadUnaligned(fromByteOffset: 2 * i, as: UInt16.self))
}

@inline(__always) private func store16(_ p: UnsafeMutableRawPointer, _ i: Int, _ v: UInt16) {
    p.storeBytes(of: v.littleEndian, toByteOffset: 2 * i, as: UInt16.self)
}


extension VideoFrame {
    /// A frame with this one's timestamps, tags and size but no picture.
    package func propertiesOnly() -> VideoFrame {
        let f = VideoFrame()
        av_frame_copy_props(f.pointer, pointer)
        f.pointer.pointee.width = pointer.pointee.width
        f.pointer.pointee.height = pointer.pointee.height
        return f
    }

    /// Copies timestamps, colour tags and the aspect ratio from `other` (`av_frame_copy_props`).
    package func copyProperties(from other: VideoFrame) {
        av_frame_copy_props(pointer, other.pointer)
    }
}

extension VideoFrame {
    /// Drops this frame's picture and references `other`'s buffers instead (`av_frame_ref`).
    package func reference(_ other: VideoFrame) {
        unref()
        av_frame_ref(pointer, other.pointer)
        hardware = other.hardware
        awaitingDownload = other.awaitingDownload
    }
}
