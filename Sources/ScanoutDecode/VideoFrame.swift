import CFFmpeg
import ScanoutCore
import ScanoutDemux

/// A decoded picture in CPU memory; owns an `AVFrame` (freed once, in `deinit`).
///
/// Planes stay in the decoder's pool: a frame is reused by `Decoder.receive(into:)`, which
/// unreferences it first. Hold a `clone()` to keep a picture past the next receive.
/// Not thread-safe; one owner at a time.
public final class VideoFrame {
    package let pointer: UnsafeMutablePointer<AVFrame>

    /// The hardware picture when a hardware decoder made this frame (DMA-BUFs or CUDA memory);
    /// nil for software frames. Holding it keeps the decoded surface alive. With a `cpu`
    /// destination the planes are in CPU memory as well; with `gpu` they may not be
    /// (`isGPUOnly`, `makeCPUResident()`).
    public package(set) var hardware: HardwareFrame?

    /// Whether the CPU planes are still to be downloaded from `hardware`.
    package var awaitingDownload = false

    /// The picture's DMA-BUF export when a hardware decoder made it as one (VA-API, the
    /// stand-in); nil otherwise.
    public var surface: ExportedSurface? {
        if case .dmaBuf(let s)? = hardware?.memory { return s }
        return nil
    }

    /// The picture in CUDA memory when NVDEC decoded it; nil otherwise.
    public var cudaFrame: CUDAFrame? {
        if case .cuda(let c)? = hardware?.memory { return c }
        return nil
    }

    public init() {
        guard let f = av_frame_alloc() else { fatalError("av_frame_alloc: out of memory") }
        pointer = f
    }

    deinit {
        var f: UnsafeMutablePointer<AVFrame>? = pointer
        av_frame_free(&f)
    }

    /// A new frame referencing the same buffers (`av_frame_ref`).
    public func clone() -> VideoFrame {
        let copy = VideoFrame()
        av_frame_ref(copy.pointer, pointer)
        copy.hardware = hardware
        copy.awaitingDownload = awaitingDownload
        return copy
    }

    /// Re-stamps the frame (a still shown again at `pts`, `StillDecoder`).
    func stamp(pts: Int64, duration: Int64) {
        pointer.pointee.pts = pts
        pointer.pointee.best_effort_timestamp = pts
        pointer.pointee.pkt_duration = duration
    }

    /// A black 16×16 yuv420p picture (limited range).
    static func black() -> VideoFrame {
        let f = VideoFrame()
        f.pointer.pointee.width = 16
        f.pointer.pointee.height = 16
        f.pointer.pointee.format = AV_PIX_FMT_YUV420P.rawValue
        guard av_frame_get_buffer(f.pointer, 0) >= 0 else { fatalError("av_frame_get_buffer: out of memory") }
        let p = f.pointer.pointee
        for (plane, size) in [(p.data.0, Int(p.linesize.0) * 16), (p.data.1, Int(p.linesize.1) * 8), (p.data.2, Int(p.linesize.2) * 8)].enumerated() {
            size.0?.update(repeating: plane == 0 ? 16 : 128, count: size.1)
        }
        return f
    }

    public func unref() {
        av_frame_unref(pointer)
        hardware = nil
        awaitingDownload = false
    }

    public var width: Int { Int(pointer.pointee.width) }
    public var height: Int { Int(pointer.pointee.height) }
    public var pixelFormat: PixelFormat { PixelFormat(rawValue: pointer.pointee.format) }

    /// The decoder's best guess of the presentation time, in the stream's time base
    /// (`best_effort_timestamp`, as the ffmpeg tool uses); nil when unknown.
    public var pts: Int64? {
        let t = pointer.pointee.best_effort_timestamp
        return t == SCANOUT_AV_NOPTS_VALUE ? nil : t
    }

    /// Duration of the packet that produced the frame, in the stream's time base (0 when unknown).
    public var duration: Int64 { pointer.pointee.pkt_duration }

    public var isKeyframe: Bool { pointer.pointee.key_frame != 0 }

    /// The decoder concealed errors in this frame, or flagged it corrupt.
    public var hasDecodeErrors: Bool {
        pointer.pointee.decode_error_flags != 0 || pointer.pointee.flags & AV_FRAME_FLAG_CORRUPT != 0
    }

    public var sampleAspectRatio: Rational { Rational(pointer.pointee.sample_aspect_ratio) }
    public var colorSpace: ColorSpace { ColorSpace(rawValue: pointer.pointee.colorspace.rawValue) }
    /// The transfer the frame is tagged with (`color_trc`): SDR's, PQ or HLG.
    public var colorTransfer: ColorTransfer { ColorTransfer(rawValue: pointer.pointee.color_trc.rawValue) }
    /// The primaries the frame is tagged with (`color_primaries`).
    public var colorPrimaries: ColorPrimaries { ColorPrimaries(rawValue: pointer.pointee.color_primaries.rawValue) }
    public var colorRange: ColorRange {
        pointer.pointee.color_range == AVCOL_RANGE_JPEG ? .full
            : (pointer.pointee.color_range == AVCOL_RANGE_MPEG ? .limited : .unspecified)
    }

    /// Row stride of `plane` in bytes.
    public func lineSize(_ plane: Int) -> Int {
        withUnsafeBytes(of: pointer.pointee.linesize) { $0.load(fromByteOffset: plane * 4, as: Int32.self) }.int
    }

    /// Calls `body` with each visible row of `plane` in turn (no padding).
    public func withPlaneRows(_ plane: Int, _ body: (UnsafeRawBufferPointer) -> Void) {
        let fmt = pixelFormat.av
        var lines = [Int32](repeating: 0, count: 4)
        av_image_fill_linesizes(&lines, fmt, pointer.pointee.width)
        let rowBytes = Int(lines[plane])
        let rows = planeHeight(plane)
        let stride = lineSize(plane)
        guard let base = planeData(plane) else { return }
        for y in 0..<rows {
            body(UnsafeRawBufferPointer(start: base + y * stride, count: rowBytes))
        }
    }

    /// Height in rows of `plane` (chroma planes are subsampled).
    public func planeHeight(_ plane: Int) -> Int {
        guard plane > 0, pixelFormat.isYUV, let d = pixelFormat.descriptor else { return height }
        let shift = Int(d.pointee.log2_chroma_h)
        return (height + (1 << shift) - 1) >> shift
    }

    package func planeData(_ plane: Int) -> UnsafeMutablePointer<UInt8>? {
        withUnsafeBytes(of: pointer.pointee.data) { $0.load(fromByteOffset: plane * MemoryLayout<UnsafeMutablePointer<UInt8>?>.stride, as: UnsafeMutablePointer<UInt8>?.self) }
    }

    /// Copies the picture into `buffer` packed with no padding, as FFmpeg's rawvideo encoder does
    /// (`av_image_copy_to_buffer`, align 1). Returns the byte count. `buffer` grows as needed.
    @discardableResult
    public func copyPacked(into buffer: inout [UInt8]) throws -> Int {
        let size = pixelFormat.packedSize(width: width, height: height)
        guard size > 0 else { throw MediaError.unsupportedPixelFormat(name: pixelFormat.name) }
        if buffer.count < size { buffer = [UInt8](repeating: 0, count: size) }
        let written = buffer.withUnsafeMutableBufferPointer { dst -> Int32 in
            withUnsafeBytes(of: pointer.pointee.data) { dataRaw in
                withUnsafeBytes(of: pointer.pointee.linesize) { lineRaw in
                    let data = dataRaw.bindMemory(to: UnsafePointer<UInt8>?.self).baseAddress!
                    let lines = lineRaw.bindMemory(to: Int32.self).baseAddress!
                    return av_image_copy_to_buffer(dst.baseAddress, Int32(size), data, lines,
                                                   pixelFormat.av, pointer.pointee.width, pointer.pointee.height, 1)
                }
            }
        }
        try check(written, "av_image_copy_to_buffer")
        return Int(written)
    }
}

extension Int32 {
    var int: Int { Int(self) }
}

