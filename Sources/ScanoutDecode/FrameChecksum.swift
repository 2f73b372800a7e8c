import CFFmpeg
import ScanoutCore
import ScanoutDemux

/// Per-frame MD5 checksums in the layout of FFmpeg's `framemd5` muxer, so that the output of
/// `scanout framemd5 X` can be compared line by line with `ffmpeg -i X -map 0:v:0 -f framemd5 -`.
///
/// The hash covers the frame packed with no padding (what FFmpeg's rawvideo encoder emits).
/// Timestamps follow the ffmpeg tool: time base 1/frame rate (`av_guess_frame_rate`), and
/// each frame's timestamp rescaled to it from the stream's, counted from the input's start time.
public struct FrameChecksum {
    public let timeBase: Rational
    private let streamTimeBase: Rational
    private let startOffset: Int64
    private var buffer: [UInt8] = []

    public init(video: VideoStreamInfo, formatStartTime: Int64?) {
        let rate = video.frameRate.isValid ? video.frameRate : Rational(25, 1)
        timeBase = rate.inverted
        streamTimeBase = video.timeBase
        // The tool shifts every input so that it starts at 0 (the file's start, in AV_TIME_BASE).
        startOffset = formatStartTime.map { av_rescale_q($0, scanout_av_time_base_q(), video.timeBase.av) } ?? 0
    }

    /// The header lines for a stream of `width`×`height` frames with sample aspect ratio `sar`.
    public func header(width: Int, height: Int, sar: Rational) -> String {
        // An unknown aspect ratio is square, as the ffmpeg tool prints it.
        let s = sar.isValid ? sar : Rational(1, 1)
        return """
        #format: frame checksums
        #version: 2
        #hash: MD5
        #software: \(lavfIdent)
        #tb 0: \(timeBase)
        #media_type 0: video
        #codec_id 0: rawvideo
        #dimensions 0: \(width)x\(height)
        #sar 0: \(s)
        #stream#, dts,        pts, duration,     size, hash

        """
    }

    /// The MD5 of `frame` packed with no padding, as 32 lowercase hex digits.
    public mutating func md5(of frame: VideoFrame) throws -> (hex: String, size: Int) {
        let size = try frame.copyPacked(into: &buffer)
        var digest = [UInt8](repeating: 0, count: 16)
        buffer.withUnsafeBufferPointer { av_md5_sum(&digest, $0.baseAddress, Int(size)) }
        return (digest.map { hexByte($0) }.joined(), size)
    }

    /// The frame's timestamp in `timeBase`, `fallback` when the frame has none.
    public func timestamp(of frame: VideoFrame, fallback: Int64) -> Int64 {
        guard let pts = frame.pts else { return fallback }
        let shifted = pts - startOffset
        // Rounded to nearest, as the tool's frame-rate conversion does.
        return Int64((Double(shifted) * streamTimeBase.doubleValue / timeBase.doubleValue).rounded())
    }

    /// One line for `frame`: `0, dts, pts, duration, size, md5`.
    public mutating func line(for frame: VideoFrame, fallbackTimestamp: Int64) throws -> String {
        let (hex, size) = try md5(of: frame)
        let ts = timestamp(of: frame, fallback: fallbackTimestamp)
        return "0, \(pad(ts, 10)), \(pad(ts, 10)), \(pad(1, 8)), \(pad(Int64(size), 8)), \(hex)\n"
    }
}

private let lavfIdent = "Lavf\(LIBAVFORMAT_VERSION_MAJOR).\(LIBAVFORMAT_VERSION_MINOR).\(LIBAVFORMAT_VERSION_MICRO)"

private let hexDigits = Array("0123456789abcdef".utf8)
private func hexByte(_ b: UInt8) -> String {
    String(decoding: [hexDigits[Int(b >> 4)], hexDigits[Int(b & 15)]], as: UTF8.self)
}

private func pad(_ v: Int64, _ width: Int) -> String {
    let s = String(v)
    return s.count >= width ? s : String(repeating: " ", count: width - s.count) + s
}
