import CFFmpeg
import ScanoutCore
#if canImport(Glibc)
import Glibc
#endif

/// How an input is opened.
public struct DemuxerOptions: Sendable {
    /// Longest wait for the source to answer: opening, probing, and each read. Network sources
    /// that stall past it fail with `MediaError.timedOut` instead of hanging.
    public var timeoutSeconds: Double = 10
    /// How `udp://` and `rtp://` inputs are received (`LiveInput`).
    public var live = LiveInputOptions()
    /// How the variants of an HLS master playlist are chosen (`AdaptiveHLS`).
    public var adaptive = AdaptiveOptions()
    /// Whether an input with no video (or only a cover picture) opens, reading its audio track
    /// (the player and `probe`: `StillDecoder` shows the cover or the slate). Off for the
    /// commands whose output is the video's frames (`framemd5`, `render`, `decode`): for them such
    /// an input has no video stream.
    public var acceptsAudioOnly = false
    /// The content key of a CENC-encrypted MP4 (the mov demuxer's `decryption_key`, one key for
    /// every track); nil: none. Redacted in every description.
    public var decryptionKey: ContentKey?
    /// One variant of an HLS master playlist read from start to end (`VariantPin`: the frame-exact
    /// commands); nil: the variants are chosen and changed as the throughput allows.
    public var variantPin: VariantPin?
    /// How the player reads a network input with an end ahead of playback (`PacketReadAhead`).
    public var readAhead = ReadAheadOptions()
    public init(timeoutSeconds: Double = 10, live: LiveInputOptions = LiveInputOptions(), adaptive: AdaptiveOptions = AdaptiveOptions()) {
        self.timeoutSeconds = timeoutSeconds
        self.live = live
        self.adaptive = adaptive
    }
}

/// Facts about the chosen video stream, read once at open.
public struct VideoStreamInfo: Sendable {
    /// How often the still picture of an audio-only input is shown again (`StillDecoder`):
    /// enough for positions and seeks, few renders.
    public static let stillFrameRate = Rational(4, 1)
    public var index: Int
    public var codecName: String
    public var codecLongName: String
    public var profile: String?
    public var width: Int
    public var height: Int
    public var pixelFormat: PixelFormat
    /// Units of every timestamp of this stream.
    public var timeBase: Rational
    /// The frame rate FFmpeg guesses (`av_guess_frame_rate`); invalid when unknown.
    public var frameRate: Rational
    /// First presentation timestamp in `timeBase`, nil when unknown.
    public var startTime: Int64?
    /// Duration in `timeBase`, nil when unknown.
    public var duration: Int64?
    /// Frame count the container states, nil when it states none.
    public var declaredFrameCount: Int?
    public var sampleAspectRatio: Rational
    public var orientation: Orientation
    public var colorSpace: ColorSpace
    public var colorRange: ColorRange
    public var bitRate: Int64

    public var durationSeconds: Double? { duration.map { Double($0) * timeBase.doubleValue } }
}

extension Orientation {
    /// From a 3×3 display matrix in FFmpeg's 16.16 layout (`av_display_rotation_get`).
    init(displayMatrix m: UnsafePointer<Int32>) {
        var theta = -av_display_rotation_get(m).rounded()
        if theta.isNaN { theta = 0 }
        theta -= 360 * (theta / 360 + 0.9 / 360).rounded(.down)
        if abs(theta - 90) < 1 {
            // transpose=cclock_flip (a plain transpose) or transpose=clock
            self.init(rotation: 90, mirrored: m[3] > 0)
        } else if abs(theta - 180) < 1 {
            switch (m[0] < 0, m[4] < 0) {
            case (true, true): self.init(rotation: 180)
            case (true, false): self.init(rotation: 0, mirrored: true)
            case (false, true): self.init(rotation: 180, mirrored: true)
            case (false, false): self.init()
            }
        } else if abs(theta - 270) < 1 {
            // transpose=clock_flip or transpose=cclock
            self.init(rotation: 270, mirrored: m[3] < 0)
        } else if abs(theta) < 1, m[4] < 0 {
            self.init(rotation: 180, mirrored: true)  // vflip
        } else {
            // Angles other than quarter turns are not applied (ffmpeg would rotate with
            // interpolation); the picture is shown as stored.
            self.init()
        }
    }
}

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

    /// Fills in what a probe would find, from the header alone, for an MP4 whose video streams
    /// are all H.264 with a constant frame rate and 4:2:0 pictures: the probe's cost is decoding a
    /// picture (a tenth of a second's worth at 1080p on a small machine) to learn what the `avcC`
    /// record's sequence parameter set says. False (nothing changed) for anything else.
    private static func describeFromHeader(_ ctx: UnsafeMutablePointer<AVFormatContext>) -> Bool {
        guard String(cString: ctx.pointee.iformat.pointee.name).hasPrefix("mov,") else { return false }
        var found: [(UnsafeMutablePointer<AVCodecParameters>, H264SequenceHeader, AVPixelFormat)] = []
        for i in 0..<Int(ctx.pointee.nb_streams) {
            guard let st = ctx.pointee.streams[i], let par = st.pointee.codecpar,
                  par.pointee.codec_type == AVMEDIA_TYPE_VIDEO else { continue }
            guard par.pointee.codec_id == AV_CODEC_ID_H264, let extra = par.pointee.extradata,
                  st.pointee.r_frame_rate.num > 0, st.pointee.avg_frame_rate.num > 0,
                  par.pointee.width > 0, par.pointee.height > 0,
                  let sps = H264SequenceHeader(avcC: UnsafeBufferPointer(start: extra, count: Int(par.pointee.extradata_size))),
                  let format = sps.pixelFormat(containerRange: par.pointee.color_range) else { return false }
            found.append((par, sps, format))
        }
        guard !found.isEmpty else { return false }
        for (par, sps, format) in found {
            par.pointee.format = format.rawValue
            par.pointee.profile = sps.profile
            par.pointee.level = Int32(sps.levelIDC)
            if let sar = sps.sampleAspectRatio, par.pointee.sample_aspect_ratio.num == 0 {
                par.pointee.sample_aspect_ratio = AVRational(num: sar.num, den: sar.den)
            }
            if let full = sps.fullRange { par.pointee.color_range = full ? AVCOL_RANGE_JPEG : AVCOL_RANGE_MPEG }
            if let c = sps.colour {
                par.pointee.color_primaries = AVColorPrimaries(rawValue: UInt32(c.primaries))
                par.pointee.color_trc = AVColorTransferCharacteristic(rawValue: UInt32(c.transfer))
                par.pointee.color_space = AVColorSpace(rawValue: UInt32(c.matrix))
            }
            if sps.frameMBsOnly { par.pointee.field_order = AV_FIELD_PROGRESSIVE }
        }
        return true
    }

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
    /// first (`ContentHint`), so the name opened and reported is the input without it.
    public init(input original: String, options: DemuxerOptions = DemuxerOptions()) throws {
        let input = try ContentHint.split(original).input
        self.input = input
        self.options = options
        try Self.checkLocalPath(input)

        deadline = Deadline()
        let ctx = Self.allocateContext(deadline: deadline, errorLines: errorLines)
        // Segments are measured for the choice of variant; a pinned read (`variantPin`) has none.
        let meter = Self.isHTTP(input) && options.variantPin == nil ? SegmentMeter() : nil
        meter?.hook(ctx)
        var dict = Self.openDictionary(input: input, options: options)
        defer { av_dict_free(&dict) }

        var ctxOpt: UnsafeMutablePointer<AVFormatContext>? = ctx
        deadline.arm(seconds: options.timeoutSeconds)
        let openStart = monotonicNanoseconds()
        live = try Self.attachLiveInput(ctx, input: input, options: options.live, deadline: deadline)
        if live != nil {
            // A channel change waits for the probe: stop it once the streams are described
            // (at the first keyframe), not after the 20 frames it would otherwise time to guess
            // the frame rate — the stream's own timing (H.264 VUI) and its timestamps give it.
            av_dict_set(&dict, "fpsprobesize", "0", 0)
        }
        let openResult = avformat_open_input(&ctxOpt, input, live == nil ? nil : av_find_input_format("mpegts"), &dict)
        let probeStart = monotonicNanoseconds()
        openSeconds = Double(probeStart - openStart) / 1e9
        if openResult < 0 {
            // avformat_open_input frees the context on failure.
            meter?.unhook(ctx)
            throw Self.openError(input: input, code: openResult, deadline: deadline, timeout: options.timeoutSeconds, during: "opening", detail: errorLines.last)
        }
        guard let opened = ctxOpt else { throw MediaError.openFailed(input: input, reason: "no context") }
        // Where the header (for MP4, the index) ended, before probing reads on.
        let headerEnd = opened.pointee.pb.map { avio_seek($0, 0, SEEK_CUR) } ?? 0

        deadline.arm(seconds: options.timeoutSeconds)
        probed = !Self.describeFromHeader(opened)
        let probe = probed ? avformat_find_stream_info(opened, nil) : 0
        probeSeconds = Double(monotonicNanoseconds() - probeStart) / 1e9
        if probe < 0 {
            avformat_close_input(&ctxOpt)
            meter?.unhook(ctx)
            throw Self.openError(input: input, code: probe, deadline: deadline, timeout: options.timeoutSeconds, during: "probing the streams", detail: errorLines.last)
        }

        // An HLS master playlist's variants: the start one is read, the others discarded.
        // A pinned read keeps one variant, over HTTP or from a local master playlist.
        let listed = meter == nil && options.variantPin == nil ? [] : Self.hlsVariants(opened)
        let pinned: HLSVariant?
        do { pinned = try options.variantPin?.choose(from: listed, caps: options.adaptive, input: input) } catch {
            avformat_close_input(&ctxOpt)
            meter?.unhook(ctx)
            throw error
        }
        keptVariant = pinned.map { KeptVariant(variant: $0, count: listed.count) }
        let variants = meter == nil ? [] : listed
        let selector = variants.isEmpty ? nil : VariantSelector(variants: variants, options: options.adaptive)
        let startVariant = pinned ?? selector?.carried(by: Double(options.adaptive.initialBandwidth))
        var best = startVariant.map { Int32($0.streamIndex) } ?? av_find_best_stream(opened, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0)
        // An input whose only picture is a cover (an mp3's embedded PNG) or that has none plays
        // its audio: the audio track is the stream read, and the picture a still (`StillDecoder`).
        var cover: Int?
        if options.acceptsAudioOnly, startVariant == nil, best < 0 || Self.isAttachedPicture(opened, Int(best)) {
            cover = best >= 0 ? Int(best) : nil
            best = av_find_best_stream(opened, AVMEDIA_TYPE_AUDIO, -1, -1, nil, 0)
        }
        guard best >= 0, let st = opened.pointee.streams[Int(best)] else {
            avformat_close_input(&ctxOpt)
            meter?.unhook(ctx)
            throw MediaError.noVideoStream(input: input)
        }
        audioOnly = st.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_AUDIO
        coverTrack = cover
        // Only the video stream's packets are read; the demuxer skips the rest cheaply.
        for i in 0..<Int(opened.pointee.nb_streams) where i != Int(best) {
            opened.pointee.streams[i]?.pointee.discard = AVDISCARD_ALL
        }
        context = opened
        stream = st
        activeStreamIndex = Int(best)
        if let meter, let selector, let startVariant {
            adaptive = AdaptiveHLS(meter: meter, variants: variants, selector: selector, start: startVariant,
                                   estimate: Double(options.adaptive.initialBandwidth))
        } else {
            // Not HLS: nothing was opened through the meter.
            meter?.unhook(opened, restore: true)
        }
        // An MP4 whose index (moov) follows the media data: the header was read past the first packet.
        if opened.pointee.pb != nil, let first = avformat_index_get_entry(st, 0) {
            indexFollowsData = String(cString: opened.pointee.iformat.pointee.name).hasPrefix("mov") && first.pointee.pos < headerEnd
        } else {
            indexFollowsData = false
        }
        var info = Self.describe(stream: st, context: opened)
        if audioOnly {
            info.frameRate = VideoStreamInfo.stillFrameRate
            info.declaredFrameCount = nil
        }
        video = info
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

    private static func isAttachedPicture(_ ctx: UnsafeMutablePointer<AVFormatContext>, _ index: Int) -> Bool {
        guard let st = ctx.pointee.streams[index] else { return false }
        return st.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC != 0
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

    /// A format context whose blocking calls `deadline` bounds and whose log lines go to `errorLines`.
    package static func allocateContext(deadline: Deadline, errorLines: ErrorLines) -> UnsafeMutablePointer<AVFormatContext> {
        guard let ctx = avformat_alloc_context() else { fatalError("avformat_alloc_context: out of memory") }
        ctx.pointee.interrupt_callback.callback = { opaque in
            guard let opaque else { return 0 }
            return Unmanaged<Deadline>.fromOpaque(opaque).takeUnretainedValue().expired ? 1 : 0
        }
        ctx.pointee.interrupt_callback.opaque = Unmanaged.passUnretained(deadline).toOpaque()
        FFmpegLog.ensureInstalled()
        ctx.pointee.opaque = Unmanaged.passUnretained(errorLines).toOpaque()
        return ctx
    }

    /// The options `avformat_open_input` gets for `input` (the caller frees them).
    package static func openDictionary(input: String, options: DemuxerOptions) -> OpaquePointer? {
        var dict: OpaquePointer? = nil
        if isHTTP(input) {
            // A connection that stalls for half the timeout, or is reset before the end of the
            // body, is opened again at the byte where it stopped (a range request), with no
            // frame lost or repeated; a read that has not recovered within the whole timeout
            // fails (the deadline below), and the player moves on.
            let half = max(options.timeoutSeconds / 2, 0.1)
            av_dict_set(&dict, "rw_timeout", String(Int64(half * 1_000_000)), 0)
            av_dict_set(&dict, "reconnect", "1", 0)
            av_dict_set(&dict, "reconnect_streamed", "1", 0)
            av_dict_set(&dict, "reconnect_on_network_error", "1", 0)
            av_dict_set(&dict, "reconnect_delay_max", String(max(1, Int(half))), 0)
            // The hls demuxer's: one connection a segment, each closed at its end, so that every
            // segment passes through the segment meter (`SegmentMeter`); the live start.
            av_dict_set(&dict, "http_persistent", "0", 0)
            av_dict_set(&dict, "http_multiple", "0", 0)
            av_dict_set(&dict, "live_start_index", String(options.adaptive.liveStartIndex), 0)
            // A live playlist that does not grow is waited for until the timeout, not given up
            // after a few reloads (libavformat's default count differs between versions).
            av_dict_set(&dict, "max_reload", "1000000", 0)
        }
        if isHTTP(input) || input.lowercased().hasSuffix(".m3u8") {
            // The hls demuxer reads subtitle renditions (`EXT-X-MEDIA:TYPE=SUBTITLES`, WebVTT
            // playlists) only below the normal compliance level (libavformat 5.1 to 7 mark them
            // experimental); otherwise they are left out of the stream list.
            av_dict_set(&dict, "strict", "experimental", 0)
        }
        if let key = options.decryptionKey {
            av_dict_set(&dict, "decryption_key", key.hex, 0)
        }
        if !isHTTP(input) {
            av_dict_set(&dict, "rw_timeout", String(Int64(options.timeoutSeconds * 1_000_000)), 0)
            av_dict_set(&dict, "reconnect", "0", 0)
        }
        return dict
    }

    /// The stream's codec parameters, for opening a decoder. Valid as long as the demuxer lives.
    package var codecParameters: UnsafeMutablePointer<AVCodecParameters> { stream.pointee.codecpar }

    /// Has `report` called on the reading thread, from inside a read, once that read has waited
    /// `seconds` for data (once per read; libavformat polls every 100 ms while it waits), with the
    /// seconds waited: a player can say it is buffering while the read still blocks. Not for live
    /// inputs, whose silence `read` reports itself (`MediaError.sourceSilent`).
    public func reportStalls(after seconds: Double, _ report: @escaping (Double) -> Void) {
        guard live == nil else { return }
        deadline.stallThreshold = UInt64(seconds * 1e9)
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

    package static func checkLocalPath(_ input: String) throws {
        // URLs other than file: are libavformat's business.
        if let colon = input.firstIndex(of: ":"), input[..<colon].count > 1,
           input[..<colon].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "+" || $0 == "." || $0 == "-" }),
           !input.hasPrefix("file:") {
            return
        }
        let path = input.hasPrefix("file:") ? String(input.dropFirst(5)) : input
        var st = stat()
        if stat(path, &st) != 0 {
            switch errno {
            case ENOENT, ENOTDIR: throw MediaError.notFound(input: input)
            case EACCES: throw MediaError.permissionDenied(input: input)
            default: throw MediaError.openFailed(input: input, reason: String(cString: strerror(errno)))
            }
        }
        if (st.st_mode & S_IFMT) == S_IFDIR { throw MediaError.isDirectory(input: input) }
        if access(path, R_OK) != 0 { throw MediaError.permissionDenied(input: input) }
    }

    package static func openError(input: String, code: Int32, deadline: Deadline, timeout: Double, during: String, detail: String?) -> MediaError {
        if deadline.fired || code == SCANOUT_AVERROR_EXIT || code == scanout_averror(ETIMEDOUT) {
            return .timedOut(input: input, seconds: timeout, during: during)
        }
        if code == scanout_averror(ENOENT) { return .notFound(input: input) }
        if code == scanout_averror(EACCES) { return .permissionDenied(input: input) }
        if code == SCANOUT_AVERROR_INVALIDDATA {
            if let detail {
                return .openFailed(input: input, reason: "damaged or incomplete container: \(detail)")
            }
            return .openFailed(input: input, reason: "not a media file libavformat recognises (\(ffmpegErrorString(code)))")
        }
        return .openFailed(input: input, reason: detail.map { "\(ffmpegErrorString(code)): \($0)" } ?? ffmpegErrorString(code))
    }

    /// An HLS VOD playlist's length (the sum of its `EXTINF`s, which libavformat's `hls` demuxer
    /// puts in the format's duration when the playlist ends with `#EXT-X-ENDLIST`), in `timeBase`:
    /// its streams state none of their own. Nil for other formats, and for a live playlist.
    private static func playlistDuration(_ ctx: UnsafeMutablePointer<AVFormatContext>, in timeBase: AVRational) -> Int64? {
        guard String(cString: ctx.pointee.iformat.pointee.name) == "hls", ctx.pointee.duration != SCANOUT_AV_NOPTS_VALUE,
              ctx.pointee.duration > 0 else { return nil }
        return av_rescale_q(ctx.pointee.duration, scanout_av_time_base_q(), timeBase)
    }

    private static func describe(stream st: UnsafeMutablePointer<AVStream>, context: UnsafeMutablePointer<AVFormatContext>) -> VideoStreamInfo {
        let par = st.pointee.codecpar!
        let desc = avcodec_descriptor_get(par.pointee.codec_id)
        let codecName = desc.map { String(cString: $0.pointee.name) } ?? "unknown"
        let longName = desc.flatMap { $0.pointee.long_name.map { String(cString: $0) } } ?? codecName
        let profile = avcodec_profile_name(par.pointee.codec_id, par.pointee.profile).map { String(cString: $0) }

        var orientation = Orientation.identity
        var size: Int = 0
        if let sd = av_stream_get_side_data(st, AV_PKT_DATA_DISPLAYMATRIX, &size), size >= 9 * 4 {
            orientation = sd.withMemoryRebound(to: Int32.self, capacity: 9) { Orientation(displayMatrix: $0) }
        }
        let start = st.pointee.start_time == SCANOUT_AV_NOPTS_VALUE ? nil : st.pointee.start_time
        let duration = st.pointee.duration != SCANOUT_AV_NOPTS_VALUE ? st.pointee.duration : Self.playlistDuration(context, in: st.pointee.time_base)
        let sar = av_guess_sample_aspect_ratio(context, st, nil)
        let range: ColorRange = par.pointee.color_range == AVCOL_RANGE_JPEG ? .full
            : (par.pointee.color_range == AVCOL_RANGE_MPEG ? .limited : .unspecified)
        return VideoStreamInfo(
            index: Int(st.pointee.index),
            codecName: codecName,
            codecLongName: longName,
            profile: profile,
            width: Int(par.pointee.width),
            height: Int(par.pointee.height),
            pixelFormat: PixelFormat(rawValue: par.pointee.format),
            timeBase: Rational(st.pointee.time_base),
            frameRate: Rational(av_guess_frame_rate(context, st, nil)),
            startTime: start,
            duration: duration,
            declaredFrameCount: st.pointee.nb_frames > 0 ? Int(st.pointee.nb_frames) : nil,
            sampleAspectRatio: Rational(sar),
            orientation: orientation,
            colorSpace: ColorSpace(rawValue: par.pointee.color_space.rawValue),
            colorRange: range,
            bitRate: par.pointee.bit_rate
        )
    }
}

/// A monotonic deadline that libavformat's interrupt callback polls. Shared between the demuxer
/// and the callback on the same thread (libavformat calls it from inside the blocking call).
package final class Deadline {
    package init() {}
    private var limit: UInt64 = 0
    private(set) var fired = false
    private var armedAt: UInt64 = 0
    /// Reads only: after this many nanoseconds without a return, `onStall` is called once, from
    /// inside the read (0: never).
    private var stallAfter: UInt64 = 0
    package var stallThreshold: UInt64 = 0
    package var onStall: ((Double) -> Void)?
    /// Reads only: asked while a read blocks; true stops the read (`stopped`), which is no
    /// timeout: an adaptive HLS input abandoning a late segment (`AdaptiveHLS`).
    package var stopReading: (() -> Bool)?
    private var mayStop = false
    private(set) var stopped = false

    package func arm(seconds: Double, reportingStalls: Bool = false) {
        fired = false
        stopped = false
        mayStop = reportingStalls
        armedAt = monotonicNanoseconds()
        limit = armedAt + UInt64(max(seconds, 0.001) * 1e9)
        stallAfter = reportingStalls && onStall != nil ? stallThreshold : 0
    }

    package func disarm() { limit = 0 }

    package var expired: Bool {
        guard limit != 0 else { return false }
        if stopped { return true }
        let now = monotonicNanoseconds()
        if now >= limit { fired = true }
        if stallAfter > 0, now - armedAt >= stallAfter, !fired {
            stallAfter = 0
            onStall?(Double(now - armedAt) / 1e9)
        }
        if !fired, mayStop, let stopReading, stopReading() { stopped = true }
        return fired || stopped
    }
}
