import CFFmpeg
import Glibc
import ScanoutCore
import ScanoutDemux

/// A sideband subtitle file or URL (`.srt`, `.vtt`, `.ass`), or one subtitle track of a media file:
/// opened with libavformat, the track decoded whole (`read(track:)`), as a player does when an item
/// starts. A subtitle-only input has no video, so this is not a `Demuxer` (which requires one), and
/// every other stream is discarded unread by the demuxer where it can. Owns its
/// `AVFormatContext`, closed once in `deinit`; one owner at a time.
public final class SubtitleFile {
    public let input: String
    private var context: UnsafeMutablePointer<AVFormatContext>?
    private let deadline = Deadline()
    private let errorLines = ErrorLines()
    private let timeoutSeconds: Double

    /// Opens `input` (a path or URL); blocking calls are bounded by `timeoutSeconds`.
    public init(input: String, timeoutSeconds: Double = 10) throws {
        self.input = input
        self.timeoutSeconds = timeoutSeconds
        try Demuxer.checkLocalPath(input)
        let ctx = Demuxer.allocateContext(deadline: deadline, errorLines: errorLines)
        var dict = Demuxer.openDictionary(input: input, options: DemuxerOptions(timeoutSeconds: timeoutSeconds))
        defer { av_dict_free(&dict) }
        var opened: UnsafeMutablePointer<AVFormatContext>? = ctx
        deadline.arm(seconds: timeoutSeconds)
        let code = avformat_open_input(&opened, input, nil, &dict)
        if code < 0 {
            // avformat_open_input frees the context on failure.
            throw Demuxer.openError(input: input, code: code, deadline: deadline, timeout: timeoutSeconds,
                                    during: "opening", detail: errorLines.last)
        }
        context = opened
        deadline.arm(seconds: timeoutSeconds)
        let probe = avformat_find_stream_info(opened, nil)
        if probe < 0 {
            throw Demuxer.openError(input: input, code: probe, deadline: deadline, timeout: timeoutSeconds,
                                    during: "probing the streams", detail: errorLines.last)
        }
    }

    deinit {
        avformat_close_input(&context)
    }

    /// Decodes the events of subtitle stream `track` (nil: the first one), in file order: every
    /// one, or with `window`, those of the packets from a seek to `window.lowerBound` (seconds,
    /// the stream's clock; the container's keyframe at or before it) up to the first packet
    /// that starts at `window.upperBound` or later (a line shown at the window's end has
    /// started by then).
    public func read(track: Int? = nil, window: Range<Double>? = nil) throws -> SubtitleScript {
        guard let ctx = context else { throw MediaError.openFailed(input: input, reason: "closed") }
        let streams = (0..<Int(ctx.pointee.nb_streams)).compactMap { ctx.pointee.streams[$0] }
        guard let stream = streams.first(where: {
            $0.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_SUBTITLE && (track == nil || Int($0.pointee.index) == track)
        }) else {
            throw MediaError.openFailed(input: input, reason: track.map { "stream \($0) is not a subtitle track (see `scanout probe`)" }
                                        ?? "no subtitle stream (a .srt, .vtt or .ass file is expected)")
        }
        for s in streams where s != stream { s.pointee.discard = AVDISCARD_ALL }
        let decoder = try SubtitleDecoder(parameters: stream.pointee.codecpar, timeBase: Rational(stream.pointee.time_base), input: input)
        var script = SubtitleScript(codecName: decoder.codecName, header: decoder.header)
        if let window, window.lowerBound > 0 {
            deadline.arm(seconds: timeoutSeconds)
            let sought = av_seek_frame(ctx, -1, Int64(window.lowerBound * Double(SCANOUT_AV_TIME_BASE)), AVSEEK_FLAG_BACKWARD)
            if sought < 0 {
                throw Demuxer.openError(input: input, code: sought, deadline: deadline, timeout: timeoutSeconds,
                                        during: "seeking", detail: errorLines.last)
            }
        }
        let tb = Rational(stream.pointee.time_base).doubleValue
        let packet = Packet()
        while true {
            deadline.arm(seconds: timeoutSeconds)
            let code = av_read_frame(ctx, packet.pointer)
            if code == SCANOUT_AVERROR_EOF { break }
            if code < 0 {
                throw Demuxer.openError(input: input, code: code, deadline: deadline, timeout: timeoutSeconds,
                                        during: "reading", detail: errorLines.last)
            }
            defer { packet.unref() }
            guard packet.streamIndex == Int(stream.pointee.index) else { continue }
            if let window, let pts = packet.pts, Double(pts) * tb >= window.upperBound { break }
            script.events += try decoder.decode(packet)
        }
        deadline.disarm()
        return script
    }

    /// Opens `input` and reads subtitle track `track` (nil: the first) whole.
    public static func read(_ input: String, track: Int? = nil, timeoutSeconds: Double = 10) throws -> SubtitleScript {
        try SubtitleFile(input: input, timeoutSeconds: timeoutSeconds).read(track: track)
    }
}
