import CFFmpeg
import ScanoutCore
import ScanoutDemux

/// Pixel-format conversion with libswscale, bit-exact: `SWS_BICUBIC | SWS_BITEXACT`, the
/// matrix and range chosen exactly as FFmpeg's scale filter chooses them, so that the output
/// equals the ffmpeg tool's conversion byte for byte. Owns one `SwsContext` (freed once), rebuilt
/// only when the input or output changes. Not thread-safe; one owner at a time.
public final class Scaler {
    private struct Key: Equatable {
        var srcFormat: Int32, srcWidth: Int32, srcHeight: Int32
        var dstFormat: Int32, dstWidth: Int32, dstHeight: Int32
        var matrix: Int32, fullRange: Int32
    }

    private var context: OpaquePointer?
    private var key: Key?

    public init() {}

    deinit { sws_freeContext(context) }

    /// The YCbCr matrix FFmpeg's scale filter uses for a frame tagged `space`: the tag itself
    /// when it names one swscale knows, BT.601 (BT.470BG) otherwise, including untagged.
    public static func effectiveMatrix(for space: ColorSpace) -> Int32 {
        let v = Int32(space.rawValue)
        // swscale's table for "unspecified" holds the BT.601 coefficients too; naming it BT.470BG
        // says so plainly.
        if v < 1 || v > 10 || v == 8 || v == Int32(AVCOL_SPC_UNSPECIFIED.rawValue) { return Int32(AVCOL_SPC_BT470BG.rawValue) }
        return v
    }

    /// Converts `frame` to `format` at `width`×`height` (the frame's size when nil) into `output`,
    /// whose buffers (FFmpeg's default alignment) are reused when they fit and are not shared.
    public func convert(_ frame: VideoFrame, to format: PixelFormat, width: Int? = nil, height: Int? = nil, into output: VideoFrame) throws {
        let src = frame.pointer
        let dstW = Int32(width ?? frame.width), dstH = Int32(height ?? frame.height)
        try prepare(for: frame, to: format, width: dstW, height: dstH)
        let dst = output.pointer
        // Reuse the output's buffers when they already have this shape and nobody else holds
        // them: the steady state of a playback loop allocates nothing here.
        let reusable = dst.pointee.buf.0 != nil && dst.pointee.format == format.rawValue
            && dst.pointee.width == dstW && dst.pointee.height == dstH && av_frame_is_writable(dst) != 0
        if !reusable {
            av_frame_unref(dst)
            dst.pointee.format = format.rawValue
            dst.pointee.width = dstW
            dst.pointee.height = dstH
            try check(av_frame_get_buffer(dst, 0), "av_frame_get_buffer")
        }
        av_frame_copy_props(dst, src)
        try withUnsafeBytes(of: dst.pointee.data) { dd in
            try withUnsafeBytes(of: dst.pointee.linesize) { dl in
                try scale(frame, planes: dd.bindMemory(to: UnsafeMutablePointer<UInt8>?.self).baseAddress!,
                          strides: dl.bindMemory(to: Int32.self).baseAddress!)
            }
        }
    }

    /// Converts `frame` at its own size to the packed (one-plane) `format`, straight into
    /// `destination`: `frame.height` rows of `rowBytes` bytes each, at least `format`'s bytes
    /// per pixel times the width. No intermediate picture and no copy: what a renderer whose
    /// image lives in its own memory needs.
    public func convert(_ frame: VideoFrame, to format: PixelFormat, packedInto destination: UnsafeMutableRawBufferPointer, rowBytes: Int) throws {
        try convert(frame, to: format, width: frame.width, height: frame.height, packedInto: destination, rowBytes: rowBytes)
    }

    /// Converts `frame` to the packed `format` at `width`×`height`, straight into `destination`:
    /// `height` rows `rowBytes` apart (a rectangle of a larger picture when `rowBytes` is that
    /// picture's), the last one at least `format`'s bytes per pixel times `width` long.
    public func convert(_ frame: VideoFrame, to format: PixelFormat, width: Int, height: Int,
                        packedInto destination: UnsafeMutableRawBufferPointer, rowBytes: Int) throws {
        let lastRow = Int(av_image_get_linesize(format.av, Int32(width), 0))
        precondition(width > 0 && height > 0 && lastRow > 0 && rowBytes >= lastRow && destination.count >= rowBytes * (height - 1) + lastRow,
                     "Scaler: the destination is smaller than the picture")
        try prepare(for: frame, to: format, width: Int32(width), height: Int32(height))
        let planes: [UnsafeMutablePointer<UInt8>?] = [destination.baseAddress?.assumingMemoryBound(to: UInt8.self), nil, nil, nil]
        let strides: [Int32] = [Int32(rowBytes), 0, 0, 0]
        try planes.withUnsafeBufferPointer { p in
            try strides.withUnsafeBufferPointer { s in try scale(frame, planes: p.baseAddress!, strides: s.baseAddress!) }
        }
    }

    /// The context for this conversion: kept while the input and output stay the same, rebuilt
    /// (with FFmpeg's matrix and range choices) when they change.
    private func prepare(for frame: VideoFrame, to format: PixelFormat, width dstW: Int32, height dstH: Int32) throws {
        let src = frame.pointer
        let matrix = Self.effectiveMatrix(for: frame.colorSpace)
        let full: Int32 = frame.colorRange == .full ? 1 : (frame.colorRange == .limited ? 0 : -1)
        let k = Key(srcFormat: src.pointee.format, srcWidth: src.pointee.width, srcHeight: src.pointee.height,
                    dstFormat: format.rawValue, dstWidth: dstW, dstHeight: dstH, matrix: matrix, fullRange: full)
        guard key != k else { return }
        sws_freeContext(context)
        context = nil
        key = nil
        guard let ctx = sws_getContext(src.pointee.width, src.pointee.height, AVPixelFormat(rawValue: src.pointee.format),
                                       dstW, dstH, format.av, SWS_BICUBIC | SWS_BITEXACT, nil, nil, nil) else {
            throw MediaError.unsupportedPixelFormat(name: "\(frame.pixelFormat.name) to \(format.name)")
        }
        // As the scale filter does: keep swscale's own details, replace the input matrix
        // (and the output one with it) and the input range when the frame states it.
        var invTable: UnsafeMutablePointer<Int32>? = nil
        var table: UnsafeMutablePointer<Int32>? = nil
        var srcFull: Int32 = 0, dstFull: Int32 = 0, brightness: Int32 = 0, contrast: Int32 = 0, saturation: Int32 = 0
        sws_getColorspaceDetails(ctx, &invTable, &srcFull, &table, &dstFull, &brightness, &contrast, &saturation)
        let coefficients = sws_getCoefficients(matrix)
        if full >= 0 { srcFull = full }
        sws_setColorspaceDetails(ctx, coefficients, srcFull, coefficients, dstFull, brightness, contrast, saturation)
        context = ctx
        key = k
    }

    /// One `sws_scale` of the whole of `frame` into `planes` (four pointers and four strides).
    private func scale(_ frame: VideoFrame, planes: UnsafePointer<UnsafeMutablePointer<UInt8>?>,
                       strides: UnsafePointer<Int32>) throws {
        let src = frame.pointer
        let r = withUnsafeBytes(of: src.pointee.data) { sd in
            withUnsafeBytes(of: src.pointee.linesize) { sl in
                sws_scale(context,
                          sd.bindMemory(to: UnsafePointer<UInt8>?.self).baseAddress,
                          sl.bindMemory(to: Int32.self).baseAddress, 0, src.pointee.height, planes, strides)
            }
        }
        try check(r, "sws_scale")
    }
}
