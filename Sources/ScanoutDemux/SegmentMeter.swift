import CFFmpeg
import Synchronization
import ScanoutCore

/// One media segment read to its end: its bytes and the seconds spent waiting for them.
public struct SegmentSample: Sendable, Equatable {
    public var url: String
    public var bytes: Int
    /// Seconds the demuxer's reads of this segment blocked (not the time between them).
    public var seconds: Double
    /// Bits a second.
    public var throughput: Double { seconds > 0 ? Double(bytes * 8) / seconds : .infinity }
}

/// The segment being downloaded now, as far as it got: what its reads brought and how long they
/// blocked so far, and its length when the server announced one.
public struct SegmentProgress: Sendable, Equatable {
    public var url: String
    public var bytes: Int
    /// Seconds the reads of this segment blocked so far.
    public var seconds: Double
    /// The segment's length (the server's `Content-Length`); nil when not announced.
    public var expectedBytes: Int?

    public init(url: String, bytes: Int, seconds: Double, expectedBytes: Int?) {
        self.url = url
        self.bytes = bytes
        self.seconds = seconds
        self.expectedBytes = expectedBytes
    }

    /// Bits a second so far; nil before any blocking was measured.
    public var throughput: Double? { seconds > 0 ? Double(bytes * 8) / seconds : nil }
    /// Bytes still to come; nil when the length is unknown.
    public var remainingBytes: Int? { expectedBytes.map { max($0 - bytes, 0) } }
}

/// Measures the throughput of each segment libavformat's `hls` demuxer reads.
///
/// The demuxer opens every playlist and segment through its format context's `io_open` callback;
/// the meter takes that callback (and `io_close2`) and hands each segment's reader an
/// `AVIOContext` of its own between the demuxer and the real one, which times every read of the
/// real one. The time between the open and the close would measure how fast the player consumes
/// (the demuxer reads a segment lazily, packet by packet, at playback speed); the time spent
/// inside the reads measures the network. Only segments read to their end are counted (the
/// demuxer reads a few kilobytes of segments it probes at opening).
///
/// While a segment downloads, every read is also a sample of `estimator` (bytes, blocked
/// seconds), and `progress` says how far the segment being read got: the adaptive choice sees a
/// slow segment before it ends (`AdaptiveHLS`). Reads while `measuring` is off (a change of
/// variant opening its context, which probes segments) are not samples.
///
/// Owns each segment's outer `AVIOContext` and its buffer (freed when the demuxer closes the
/// segment, or when the meter goes); the inner one is opened and closed by libavformat's own
/// `io_open`/`io_close2`. Used on the thread that owns the demuxer (libavformat calls it from
/// inside that thread's reads).
final class SegmentMeter {
    /// Samples not taken yet.
    private var samples: [SegmentSample] = []
    private var open: [UnsafeMutableRawPointer: MeteredSegment] = [:]
    /// The segment whose read came last, while it is open and not read to its end.
    private var reading: MeteredSegment?
    /// The smoothed throughput of every read while `measuring`.
    var estimator = ThroughputEstimator()
    /// Whether reads are samples of `estimator` and set `progress`.
    var measuring = true
    /// Segments opened while `measuring`, since the start: which segment a packet read came from
    /// can be told apart (`AdaptiveHLS`).
    private(set) var segmentsOpened = 0
    /// The ordinal (in `segmentsOpened`) of the last segment read to its end.
    private(set) var lastEndedSegment = 0

    /// How far the segment being downloaded got; nil between segments.
    var progress: SegmentProgress? {
        guard let r = reading else { return nil }
        // A read blocked now counts for what it waited so far.
        let blocked = r.readStartedAt.map { ClockTime.now() - $0 } ?? .zero
        return SegmentProgress(url: r.url, bytes: r.bytes, seconds: (r.waited + blocked).secondsValue, expectedBytes: r.expectedBytes)
    }

    /// Gives `ctx` the metering callbacks. `unhook` before the context is freed.
    func hook(_ ctx: UnsafeMutablePointer<AVFormatContext>) {
        let defaults = Defaults(open: ctx.pointee.io_open, close: ctx.pointee.io_close2)
        Self.registry.withLock { $0[Int(bitPattern: ctx)] = Entry(meter: self, defaults: defaults) }
        ctx.pointee.io_open = { s, pb, url, flags, options in
            guard let s, let pb else { return SCANOUT_AVERROR_EXIT }
            guard let (meter, defaults) = SegmentMeter.lookup(s), let openDefault = defaults.open else { return SCANOUT_AVERROR_EXIT }
            let r = openDefault(s, pb, url, flags, options)
            guard r >= 0, let inner = pb.pointee, let url, SegmentMeter.isSegment(s, url: String(cString: url)) else { return r }
            pb.pointee = meter.wrap(inner, url: String(cString: url), close: defaults.close)
            return r
        }
        ctx.pointee.io_close2 = { s, pb in
            guard let s else { return 0 }
            guard let (meter, defaults) = SegmentMeter.lookup(s) else { return 0 }
            if let pb, let segment = meter.open.removeValue(forKey: UnsafeMutableRawPointer(pb)) {
                meter.finish(segment, context: s)
                return 0
            }
            return defaults.close?(s, pb) ?? 0
        }
    }

    /// Removes `ctx` from the meter's contexts: after `avformat_close_input` (which closes what
    /// is open), or, with `restore`, from a live context that has no segment open, whose own
    /// callbacks it gets back.
    func unhook(_ ctx: UnsafeMutablePointer<AVFormatContext>?, restore: Bool = false) {
        guard let ctx else { return }
        let entry = Self.registry.withLock { $0.removeValue(forKey: Int(bitPattern: ctx)) }
        if restore, let entry {
            ctx.pointee.io_open = entry.defaults.open
            ctx.pointee.io_close2 = entry.defaults.close
        }
    }

    /// Hands over the segments measured since the last call, oldest first.
    func takeSamples() -> [SegmentSample] {
        defer { samples = [] }
        return samples
    }

    deinit {
        // Segments a context left open (it should have closed them): outer contexts freed here.
        for segment in open.values { segment.freeOuter() }
    }

    private func wrap(_ inner: UnsafeMutablePointer<AVIOContext>, url: String,
                      close: (@convention(c) (UnsafeMutablePointer<AVFormatContext>?, UnsafeMutablePointer<AVIOContext>?) -> Int32)?) -> UnsafeMutablePointer<AVIOContext> {
        let segment = MeteredSegment(inner: inner, url: url, close: close, meter: self)
        if measuring { segmentsOpened += 1 }
        segment.ordinal = segmentsOpened
        open[UnsafeMutableRawPointer(segment.outer)] = segment
        return segment.outer
    }

    /// Called by `segment` after each read of its inner context.
    fileprivate func didRead(_ segment: MeteredSegment, bytes: Int, waited: Duration) {
        guard measuring else { return }
        estimator.add(bytes: bytes, seconds: waited.secondsValue)
        reading = segment.reachedEnd ? nil : segment
        if segment.reachedEnd { lastEndedSegment = max(lastEndedSegment, segment.ordinal) }
    }

    private func finish(_ segment: MeteredSegment, context: UnsafeMutablePointer<AVFormatContext>) {
        if reading === segment { reading = nil }
        if segment.reachedEnd, segment.bytes > 0 {
            samples.append(SegmentSample(url: segment.url, bytes: segment.bytes, seconds: segment.waited.secondsValue))
            if samples.count > 64 { samples.removeFirst() }
        }
        _ = segment.close?(context, segment.inner)
        segment.freeOuter()
    }

    /// Segments of an HLS input: what the `hls` demuxer opens once the master playlist is open,
    /// except playlists.
    private static func isSegment(_ s: UnsafeMutablePointer<AVFormatContext>, url: String) -> Bool {
        guard s.pointee.pb != nil, let format = s.pointee.iformat, String(cString: format.pointee.name) == "hls" else { return false }
        let path = url.split(separator: "?", maxSplits: 1).first.map(String.init) ?? url
        return !(path.hasSuffix(".m3u8") || path.hasSuffix(".m3u"))
    }

    private struct Defaults: @unchecked Sendable {
        // libavformat's default callbacks: plain C function pointers, safe to call from any thread.
        var open: (@convention(c) (UnsafeMutablePointer<AVFormatContext>?, UnsafeMutablePointer<UnsafeMutablePointer<AVIOContext>?>?,
                                   UnsafePointer<CChar>?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Int32)?
        var close: (@convention(c) (UnsafeMutablePointer<AVFormatContext>?, UnsafeMutablePointer<AVIOContext>?) -> Int32)?
    }

    private struct Entry: @unchecked Sendable {
        // The meter is only touched by the thread that owns its demuxer; the registry's lock
        // guards the table, not the meter.
        var meter: SegmentMeter
        var defaults: Defaults
    }

    /// The meter of each hooked context, by the context's address: the callbacks get the context
    /// only, and its `opaque` belongs to the log sink (`ErrorLines`).
    private static let registry = Mutex<[Int: Entry]>([:])

    private static func lookup(_ s: UnsafeMutablePointer<AVFormatContext>) -> (SegmentMeter, Defaults)? {
        registry.withLock { $0[Int(bitPattern: s)].map { ($0.meter, $0.defaults) } }
    }
}

/// A segment's reader: an `AVIOContext` (`outer`, owned here, with its buffer) that reads the one
/// libavformat opened (`inner`, closed by the meter through libavformat's `io_close2`), timing
/// each read.
private final class MeteredSegment {
    let url: String
    let inner: UnsafeMutablePointer<AVIOContext>
    let close: (@convention(c) (UnsafeMutablePointer<AVFormatContext>?, UnsafeMutablePointer<AVIOContext>?) -> Int32)?
    /// The meter that made it (and outlives it: it frees what is left open in its `deinit`).
    private unowned let meter: SegmentMeter
    /// The length the server announced; nil when unknown.
    let expectedBytes: Int?
    /// Its place among the segments the meter opened.
    var ordinal = 0
    private(set) var outer: UnsafeMutablePointer<AVIOContext>!
    private(set) var bytes = 0
    /// The time its reads took, in all.
    private(set) var waited = Duration.zero
    private(set) var reachedEnd = false
    /// When the read in progress began; nil between reads.
    private(set) var readStartedAt: ClockTime?

    init(inner: UnsafeMutablePointer<AVIOContext>, url: String,
         close: (@convention(c) (UnsafeMutablePointer<AVFormatContext>?, UnsafeMutablePointer<AVIOContext>?) -> Int32)?,
         meter: SegmentMeter) {
        self.inner = inner
        self.url = url
        self.close = close
        self.meter = meter
        let length = avio_size(inner)
        expectedBytes = length > 0 ? Int(length) : nil
        let size: Int32 = 32768
        guard let buffer = av_malloc(Int(size)),
              let ctx = avio_alloc_context(buffer.assumingMemoryBound(to: UInt8.self), size, 0, Unmanaged.passUnretained(self).toOpaque(),
                                           { opaque, buf, size in
                                               guard let opaque, let buf else { return SCANOUT_AVERROR_EXIT }
                                               return Unmanaged<MeteredSegment>.fromOpaque(opaque).takeUnretainedValue().read(buf, size)
                                           }, nil,
                                           { opaque, offset, whence in
                                               guard let opaque else { return Int64(SCANOUT_AVERROR_EXIT) }
                                               return Unmanaged<MeteredSegment>.fromOpaque(opaque).takeUnretainedValue().seek(offset, whence)
                                           }) else {
            fatalError("avio_alloc_context: out of memory")
        }
        ctx.pointee.seekable = inner.pointee.seekable
        outer = ctx
    }

    private func read(_ buf: UnsafeMutablePointer<UInt8>, _ size: Int32) -> Int32 {
        let start = ClockTime.now()
        readStartedAt = start
        let n = avio_read_partial(inner, buf, size)
        readStartedAt = nil
        let took = ClockTime.now() - start
        waited += took
        if n > 0 { bytes += Int(n) }
        let ended = n == SCANOUT_AVERROR_EOF || (n == 0 && avio_feof(inner) != 0)
        if ended { reachedEnd = true }
        meter.didRead(self, bytes: max(Int(n), 0), waited: took)
        return ended ? SCANOUT_AVERROR_EOF : n
    }

    private func seek(_ offset: Int64, _ whence: Int32) -> Int64 {
        if whence & AVSEEK_SIZE != 0 { return avio_size(inner) }
        reachedEnd = false
        return avio_seek(inner, offset, whence & ~AVSEEK_FORCE)
    }

    /// Frees the outer context and its buffer (once).
    func freeOuter() {
        guard outer != nil else { return }
        av_freep(&outer.pointee.buffer)
        avio_context_free(&outer)
    }
}
