import CFFmpeg
import ScanoutCore
#if canImport(Glibc)
import Glibc
#endif

/// How a demuxer opens its input: the format context and its options, the checks and errors of
/// opening, and what is read of the video stream at open.
extension Demuxer {
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
