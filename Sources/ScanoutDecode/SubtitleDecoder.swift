import CFFmpeg
import ScanoutCore
import ScanoutDemux

/// One subtitle event: shown from `start` for `duration` seconds, in the media time of its input
/// (the stream's timestamps in seconds), as one ASS dialogue line without its timing
/// (`ReadOrder,Layer,Style,Name,MarginL,MarginR,MarginV,Effect,Text`): the form libavcodec's text
/// subtitle decoders hand out and libass's `ass_process_chunk` takes.
public struct SubtitleEvent: Sendable, Hashable {
    public var start: Double
    public var duration: Double
    public var line: String

    public init(start: Double, duration: Double, line: String) {
        self.start = start; self.duration = duration; self.line = line
    }

    /// Shown at `time` (the end excluded).
    public func covers(_ time: Double) -> Bool { time >= start && time < start + duration }
}

/// A whole subtitle track as libass takes it: the ASS script header (styles, `PlayResX`/`PlayResY`;
/// libavcodec writes a default one for SubRip, WebVTT and mov_text) and the events.
public struct SubtitleScript: Sendable, Hashable {
    public var codecName: String
    public var header: String
    public var events: [SubtitleEvent]

    public init(codecName: String, header: String, events: [SubtitleEvent] = []) {
        self.codecName = codecName; self.header = header; self.events = events
    }
}

/// Decodes the packets of one text subtitle track (SubRip, WebVTT, mov_text, ASS/SSA) into ASS
/// events with libavcodec (`avcodec_decode_subtitle2`). Bitmap subtitles (PGS, DVB, VobSub) are
/// refused at opening. Owns its `AVCodecContext`, freed once in `deinit`; one owner at a time.
public final class SubtitleDecoder {
    private let context: UnsafeMutablePointer<AVCodecContext>
    private let timeBase: Rational
    private let input: String
    public let codecName: String
    /// The ASS script header the decoder writes (`subtitle_header`).
    public let header: String

    /// Opens a decoder for the stream whose parameters are `parameters` and timestamps count
    /// `timeBase`. `input` names the input in errors.
    package init(parameters: UnsafePointer<AVCodecParameters>, timeBase: Rational, input: String) throws {
        let id = parameters.pointee.codec_id
        let name = avcodec_get_name(id).map { String(cString: $0) } ?? "unknown"
        guard let codec = avcodec_find_decoder(id) else { throw MediaError.unsupportedCodec(input: input, codec: name) }
        guard let desc = avcodec_descriptor_get(id), desc.pointee.props & AV_CODEC_PROP_TEXT_SUB != 0 else {
            throw MediaError.unsupportedCodec(input: input, codec: "\(name) (bitmap subtitles are not drawn; choose a text track)")
        }
        guard let ctx = avcodec_alloc_context3(codec) else { fatalError("avcodec_alloc_context3: out of memory") }
        var owned: UnsafeMutablePointer<AVCodecContext>? = ctx
        if avcodec_parameters_to_context(ctx, parameters) < 0 {
            avcodec_free_context(&owned)
            throw MediaError.decoderOpenFailed(input: input, codec: name, reason: "bad codec parameters")
        }
        ctx.pointee.pkt_timebase = AVRational(num: timeBase.num, den: timeBase.den)
        let opened = avcodec_open2(ctx, codec, nil)
        if opened < 0 {
            avcodec_free_context(&owned)
            throw MediaError.decoderOpenFailed(input: input, codec: name, reason: ffmpegErrorString(opened))
        }
        context = ctx
        self.timeBase = timeBase
        self.input = input
        codecName = name
        if let h = ctx.pointee.subtitle_header, ctx.pointee.subtitle_header_size > 0 {
            header = String(decoding: UnsafeBufferPointer(start: h, count: Int(ctx.pointee.subtitle_header_size)), as: UTF8.self)
        } else {
            header = ""
        }
    }

    /// A decoder for subtitle track `track` of `demuxer` (an index from `demuxer.tracks`).
    public convenience init(demuxer: Demuxer, track: Int) throws {
        guard let par = demuxer.codecParameters(ofTrack: track),
              let info = demuxer.tracks.first(where: { $0.index == track }), info.kind == .subtitle else {
            throw MediaError.openFailed(input: demuxer.input, reason: "stream \(track) is not a subtitle track (see `scanout probe`)")
        }
        try self.init(parameters: par, timeBase: info.timeBase, input: demuxer.input)
    }

    deinit {
        var ctx: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&ctx)
    }

    /// The events of one packet (none for a packet without text). The start is the packet's
    /// timestamp plus the decoder's display offset; the duration the decoder's, else the packet's.
    public func decode(_ packet: Packet) throws -> [SubtitleEvent] {
        guard let pts = packet.pts else { return [] }
        var sub = AVSubtitle()
        var got: Int32 = 0
        try check(avcodec_decode_subtitle2(context, &sub, &got, packet.pointer), "avcodec_decode_subtitle2(\(codecName)) on \(input)")
        guard got != 0 else { return [] }
        defer { avsubtitle_free(&sub) }
        let base = Double(pts) * timeBase.doubleValue
        let start = base + Double(sub.start_display_time) / 1000
        let duration = sub.end_display_time > sub.start_display_time
            ? Double(sub.end_display_time - sub.start_display_time) / 1000
            : Double(packet.duration) * timeBase.doubleValue
        var events: [SubtitleEvent] = []
        for i in 0..<Int(sub.num_rects) {
            guard let rect = sub.rects[i], rect.pointee.type == SUBTITLE_ASS, let ass = rect.pointee.ass else { continue }
            events.append(SubtitleEvent(start: start, duration: duration, line: String(cString: ass)))
        }
        return events
    }
}
