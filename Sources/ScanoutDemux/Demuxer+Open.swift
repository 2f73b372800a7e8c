import CFFmpeg
import ScanoutCore
#if canImport(Glibc)
import Glibc
#endif

/// How a demuxer opens its input: the format context and its options, the checks and errors of
/// opening, and what is read of the video stream at open.
extension Demuxer {
    /// An input opened (`avformat_open_input`) and its streams described: the first step of `init`.
    struct OpenedInput {
        let context: UnsafeMutablePointer<AVFormatContext>
        /// Measures the segments of an HTTP input (for the choice of an HLS variant); nil otherwise.
        let meter: SegmentMeter?
        let live: LiveInput?
        let openSeconds: Double
        let probeSeconds: Double
        let probed: Bool
        /// Where the header (for MP4, the index) ended, before probing read on.
        let headerEnd: Int64

        /// Gives the input up: closes the context and unhooks the meter.
        func close() {
            var ctx: UnsafeMutablePointer<AVFormatContext>? = context
            avformat_close_input(&ctx)
            meter?.unhook(context)
        }
    }

    /// The stream a demuxer reads, and the HLS variants around it.
    struct StreamChoice {
        let stream: UnsafeMutablePointer<AVStream>
        let index: Int
        /// The stream read is an audio track (`Demuxer.audioOnly`).
        let audioOnly: Bool
        let cover: Int?
        let keptVariant: KeptVariant?
        /// An adaptive HLS input's variants, their selector and the one read first; empty or nil
        /// for any other input.
        let variants: [HLSVariant]
        let selector: VariantSelector?
        let startVariant: HLSVariant?
    }

    /// Opens `input` in a context whose blocking steps `deadline` bounds, reads its header and
    /// probes its streams (unless the header says everything: `describeFromHeader`), each timed.
    static func openInput(_ input: String, options: DemuxerOptions, deadline: Deadline, errorLines: ErrorLines) throws -> OpenedInput {
        let ctx = allocateContext(deadline: deadline, errorLines: errorLines)
        // Segments are measured for the choice of variant; a pinned read (`variantPin`) has none.
        let meter = isHTTP(input) && options.variantPin == nil ? SegmentMeter() : nil
        meter?.hook(ctx)
        var dict = openDictionary(input: input, options: options)
        defer { av_dict_free(&dict) }

        var ctxOpt: UnsafeMutablePointer<AVFormatContext>? = ctx
        deadline.arm(seconds: options.timeoutSeconds)
        let openStart = ClockTime.now()
        let live = try attachLiveInput(ctx, input: input, options: options.live, deadline: deadline)
        if live != nil {
            // A channel change waits for the probe: stop it once the streams are described
            // (at the first keyframe), not after the 20 frames it would otherwise time to guess
            // the frame rate — the stream's own timing (H.264 VUI) and its timestamps give it.
            av_dict_set(&dict, "fpsprobesize", "0", 0)
        }
        let openResult = avformat_open_input(&ctxOpt, input, live == nil ? nil : av_find_input_format("mpegts"), &dict)
        let probeStart = ClockTime.now()
        if openResult < 0 {
            // avformat_open_input frees the context on failure.
            meter?.unhook(ctx)
            throw openError(input: input, code: openResult, deadline: deadline, timeout: options.timeoutSeconds, during: "opening", detail: errorLines.last)
        }
        guard let opened = ctxOpt else { throw MediaError.openFailed(input: input, reason: "no context") }
        // Where the header (for MP4, the index) ended, before probing reads on.
        let headerEnd = opened.pointee.pb.map { avio_seek($0, 0, SEEK_CUR) } ?? 0

        deadline.arm(seconds: options.timeoutSeconds)
        let probed = !describeFromHeader(opened)
        let probe = probed ? avformat_find_stream_info(opened, nil) : 0
        let result = OpenedInput(context: opened, meter: meter, live: live, openSeconds: (probeStart - openStart).secondsValue,
                                 probeSeconds: (ClockTime.now() - probeStart).secondsValue, probed: probed, headerEnd: headerEnd)
        if probe < 0 {
            result.close()
            throw openError(input: input, code: probe, deadline: deadline, timeout: options.timeoutSeconds, during: "probing the streams", detail: errorLines.last)
        }
        return result
    }

    /// The stream to read: an HLS master playlist's start variant (or the one pinned), else the
    /// best video stream, else (an input whose only picture is a cover, or that has none) its
    /// audio track. The other streams are discarded. Gives the input up when there is none.
    static func chooseStream(_ opened: OpenedInput, input: String, options: DemuxerOptions) throws -> StreamChoice {
        let ctx = opened.context
        // An HLS master playlist's variants: the start one is read, the others discarded.
        // A pinned read keeps one variant, over HTTP or from a local master playlist.
        let listed = opened.meter == nil && options.variantPin == nil ? [] : hlsVariants(ctx)
        let pinned: HLSVariant?
        do { pinned = try options.variantPin?.choose(from: listed, caps: options.adaptive, input: input) } catch {
            opened.close()
            throw error
        }
        let variants = opened.meter == nil ? [] : listed
        let selector = variants.isEmpty ? nil : VariantSelector(variants: variants, options: options.adaptive)
        let startVariant = pinned ?? selector?.carried(by: Double(options.adaptive.initialBandwidth))
        var best = startVariant.map { Int32($0.streamIndex) } ?? av_find_best_stream(ctx, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0)
        // An input whose only picture is a cover (an mp3's embedded PNG) or that has none plays
        // its audio: the audio track is the stream read, and the picture a still (`StillDecoder`).
        var cover: Int?
        if options.acceptsAudioOnly, startVariant == nil, best < 0 || isAttachedPicture(ctx, Int(best)) {
            cover = best >= 0 ? Int(best) : nil
            best = av_find_best_stream(ctx, AVMEDIA_TYPE_AUDIO, -1, -1, nil, 0)
        }
        guard best >= 0, let st = ctx.pointee.streams[Int(best)] else {
            opened.close()
            throw MediaError.noVideoStream(input: input)
        }
        // Only the video stream's packets are read; the demuxer skips the rest cheaply.
        for i in 0..<Int(ctx.pointee.nb_streams) where i != Int(best) {
            ctx.pointee.streams[i]?.pointee.discard = AVDISCARD_ALL
        }
        return StreamChoice(stream: st, index: Int(best), audioOnly: st.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_AUDIO,
                            cover: cover, keptVariant: pinned.map { KeptVariant(variant: $0, count: listed.count) },
                            variants: variants, selector: selector, startVariant: startVariant)
    }

    private static func isAttachedPicture(_ ctx: UnsafeMutablePointer<AVFormatContext>, _ index: Int) -> Bool {
        guard let st = ctx.pointee.streams[index] else { return false }
        return st.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC != 0
    }

    /// The variant choice of an adaptive HLS input, from its start variant; nil for any other
    /// input, whose context then gets its own I/O back from the meter.
    static func adaptiveHLS(_ opened: OpenedInput, _ choice: StreamChoice, options: DemuxerOptions) -> AdaptiveHLS? {
        if let meter = opened.meter, let selector = choice.selector, let startVariant = choice.startVariant {
            return AdaptiveHLS(meter: meter, variants: choice.variants, selector: selector, start: startVariant,
                               estimate: Double(options.adaptive.initialBandwidth))
        }
        // Not HLS: nothing was opened through the meter.
        opened.meter?.unhook(opened.context, restore: true)
        return nil
    }

    /// Whether an MP4's index (moov) follows the media data: the header was read past the first packet.
    static func indexFollowsData(_ opened: OpenedInput, stream st: UnsafeMutablePointer<AVStream>) -> Bool {
        let ctx = opened.context
        guard ctx.pointee.pb != nil, let first = avformat_index_get_entry(st, 0) else { return false }
        return String(cString: ctx.pointee.iformat.pointee.name).hasPrefix("mov") && first.pointee.pos < opened.headerEnd
    }

    /// The stream read, described; an audio-only input's at a still's frame rate, with no frame count.
    static func describeRead(_ choice: StreamChoice, context: UnsafeMutablePointer<AVFormatContext>) -> VideoStreamInfo {
        var info = describe(stream: choice.stream, context: context)
        if choice.audioOnly {
            info.frameRate = VideoStreamInfo.stillFrameRate
            info.declaredFrameCount = nil
        }
        return info
    }

    /// Fills in what a probe would find, from the header alone, for an MP4 whose video streams
    /// are all H.264 with a constant frame rate and 4:2:0 pictures: the probe's cost is decoding a
    /// picture (a tenth of a second's worth at 1080p on a small machine) to learn what the `avcC`
    /// record's sequence parameter set says. False (nothing changed) for anything else.
    static func describeFromHeader(_ ctx: UnsafeMutablePointer<AVFormatContext>) -> Bool {
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
    static func playlistDuration(_ ctx: UnsafeMutablePointer<AVFormatContext>, in timeBase: AVRational) -> Int64? {
        guard String(cString: ctx.pointee.iformat.pointee.name) == "hls", ctx.pointee.duration != SCANOUT_AV_NOPTS_VALUE,
              ctx.pointee.duration > 0 else { return nil }
        return av_rescale_q(ctx.pointee.duration, scanout_av_time_base_q(), timeBase)
    }

    static func describe(stream st: UnsafeMutablePointer<AVStream>, context: UnsafeMutablePointer<AVFormatContext>) -> VideoStreamInfo {
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
        var info = VideoStreamInfo(
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
        info.colorPrimaries = ColorPrimaries(rawValue: par.pointee.color_primaries.rawValue)
        info.colorTransfer = ColorTransfer(rawValue: par.pointee.color_trc.rawValue)
        info.masteringDisplay = MasteringDisplay.of(stream: st)
        info.contentLightLevel = ContentLightLevel.of(stream: st)
        return info
    }
}
