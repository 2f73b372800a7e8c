import CFFmpeg

/// The variant choice of an HLS master playlist read by libavformat's `hls` demuxer: which
/// variant is read, what each segment measured (`SegmentMeter`), and the change of variant at a
/// keyframe, frame-exact.
///
/// How a change happens, and why this way: the `hls` demuxer stops reading a playlist whose
/// streams are all discarded only before its first packet is read (`recheck_discard_flags` closes
/// playlists on the first read only); once reading has begun, a discarded variant goes on being
/// downloaded. So a change opens a second format context on the same master playlist, discards
/// every stream but the new variant's before its first read (the demuxer then drops the other
/// playlists), and seeks it to the keyframe the old variant just reached (the demuxer restarts
/// the new playlist at the segment holding that time). Packets of the new variant before that
/// keyframe are dropped, the old context is closed, and the keyframe at the same presentation
/// time is the first packet handed out: variants whose keyframes align (the same GOP, segment
/// boundaries at keyframes) change with no frame lost or repeated.
///
/// Used by the thread that owns its `Demuxer`.
final class AdaptiveHLS {
    let meter: SegmentMeter
    let variants: [HLSVariant]
    private var selector: VariantSelector
    private(set) var current: HLSVariant
    /// The last segment's measured throughput, bits a second.
    private(set) var throughput: Double?
    /// Every choice since the start: the start variant first, then each change.
    private(set) var switches: [VariantSwitch]
    /// Segments measured since the start.
    private(set) var segmentsMeasured = 0
    /// Why the last change that was decided did not happen (the new context failed to open).
    private(set) var lastRefusal: String?
    /// A change decided, waiting for the next keyframe of the current variant.
    private var pending: (to: HLSVariant, reason: String, bandwidth: Double)?
    /// A change under way: packets of the new variant are dropped until its keyframe at `boundary`.
    private var joining: (to: HLSVariant, reason: String, bandwidth: Double, boundary: Int64)?
    /// The highest presentation timestamp handed out.
    private var lastPts: Int64?

    init(meter: SegmentMeter, variants: [HLSVariant], selector: VariantSelector, start: HLSVariant, estimate: Double) {
        self.meter = meter
        self.variants = variants
        self.selector = selector
        current = start
        switches = [VariantSwitch(from: nil, to: start, bandwidth: estimate, reason: "start: the initial bandwidth estimate", pts: nil)]
        // Opening probes every variant at once; only segments of the variant played are measured.
        _ = meter.takeSamples()
    }

    /// After a seek: a change decided or under way is dropped (the next segments measured decide
    /// again), and keyframes count from where reading starts.
    func restart() {
        if let j = joining {
            // The new variant's context is already the one read.
            switches.append(VariantSwitch(from: current, to: j.to, bandwidth: j.bandwidth, reason: j.reason, pts: nil))
            current = j.to
        }
        pending = nil
        joining = nil
        lastPts = nil
        _ = meter.takeSamples()
    }

    /// Whether `packet`, of the active stream, is handed out; may change the demuxer's context
    /// (the next read then comes from the new variant).
    func admit(_ packet: Packet, demuxer: Demuxer) throws -> Bool {
        if let j = joining {
            guard packet.isKeyframe, let pts = packet.pts, pts >= j.boundary else { return false }
            joining = nil
            switches.append(VariantSwitch(from: current, to: j.to, bandwidth: j.bandwidth, reason: j.reason, pts: pts))
            current = j.to
            lastPts = pts
            return true
        }
        for sample in meter.takeSamples() {
            segmentsMeasured += 1
            throughput = sample.throughput
            if let (to, reason) = selector.next(current: current, throughput: sample.throughput) {
                pending = (to, reason, sample.throughput)
            }
        }
        if let p = pending, packet.isKeyframe, let pts = packet.pts, pts > (lastPts ?? .min) {
            pending = nil
            do {
                try demuxer.join(p.to, at: pts)
                joining = (p.to, p.reason, p.bandwidth, pts)
                return false
            } catch {
                lastRefusal = "\(error)"
            }
        }
        if let pts = packet.pts { lastPts = max(lastPts ?? pts, pts) }
        return true
    }
}

extension Demuxer {
    /// The variants of an HLS master playlist (one for a media playlist); empty for other inputs.
    public var variants: [HLSVariant] { adaptive?.variants ?? [] }
    /// The variant being read now; nil for inputs other than HLS.
    public var currentVariant: HLSVariant? { adaptive?.current }
    /// The start variant and every change since, in order.
    public var variantSwitches: [VariantSwitch] { adaptive?.switches ?? [] }
    /// The last HLS segment's measured throughput in bits a second; nil before the first.
    public var segmentThroughput: Double? { adaptive?.throughput }

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
