import CFFmpeg
import ScanoutCore
import ScanoutDemux

/// Changes the speed of interleaved 16-bit audio without changing its pitch: a libavfilter graph
/// `abuffer → stretcher → aformat=s16 → abuffersink`.
///
/// The stretcher is `rubberband` (librubberband: a phase vocoder that keeps transients where
/// they are) with its short window where libavfilter has it, else `atempo` (WSOLA). What picks
/// it is lip sync: through `atempo` a click's first loud sample lands 10–16 ms early at 1.5×
/// and 32 ms early at 0.75× on the stretched timeline (fragments are cross-faded around it, and
/// the fragment that holds it is placed by correlation, up to half a window off); through
/// `rubberband=window=short`, within −7…+4.4 ms from 0.75× to 2×. It costs about five times the
/// CPU of `atempo`, under 1% of a core for 48 kHz stereo here. `atempo` keeps its best quality
/// between 0.5 and 2, so a rate outside that is a chain of factors inside it (0.25 = 0.5 × 0.5,
/// 4 = 2 × 2), as FFmpeg's documentation advises.
///
/// Owns the filter graph and one frame, freed once in `deinit`. Not thread-safe: the output
/// thread's (`AudioOutput`).
public final class AudioTempo {
    /// libavfilter's time-stretching filters, best first.
    public enum Stretcher: String, Sendable, CaseIterable {
        case rubberband
        case atempo
    }

    /// The best stretcher this libavfilter has.
    public static let available: Stretcher = avfilter_get_by_name("rubberband") != nil ? .rubberband : .atempo

    public let rate: Double
    public let format: AudioFormat
    public let stretcher: Stretcher
    private var graph: UnsafeMutablePointer<AVFilterGraph>?
    private var source: UnsafeMutablePointer<AVFilterContext>?
    private var sink: UnsafeMutablePointer<AVFilterContext>?
    private let frame: UnsafeMutablePointer<AVFrame>
    /// Stream time of the first sample fed since the last reset, and frames put out since.
    public private(set) var origin: Double?
    private var emitted = 0
    private var fed: Int64 = 0
    /// The input was ended (`drain`).
    private var ended = false
    /// The tempo and epoch of the chunks fed (what comes out carries them on).
    private var tempo = 1.0
    public private(set) var epoch = 0
    /// Nothing was fed since it was made or reset.
    public var isFresh: Bool { fed == 0 && !ended }
    /// Whether anything came out since the last reset.
    public var hasEmitted: Bool { emitted > 0 }
    /// Frames of output still inside the filters: what was fed, stretched, less what came out.
    public var pending: Int { ended ? 0 : max(0, Int(Double(fed) / rate) - emitted) }

    /// The `atempo` factors whose product is `rate`, each within 0.5...2.
    public static func factors(for rate: Double) -> [Double] {
        var r = rate
        var out: [Double] = []
        while r < 0.5 { out.append(0.5); r /= 0.5 }
        while r > 2 { out.append(2); r /= 2 }
        out.append(r)
        return out
    }

    /// The filters that stretch by `rate` with `stretcher`, in libavfilter's graph syntax.
    public static func filters(for rate: Double, stretcher: Stretcher) -> String {
        switch stretcher {
        case .rubberband: return "rubberband=tempo=\(rate):window=short"
        case .atempo: return factors(for: rate).map { "atempo=\($0)" }.joined(separator: ",")
        }
    }

    public init(rate: Double, format: AudioFormat, stretcher: Stretcher = AudioTempo.available) throws {
        guard rate >= 0.25, rate <= 4 else { throw AudioError.conversionFailed(call: stretcher.rawValue, reason: "rate \(rate) is outside 0.25...4") }
        self.rate = rate
        self.format = format
        self.stretcher = stretcher
        guard let f = av_frame_alloc() else { fatalError("av_frame_alloc: out of memory") }
        frame = f
        try build()
    }

    deinit {
        avfilter_graph_free(&graph)
        var f: UnsafeMutablePointer<AVFrame>? = frame
        av_frame_free(&f)
    }

    /// Forgets the samples inside the filters (after a seek).
    public func reset() {
        avfilter_graph_free(&graph)
        origin = nil
        emitted = 0
        fed = 0
        ended = false
        try? build()
    }

    /// Stretches one chunk; returns what the filters put out so far (nil: nothing yet).
    public func process(_ chunk: AudioChunk) throws -> AudioChunk? {
        guard let source, let sink, !ended else { throw AudioError.conversionFailed(call: stretcher.rawValue, reason: "no filter graph") }
        if origin == nil { origin = chunk.start }
        tempo = chunk.tempo
        epoch = chunk.epoch
        guard chunk.samples.count >= format.channels else { return nil }
        try feed(chunk.samples, to: source)
        return collect(sink)
    }

    /// Ends the input: what the filters still hold comes out (the stretched end of an item,
    /// the samples before a rate change), so that all that came out is the input's stretched
    /// length to the frame; nil when nothing more did. Only `reset` feeds it again.
    ///
    /// Without it the filters keep their last window to themselves: 29 ms at 2× through
    /// `rubberband`, 117 ms at 0.25×; through `atempo` 24 to 186 ms. Ending the input alone
    /// does not give it all back: `rubberband` flushes only when a block of input comes with
    /// the end, and then still drops the last 12 ms of input at 0.5×, 24 ms at 0.25×; `atempo`
    /// puts out up to 11 ms too much at 4× and 49 ms too little at 0.25×. So silence follows the
    /// input, 10 ms at a time until the output reaches the stretched length (`drainPadding` at
    /// most: the filters' time is the output thread's), taken block by block before the end
    /// comes (`rubberband` refuses a second block after it, on stderr), and what comes out is
    /// cut at that length.
    public func drain() -> AudioChunk? {
        guard let source, let sink, !ended, fed > 0 else { return nil }
        ended = true
        let length = Int((Double(fed) / rate).rounded())
        let step = [Int16](repeating: 0, count: format.sampleRate / 100 * format.channels)
        var out = pull(sink)
        var padded = 0.0
        while emitted + out.count / format.channels < length, padded < Self.drainPadding {
            guard (try? feed(step, to: source)) != nil else { break }
            out += pull(sink)
            padded += 0.01
        }
        if av_buffersrc_add_frame(source, nil) >= 0 { out += pull(sink) }
        return chunk(out, upTo: length)
    }

    /// The most silence fed after the input when it ends, seconds of input: more than the
    /// filters keep.
    public static let drainPadding = 0.2

    /// Gives the filters interleaved samples, stamped after those fed before.
    private func feed(_ samples: [Int16], to source: UnsafeMutablePointer<AVFilterContext>) throws {
        let frames = samples.count / format.channels
        frame.pointee.nb_samples = Int32(frames)
        frame.pointee.format = AV_SAMPLE_FMT_S16.rawValue
        frame.pointee.sample_rate = Int32(format.sampleRate)
        av_channel_layout_default(&frame.pointee.ch_layout, Int32(format.channels))
        frame.pointee.pts = fed
        fed += Int64(frames)
        var r = av_frame_get_buffer(frame, 0)
        guard r >= 0 else { throw AudioError.conversionFailed(call: "av_frame_get_buffer", reason: ffmpegErrorString(r)) }
        samples.withUnsafeBytes { src in
            frame.pointee.data.0!.update(from: src.baseAddress!.assumingMemoryBound(to: UInt8.self), count: frames * format.channels * 2)
        }
        r = av_buffersrc_add_frame(source, frame)   // takes the frame's buffers and resets it
        av_frame_unref(frame)
        guard r >= 0 else { throw AudioError.conversionFailed(call: "av_buffersrc_add_frame", reason: ffmpegErrorString(r)) }
    }

    /// What the sink has, as one chunk on the stretched timeline after what came out before.
    private func collect(_ sink: UnsafeMutablePointer<AVFilterContext>) -> AudioChunk? {
        chunk(pull(sink))
    }

    /// The samples the sink has now.
    private func pull(_ sink: UnsafeMutablePointer<AVFilterContext>) -> [Int16] {
        var out: [Int16] = []
        while av_buffersink_get_frame(sink, frame) >= 0 {
            let n = Int(frame.pointee.nb_samples) * format.channels
            let p = UnsafeRawPointer(frame.pointee.data.0!).assumingMemoryBound(to: Int16.self)
            out.append(contentsOf: UnsafeBufferPointer(start: p, count: n))
            av_frame_unref(frame)
        }
        return out
    }

    /// Samples that came out, as the chunk after those before; cut where the output reaches
    /// `length` frames in all.
    private func chunk(_ samples: [Int16], upTo length: Int? = nil) -> AudioChunk? {
        let out = length.map { Array(samples.prefix(max(0, $0 - emitted) * format.channels)) } ?? samples
        guard !out.isEmpty else { return nil }
        let start = origin.map { $0 + Double(emitted) * rate / Double(format.sampleRate) }
        emitted += out.count / format.channels
        return AudioChunk(samples: out, start: start, tempo: tempo * rate, epoch: epoch, rate: rate)
    }

    private func build() throws {
        guard let g = avfilter_graph_alloc() else { fatalError("avfilter_graph_alloc: out of memory") }
        graph = g
        var layout = AVChannelLayout()
        av_channel_layout_default(&layout, Int32(format.channels))
        defer { av_channel_layout_uninit(&layout) }
        var name = [CChar](repeating: 0, count: 64)
        av_channel_layout_describe(&layout, &name, name.count)
        let layoutName = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let args = "sample_rate=\(format.sampleRate):sample_fmt=s16:channel_layout=\(layoutName):time_base=1/\(format.sampleRate)"
        var r = avfilter_graph_create_filter(&source, avfilter_get_by_name("abuffer"), "in", args, nil, g)
        guard r >= 0 else { throw AudioError.conversionFailed(call: "abuffer \(args)", reason: ffmpegErrorString(r)) }
        r = avfilter_graph_create_filter(&sink, avfilter_get_by_name("abuffersink"), "out", nil, nil, g)
        guard r >= 0 else { throw AudioError.conversionFailed(call: "abuffersink", reason: ffmpegErrorString(r)) }
        let chain = Self.filters(for: rate, stretcher: stretcher) + ",aformat=sample_fmts=s16:channel_layouts=\(layoutName)"
        // The parser's open ends: its input is fed by our source ("in"), its output feeds our sink.
        var outputs: UnsafeMutablePointer<AVFilterInOut>? = avfilter_inout_alloc()
        var inputs: UnsafeMutablePointer<AVFilterInOut>? = avfilter_inout_alloc()
        defer { avfilter_inout_free(&outputs); avfilter_inout_free(&inputs) }
        outputs!.pointee.name = av_strdup("in")
        outputs!.pointee.filter_ctx = source
        inputs!.pointee.name = av_strdup("out")
        inputs!.pointee.filter_ctx = sink
        r = avfilter_graph_parse_ptr(g, chain, &inputs, &outputs, nil)
        guard r >= 0 else { throw AudioError.conversionFailed(call: "avfilter_graph_parse_ptr \(chain)", reason: ffmpegErrorString(r)) }
        r = avfilter_graph_config(g, nil)
        guard r >= 0 else { throw AudioError.conversionFailed(call: "avfilter_graph_config", reason: ffmpegErrorString(r)) }
    }
}
