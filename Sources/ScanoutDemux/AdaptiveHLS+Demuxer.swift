import CFFmpeg
import ScanoutCore

/// What a `Demuxer` reading an HLS master playlist says about its variants, and the change of
/// variant itself (`join`), for `AdaptiveHLS`.
extension Demuxer {
    /// The variants of an HLS master playlist (one for a media playlist); empty for other inputs.
    public var variants: [HLSVariant] { adaptive?.variants ?? [] }
    /// The variant being read now; nil for inputs other than HLS.
    public var currentVariant: HLSVariant? { adaptive?.current }
    /// The start variant and every change since, in order.
    public var variantSwitches: [VariantSwitch] { adaptive?.switches ?? [] }
    /// The last HLS segment's measured throughput in bits a second; nil before the first.
    public var segmentThroughput: Double? { adaptive?.throughput }
    /// The smoothed throughput estimate that the variant choice uses, bits a second, measured
    /// while segments download (`ThroughputEstimator`); nil before enough was measured.
    public var throughputEstimate: Double? { adaptive?.estimate }
    /// Segments abandoned mid-download for a lower variant since the start.
    public var abandonedSegments: Int { adaptive?.abandonedSegments ?? 0 }
    /// The buffer level the last variant decision used, seconds; nil before the first.
    public var adaptiveBufferedSeconds: Double? { adaptive?.lastBuffered }

    /// The seconds of media buffered ahead of playback, as the variant choice of an HLS master
    /// playlist should see them (a read-ahead's level); called on the thread that reads, before
    /// each decision (after every packet), so it must be cheap. Nil (the default): the media read
    /// ahead of a clock that runs at 1x from the first packet read. Ignored for other inputs.
    public var bufferedSeconds: (@Sendable () -> Double)? {
        get { adaptive?.bufferedSeconds }
        set { adaptive?.bufferedSeconds = newValue }
    }

    /// The variants `ctx` (libavformat's `hls` demuxer) made programs of: each program's video
    /// stream and its `variant_bitrate`. Empty for other formats.
    static func hlsVariants(_ ctx: UnsafeMutablePointer<AVFormatContext>) -> [HLSVariant] {
        guard String(cString: ctx.pointee.iformat.pointee.name) == "hls" else { return [] }
        var found: [HLSVariant] = []
        for p in 0..<Int(ctx.pointee.nb_programs) {
            guard let program = ctx.pointee.programs[p], let st = videoStream(of: program, in: ctx) else { continue }
            let rate = av_dict_get(program.pointee.metadata, "variant_bitrate", nil, 0).map { Int(String(cString: $0.pointee.value)) ?? 0 } ?? 0
            found.append(HLSVariant(id: Int(program.pointee.id), bitrate: rate, width: Int(st.pointee.codecpar.pointee.width),
                                    height: Int(st.pointee.codecpar.pointee.height), streamIndex: Int(st.pointee.index)))
        }
        return found
    }

    private static func videoStream(of program: UnsafeMutablePointer<AVProgram>, in ctx: UnsafeMutablePointer<AVFormatContext>) -> UnsafeMutablePointer<AVStream>? {
        for k in 0..<Int(program.pointee.nb_stream_indexes) {
            let i = Int(program.pointee.stream_index[k])
            if let st = ctx.pointee.streams[i], st.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_VIDEO { return st }
        }
        return nil
    }

    /// Opens the master playlist again reading only `variant`, positioned so that its next
    /// packets lead to the keyframe at `pts`, and makes it the demuxer's context (the old one is
    /// closed). Throws, leaving the demuxer as it was, when that fails.
    func join(_ variant: HLSVariant, at pts: Int64) throws {
        guard let meter = adaptive?.meter else { return }
        // What opening reads (the first segment of every variant) is no sample of the network
        // the variant will be read over.
        meter.measuring = false
        defer { meter.measuring = true }
        let ctx = Self.allocateContext(deadline: deadline, errorLines: errorLines)
        meter.hook(ctx)
        var dict = Self.openDictionary(input: input, options: options)
        defer { av_dict_free(&dict) }
        var opened: UnsafeMutablePointer<AVFormatContext>? = ctx
        deadline.arm(seconds: options.timeoutSeconds)
        defer { deadline.disarm() }
        let r = avformat_open_input(&opened, input, nil, &dict)
        guard r >= 0, let opened else {
            meter.unhook(ctx)
            throw Self.openError(input: input, code: r, deadline: deadline, timeout: options.timeoutSeconds, during: "opening another variant", detail: errorLines.last)
        }
        var owned: UnsafeMutablePointer<AVFormatContext>? = opened
        func fail(_ reason: String) -> MediaError {
            avformat_close_input(&owned)
            meter.unhook(ctx)
            return MediaError.readFailed(input: input, reason: "changing to variant \(variant): \(reason)")
        }
        guard let program = (0..<Int(opened.pointee.nb_programs)).compactMap({ opened.pointee.programs[$0] }).first(where: { Int($0.pointee.id) == variant.id }),
              let st = Self.videoStream(of: program, in: opened) else { throw fail("the playlist no longer lists it") }
        guard Rational(st.pointee.time_base) == Rational(stream.pointee.time_base) else { throw fail("its time base differs") }
        for i in 0..<Int(opened.pointee.nb_streams) where i != Int(st.pointee.index) {
            opened.pointee.streams[i]?.pointee.discard = AVDISCARD_ALL
        }
        routeSinks(in: opened)
        // The first read drops the other playlists and gives the demuxer the timestamp its seeks
        // count segments from; the packet itself comes again after the seek, or is not needed.
        let first = Packet()
        let read = av_read_frame(opened, first.pointer)
        guard read >= 0 else { throw fail(ffmpegErrorString(read)) }
        let sought = av_seek_frame(opened, st.pointee.index, pts, AVSEEK_FLAG_BACKWARD)
        guard sought >= 0 else { throw fail("seek failed: \(ffmpegErrorString(sought))") }
        var old: UnsafeMutablePointer<AVFormatContext>? = context
        avformat_close_input(&old)
        meter.unhook(context)
        context = opened
        stream = st
        activeStreamIndex = Int(st.pointee.index)
        _ = meter.takeSamples()
    }
}
