import CFFmpeg
import ScanoutCore
#if canImport(Glibc)
import Glibc
#endif

/// Opens an input with libavformat and reads the packets of its best video stream; owns the
/// `AVFormatContext` (closed once, in `deinit`).
///
/// Inputs are local paths or any URL libavformat understands (`http://`, `https://`, `file:`).
/// Reads block the calling thread; every blocking step is bounded by `DemuxerOptions.timeoutSeconds`
/// through libavformat's interrupt callback. Not thread-safe; one owner at a time.
public final class Demuxer {
    public let input: String
    public let video: VideoStreamInfo
    /// The format context; replaced (`join`) when an adaptive HLS input changes variant.
    package var context: UnsafeMutablePointer<AVFormatContext>
    /// The video stream read; another variant's after a change of variant.
    package var stream: UnsafeMutablePointer<AVStream>
    let deadline: Deadline
    let options: DemuxerOptions
    let errorLines = ErrorLines()
    /// The variant choice of an HLS master playlist with variants; nil for any other input.
    var adaptive: AdaptiveHLS?
    /// The socket and transport-packet watch of a UDP/RTP input; nil for any other input.
    let live: LiveInput?
    /// A live input (UDP, RTP): joined mid-stream, with no start and no end.
    public var isLive: Bool { live != nil }
    /// Packets the demuxer flagged as damaged or cut short.
    public private(set) var corruptPackets = 0
    /// Video packets read since the start, or since the last seek.
    public private(set) var packetsRead = 0
    /// Packets the container's index lists before the point reading started from: 0 from the
    /// start; after a seek, the index position of the first packet read (nil when the index
    /// does not know it, or until that packet is read).
    private var packetsBeforeStart: Int? = 0
    private var locateStartInIndex = false
    /// Whether a read reached the end of the input.
    public private(set) var reachedEnd = false
    /// Whether the container's index came after the media data (an MP4 without faststart).
    private let indexFollowsData: Bool
    /// Whether the deadline interrupted a read since the last seek.
    private var readInterrupted = false
    /// Seconds the opening took: reading the header (`avformat_open_input`) and probing the
    /// streams (`avformat_find_stream_info`, 0 when skipped).
    public let openSeconds: Double
    public let probeSeconds: Double

    /// The input's start time in microseconds (`AVFormatContext.start_time`), nil when unknown.
    /// Without a probe, the earliest start time of its streams, as the probe computes it.
    public var formatStartTime: Int64? {
        if context.pointee.start_time != SCANOUT_AV_NOPTS_VALUE { return context.pointee.start_time }
        if probed { return nil }
        return (0..<Int(context.pointee.nb_streams)).compactMap { i -> Int64? in
            guard let st = context.pointee.streams[i], st.pointee.start_time != SCANOUT_AV_NOPTS_VALUE else { return nil }
            return av_rescale_q(st.pointee.start_time, st.pointee.time_base, scanout_av_time_base_q())
        }.min()
    }

    /// Whether the streams were probed (`avformat_find_stream_info`); false when the header said
    /// everything (`describeFromHeader`).
    public let probed: Bool

    /// Name of the container format (`mov,mp4,m4a,3gp,3g2,mj2`, `mpegts`, `matroska,webm`, ...).
    public var formatName: String { String(cString: context.pointee.iformat.pointee.name) }

    /// Whether a seek to a packet's byte position lands on that packet: MPEG-TS and MPEG-PS,
    /// whose packets the demuxer picks up wherever reading starts. (MP4 refuses byte seeks;
    /// Matroska allows them but resynchronises on the next cluster, after the packet.)
    public var canSeekByByte: Bool {
        let name = formatName
        return (name == "mpegts" || name == "mpeg") && context.pointee.iformat.pointee.flags & AVFMT_NO_BYTE_SEEK == 0
            && context.pointee.pb != nil
    }

    /// Whether the container's timestamp search takes presentation timestamps: MP4 (libavformat's
    /// mov demuxer shifts the time it is given from presentation to decoding time before it
    /// searches its index, so a decoding timestamp lands up to a GOP early) and Matroska (its
    /// cues list presentation times). Others search decoding timestamps.
    public var seeksByPresentationTime: Bool {
        formatName.hasPrefix("mov,") || formatName.hasPrefix("matroska")
    }

    /// Opens `input`; a `playerType` hint in its query (`movie.mp4?playerType=sw`) is taken off
    /// first (`ContentHint`), so the name opened and reported is the input without it. The steps:
    /// open and probe (`openInput`), choose the stream read (`chooseStream`), start the variant
    /// choice of an adaptive HLS input (`adaptiveHLS`), and describe the stream.
    public init(input original: String, options: DemuxerOptions = DemuxerOptions()) throws {
        let input = try ContentHint.split(original).input
        self.input = input
        self.options = options
        try Self.checkLocalPath(input)

        deadline = Deadline()
        let opened = try Self.openInput(input, options: options, deadline: deadline, errorLines: errorLines)
        live = opened.live
        openSeconds = opened.openSeconds
        probeSeconds = opened.probeSeconds
        probed = opened.probed

        let choice = try Self.chooseStream(opened, input: input, options: options)
        keptVariant = choice.keptVariant
        audioOnly = choice.audioOnly
        coverTrack = choice.cover
        context = opened.context
        stream = choice.stream
        activeStreamIndex = choice.index
        adaptive = Self.adaptiveHLS(opened, choice, options: options)
        indexFollowsData = Self.indexFollowsData(opened, stream: choice.stream)
        video = Self.describeRead(choice, context: opened.context)
        deadline.disarm()
        live?.watchStalls = true
    }

    deinit {
        var ctx: UnsafeMutablePointer<AVFormatContext>? = context
        avformat_close_input(&ctx)
        adaptive?.meter.unhook(context)
    }

    /// The one variant of an HLS master playlist read (`DemuxerOptions.variantPin`); nil otherwise.
    public let keptVariant: KeptVariant?

    /// The stream whose packets `read` hands out: the video stream, or the current variant's
    /// (the audio track of an audio-only input).
    var activeStreamIndex: Int

    /// An input with no video (or only a cover picture): `read` hands out its audio track's
    /// packets, and `video` describes that track (its time base, duration, a still's frame rate).
    public let audioOnly: Bool
    /// The cover picture's stream of an audio-only input (`AV_DISPOSITION_ATTACHED_PIC`).
    public let coverTrack: Int?

    /// The cover picture's packet, a copy (nil without one).
    public func coverPacket() -> Packet? {
        guard let coverTrack, let st = context.pointee.streams[coverTrack], st.pointee.attached_pic.size > 0 else { return nil }
        let p = Packet()
        av_packet_ref(p.pointer, &st.pointee.attached_pic)
        return p
    }

    /// Every stream of the input: the video, audio and subtitle tracks a player lists and
    /// chooses from (`TrackSelector`). HLS alternative renditions are streams of their own.
    public var tracks: [TrackInfo] {
        (0..<Int(context.pointee.nb_streams)).compactMap { i in context.pointee.streams[i].map(TrackInfo.describe) }
    }

    /// While a seek looks ahead for a keyframe, the packets it reads go to no sink: it reads them
    /// again from the keyframe.
    public var sinksPaused = false

    /// Streams other than the video whose packets go to a sink as `read` meets them.
    private var sinks: [Int: (Packet) -> Void] = [:]

    /// Reads the packets of track `index` (an audio or subtitle stream) from now on, handing each
    /// to `sink` on the reading thread, inside `read`, in the order the container interleaves
    /// them with the video. The packet is the reader's own and is refilled by the next read:
    /// a sink that keeps it keeps a `clone()`. One sink a track; `nil` stops reading it.
    public func route(track index: Int, to sink: ((Packet) -> Void)?) throws {
        guard index != activeStreamIndex || audioOnly, index >= 0, index < Int(context.pointee.nb_streams),
              let st = context.pointee.streams[index] else {
            throw MediaError.openFailed(input: input, reason: "no track \(index) to read beside the video (see the track list)")
        }
        sinks[index] = sink
        if index != activeStreamIndex { st.pointee.discard = sink == nil ? AVDISCARD_ALL : AVDISCARD_DEFAULT }
    }

    /// The codec parameters of track `index`, for opening its decoder. Valid while the demuxer lives.
    package func codecParameters(ofTrack index: Int) -> UnsafeMutablePointer<AVCodecParameters>? {
        guard index >= 0, index < Int(context.pointee.nb_streams) else { return nil }
        return context.pointee.streams[index]?.pointee.codecpar
    }

    /// Reads the tracks routed to sinks in a context that replaces the current one (a change
    /// of HLS variant opens the master playlist again with the same streams).
    func routeSinks(in ctx: UnsafeMutablePointer<AVFormatContext>) {
        for index in sinks.keys where index < Int(ctx.pointee.nb_streams) {
            ctx.pointee.streams[index]?.pointee.discard = AVDISCARD_DEFAULT
        }
    }

    /// The stream's codec parameters, for opening a decoder. Valid as long as the demuxer lives.
    package var codecParameters: UnsafeMutablePointer<AVCodecParameters> { stream.pointee.codecpar }

    /// Has `report` called on the reading thread, from inside a read, once that read has waited
    /// `seconds` for data (once per read; libavformat polls every 100 ms while it waits), with the
    /// seconds waited: a player can say it is buffering while the read still blocks. Not for live
    /// inputs, whose silence `read` reports itself (`MediaError.sourceSilent`).
    public func reportStalls(after seconds: Double, _ report: @escaping (Double) -> Void) {
        guard live == nil else { return }
        deadline.stallThreshold = .nanoseconds(inSeconds: seconds)
        deadline.onStall = report
    }

    /// Reads the next packet of the video stream into `packet` (`av_read_frame`).
    /// Returns false at the end of the input.
    public func read(into packet: Packet) throws -> Bool {
        while true {
            packet.unref()
            // An adaptive HLS input hands out packets it held until their group was whole.
            if let adaptive, adaptive.takeReady(into: packet) { return try handOut(packet) }
            deadline.arm(seconds: options.timeoutSeconds, reportingStalls: true)
            let r = av_read_frame(context, packet.pointer)
            deadline.disarm()
            // An adaptive HLS input stopped the read to abandon a late segment (`AdaptiveHLS`);
            // a packet of another track the read still gave comes again from the new variant.
            if deadline.stopped, let adaptive, r < 0 || packet.streamIndex != activeStreamIndex {
                try adaptive.abandonStopped(demuxer: self)
                continue
            }
            // The interrupt can fire inside a read that still returns a packet (the demuxer hands
            // out what its parser held); the following read then fails with the stored error.
            if deadline.fired { readInterrupted = true } else if r >= 0 { readInterrupted = false }
            if r == SCANOUT_AVERROR_EAGAIN, let live {
                try liveStalled(live)
                continue
            }
            let timedOut = readInterrupted || r == SCANOUT_AVERROR_EXIT || r == scanout_averror(ETIMEDOUT)
            if r < 0 && timedOut {
                // A live source (UDP, a stalled server) that stops sending ends here: a timeout.
                throw MediaError.timedOut(input: input, seconds: options.timeoutSeconds, during: "reading")
            }
            if r < 0, packetsRead == 0, indexFollowsData, isHTTP, !canSeekBack {
                throw MediaError.readFailed(input: input, reason: "the server ignores byte ranges and the index is at the end of the file, after the data (serve it with byte ranges, or move the index to the front: ffmpeg -i IN -c copy -movflags +faststart OUT)")
            }
            if r == SCANOUT_AVERROR_EOF {
                if let adaptive, adaptive.endOfInput(into: packet) { return try handOut(packet) }
                reachedEnd = true
                return false
            }
            if r < 0 {
                if r == scanout_averror(EIO) || r == SCANOUT_AVERROR_INVALIDDATA, isLocalFileShorterThanExpected {
                    throw MediaError.truncated(input: input, detail: "data ends before the container's index says it should")
                }
                throw MediaError.readFailed(input: input, reason: ffmpegErrorString(r))
            }
            if packet.streamIndex != activeStreamIndex {
                if !sinksPaused { sinks[packet.streamIndex]?(packet) }
                continue
            }
            // An audio-only input's track is both routed (its sound) and read (the still's pace).
            if audioOnly, !sinksPaused { sinks[packet.streamIndex]?(packet) }
            // Before the damage check: packets a change of variant drops are never decoded.
            if let adaptive, try !adaptive.admit(packet, demuxer: self) { continue }
            return try handOut(packet)
        }
    }

    /// The checks and counts of a video packet `read` hands out.
    private func handOut(_ packet: Packet) throws -> Bool {
        if packet.isCorrupt, isHTTP {
            // A connection that broke inside a packet and could not be reopened: libavformat
            // hands out the part it has. Decoded, it would show wrong pictures (concealed from
            // stale references); the source is given up instead.
            if readInterrupted { throw MediaError.timedOut(input: input, seconds: options.timeoutSeconds, during: "reading") }
            throw MediaError.readFailed(input: input, reason: "the connection broke inside a packet and reconnecting did not resume it")
        }
        if packet.isCorrupt { corruptPackets += 1 }
        if locateStartInIndex {
            locateStartInIndex = false
            packetsBeforeStart = indexPosition(ofDecodingTimestamp: packet.dts)
        }
        packetsRead += 1
        return true
    }

    /// What a read to the end found wrong with the container: fewer packets than its index lists
    /// from where reading started (a truncated file), or packets the demuxer flagged as damaged.
    /// Nil when it looked whole.
    public func containerDamage() -> MediaError? {
        if reachedEnd, let declared = video.declaredFrameCount, let before = packetsBeforeStart, before + packetsRead < declared {
            let detail = before == 0 ? "read \(packetsRead) of the \(declared) packets its index lists"
                : "read \(packetsRead) of the \(declared - before) packets its index lists after packet \(before)"
            return .truncated(input: input, detail: detail)
        }
        if corruptPackets > 0 {
            return .damagedPackets(input: input, count: corruptPackets)
        }
        return nil
    }

    /// Seeks so that the next packet read is the keyframe at or before `timestamp` (in the
    /// stream's time base), or the keyframe at byte `position` when given and the container
    /// allows byte seeks (`avformat_seek_file` / `av_seek_frame`).
    public func seek(toTimestamp timestamp: Int64, position: Int64? = nil) throws {
        deadline.arm(seconds: options.timeoutSeconds)
        defer { deadline.disarm() }
        let r: Int32
        if let position, canSeekByByte {
            r = av_seek_frame(context, -1, position, AVSEEK_FLAG_BYTE)
        } else {
            r = av_seek_frame(context, Int32(activeStreamIndex), timestamp, AVSEEK_FLAG_BACKWARD)
        }
        if r < 0 {
            if deadline.fired { throw MediaError.timedOut(input: input, seconds: options.timeoutSeconds, during: "seeking") }
            throw MediaError.readFailed(input: input, reason: "seek failed: \(ffmpegErrorString(r))")
        }
        // Counting starts again where the seek landed.
        adaptive?.restart()
        packetsRead = 0
        packetsBeforeStart = nil
        locateStartInIndex = true
        reachedEnd = false
        readInterrupted = false
    }

    /// Where the packet with decoding timestamp `dts` sits in the container's index (libavformat's
    /// index entries, in decoding order), nil when the index does not list it.
    private func indexPosition(ofDecodingTimestamp dts: Int64?) -> Int? {
        guard let dts else { return nil }
        let i = av_index_search_timestamp(stream, dts, AVSEEK_FLAG_BACKWARD | AVSEEK_FLAG_ANY)
        guard i >= 0, let entry = avformat_index_get_entry(stream, i), entry.pointee.timestamp == dts else { return nil }
        return Int(i)
    }

    /// Whether the input can seek backwards (false for a pipe, or a server that ignores byte ranges).
    private var canSeekBack: Bool {
        guard let pb = context.pointee.pb else { return true }
        return pb.pointee.seekable & AVIO_SEEKABLE_NORMAL != 0
    }

    private var isHTTP: Bool { Self.isHTTP(input) }
    static func isHTTP(_ input: String) -> Bool { input.hasPrefix("http://") || input.hasPrefix("https://") }

    /// A truncated MP4 ends reads with EIO/INVALIDDATA before EOF; the file's end tells it apart
    /// from a read error.
    private var isLocalFileShorterThanExpected: Bool {
        guard let pb = context.pointee.pb else { return false }
        return avio_feof(pb) != 0 || pb.pointee.eof_reached != 0
    }
}
