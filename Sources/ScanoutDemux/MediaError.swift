import CFFmpeg
import ScanoutCore

/// Everything that can go wrong between an input name and a decoded frame.
///
/// Every case names the input it concerns, says what failed, and where it can, what to do about
/// it. `description` is the single line that the command line prints on stderr.
public enum MediaError: Error, Equatable, CustomStringConvertible, Sendable {
    /// The path does not exist.
    case notFound(input: String)
    /// The path is a directory, not a media file.
    case isDirectory(input: String)
    /// The file exists but cannot be read by this user.
    case permissionDenied(input: String)
    /// libavformat could not recognise or open the input. `reason` is FFmpeg's error text.
    case openFailed(input: String, reason: String)
    /// A network input (or a stalled read) did not answer within the limit.
    case timedOut(input: String, seconds: Double, during: String)
    /// A live input (UDP, RTP) has sent no packet for `seconds`; it counts as gone after `timeout`.
    /// Reading can go on: the input stays open.
    case sourceSilent(input: String, seconds: Double, timeout: Double)
    /// The input holds no video stream.
    case noVideoStream(input: String)
    /// The stream's codec has no decoder in this libavcodec.
    case unsupportedCodec(input: String, codec: String)
    /// The decoder refused to open (bad extradata, unsupported profile, ...).
    case decoderOpenFailed(input: String, codec: String, reason: String)
    /// Reading the input failed part way, other than at its end.
    case readFailed(input: String, reason: String)
    /// The container says there is more data than the file holds.
    case truncated(input: String, detail: String)
    /// The demuxer flagged packets as damaged or incomplete.
    case damagedPackets(input: String, count: Int)
    /// Decoding finished but the bitstream held errors; they were concealed as FFmpeg does.
    case corruptBitstream(input: String, errors: Int, affectedFrames: Int)
    /// The input decoded to no frame at all.
    case noFrames(input: String)
    /// A frame index past the last frame.
    case frameOutOfRange(input: String, requested: Int, frameCount: Int)
    /// A time before the start or past the end.
    case timeOutOfRange(input: String, seconds: Double, durationSeconds: Double)
    /// A pixel format name that FFmpeg does not know, or a conversion swscale cannot do.
    case unsupportedPixelFormat(name: String)
    /// An output file could not be written.
    case outputFailed(path: String, reason: String)
    /// A libav* call failed where no more specific case applies.
    case ffmpeg(call: String, code: Int32, message: String)

    public var description: String {
        switch self {
        case .notFound(let input):
            return "\(input): no such file"
        case .isDirectory(let input):
            return "\(input): is a directory, not a media file"
        case .permissionDenied(let input):
            return "\(input): permission denied"
        case .openFailed(let input, let reason):
            return "\(input): cannot open as media: \(reason)"
        case .timedOut(let input, let seconds, let during) where during == LiveInputOptions.silenceStep:
            return "\(input): timeout: no packets for \(formatSeconds(seconds)) s, the source stopped sending (raise --live-timeout to wait longer)"
        case .timedOut(let input, let seconds, let during):
            return "\(input): no answer within \(formatSeconds(seconds)) s while \(during) (raise --timeout for slow sources)"
        case .sourceSilent(let input, let seconds, let timeout):
            return seconds >= timeout
                ? "\(input): timeout: no packets for \(formatSeconds(seconds)) s (limit \(formatSeconds(timeout)) s); waiting for the source to send again"
                : "\(input): no packets for \(formatSeconds(seconds)) s; buffering"
        case .noVideoStream(let input):
            return "\(input): no video stream"
        case .unsupportedCodec(let input, let codec) where codec.hasPrefix("unknown"):
            return "\(input): unsupported codec: the container names a codec this FFmpeg does not know\(codec == "unknown" ? "" : " " + codec.dropFirst(8))"
        case .unsupportedCodec(let input, let codec):
            return "\(input): unsupported codec '\(codec)': this libavcodec has no decoder for it"
        case .decoderOpenFailed(let input, let codec, let reason):
            return "\(input): cannot open the \(codec) decoder: \(reason)"
        case .readFailed(let input, let reason):
            return "\(input): read failed: \(reason)"
        case .truncated(let input, let detail):
            return "\(input): truncated file: \(detail)"
        case .damagedPackets(let input, let count):
            return "\(input): damaged container: \(count) packet\(count == 1 ? " was" : "s were") incomplete or damaged"
        case .corruptBitstream(let input, let errors, let frames):
            return "\(input): corrupt bitstream: \(errors) decode error\(errors == 1 ? "" : "s") concealed in \(frames) frame\(frames == 1 ? "" : "s")"
        case .noFrames(let input):
            return "\(input): no frame could be decoded"
        case .frameOutOfRange(let input, let requested, let count):
            return "\(input): frame \(requested) does not exist (the stream has \(count) frames, 0...\(max(count - 1, 0)))"
        case .timeOutOfRange(let input, let seconds, let duration):
            return "\(input): time \(formatSeconds(seconds)) s is outside the stream (0...\(formatSeconds(duration)) s)"
        case .unsupportedPixelFormat(let name):
            return "pixel format '\(name)' is not supported (see `ffmpeg -pix_fmts`)"
        case .outputFailed(let path, let reason):
            return "\(path): cannot write: \(reason)"
        case .ffmpeg(let call, let code, let message):
            return "\(call) failed: \(message) (\(code))"
        }
    }

    /// The input this error concerns, where there is one.
    public var input: String? {
        switch self {
        case .notFound(let i), .isDirectory(let i), .permissionDenied(let i), .noVideoStream(let i), .noFrames(let i):
            return i
        case .openFailed(let i, _), .timedOut(let i, _, _), .sourceSilent(let i, _, _), .unsupportedCodec(let i, _),
             .decoderOpenFailed(let i, _, _), .readFailed(let i, _), .truncated(let i, _),
             .corruptBitstream(let i, _, _), .damagedPackets(let i, _), .frameOutOfRange(let i, _, _), .timeOutOfRange(let i, _, _):
            return i
        case .unsupportedPixelFormat, .outputFailed, .ffmpeg:
            return nil
        }
    }
}

func formatSeconds(_ s: Double) -> String {
    let r = (s * 1000).rounded() / 1000
    return r == r.rounded() ? String(Int(r)) : String(r)
}

/// FFmpeg's text for an AVERROR code (wraps `av_strerror`).
public func ffmpegErrorString(_ code: Int32) -> String {
    var buffer = [CChar](repeating: 0, count: 256)
    if av_strerror(code, &buffer, buffer.count) < 0 {
        return "error \(code)"
    }
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// Throws `MediaError.ffmpeg` when a libav* call returned a negative code.
@discardableResult
package func check(_ code: Int32, _ call: @autoclosure () -> String) throws -> Int32 {
    if code < 0 { throw MediaError.ffmpeg(call: call(), code: code, message: ffmpegErrorString(code)) }
    return code
}
