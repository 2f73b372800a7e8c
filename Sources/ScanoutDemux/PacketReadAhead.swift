import CFFmpeg
import Foundation
import ScanoutCore

/// How far a network source is read ahead of playback (`PacketReadAhead`).
public struct ReadAheadOptions: Sendable, Equatable {
    /// Whether the player reads network inputs that have an end (files over HTTP, HLS VOD) ahead
    /// on a thread of their own. Live inputs never are: they keep their slip/catch-up policy.
    public var enabled = true
    /// Most media time kept ahead (seconds of the video's packets).
    public var seconds: Double = 30
    /// Most compressed bytes kept ahead, whatever their duration.
    public var maxBytes: Int = 64 << 20
    /// After the read-ahead ran dry, playback resumes once this much media is buffered again
    /// (or the input ended). mpv waits for 1 s of cache (`cache-pause-wait`).
    public var resumeSeconds: Double = 1
    public init(enabled: Bool = true, seconds: Double = 30, maxBytes: Int = 64 << 20, resumeSeconds: Double = 1) {
        self.enabled = enabled
        self.seconds = seconds
        self.maxBytes = maxBytes
        self.resumeSeconds = resumeSeconds
    }
}

/// How much a `PacketReadAhead` holds now.
public struct BufferLevel: Sendable, Equatable {
    /// Media time of the video packets held (first to last decoding timestamp, plus one
    /// packet's duration), seconds.
    public var seconds: Double = 0
    /// Compressed bytes held, every track's.
    public var bytes = 0
    /// Video packets held.
    public var packets = 0
    /// Whether the input is read to its end (or failed): nothing more will come.
    public var ended = false
    /// Whether a bound (`seconds` or `maxBytes`) is reached: the filling thread waits.
    public var full = false
    /// How fast data came in over the last second or so, bytes a second; nil before a second
    /// of reading.
    public var inputBytesPerSecond: Double?
    /// The bytes one second of the media takes (what was read so far over its duration); nil
    /// before any.
    public var mediaBytesPerSecond: Double?
    public init() {}
}

/// A read-ahead of demuxed packets between a network source and the decoder, on a thread of its
/// own (the job of mpv's demuxer cache and GStreamer's `queue2`): the thread reads the demuxer
/// until `ReadAheadOptions.seconds` of video or `maxBytes` are held, then waits for room; the
/// reader takes packets from it as a `PacketSource`. A slow or stalled network shows as a level
/// that falls, seen before the decoder waits, so that the player can pause its clock
/// (`PlaybackSession`), not drop the frames that come late.
///
/// The packets of routed tracks (audio, subtitles) are held in their place among the video's and
/// handed to their sinks when `read` reaches them, on the reading thread, in the order the
/// container interleaves them: the sound is fed as the picture is, never ahead of it.
///
/// Ownership: the filling thread starts at the first `read` (or `waitForData`); routes and seeks
/// made before then go to the demuxer directly, so a track routed before playback begins (the
/// sound of an item about to play) loses none of its packets to a fill that ran ahead of the
/// routing. From then on only the filling thread uses the demuxer for reading, seeking and
/// routing; the reader's `seek` and `route` are carried out by that thread between two reads
/// (they wait for a read in progress to return). What the demuxer fixed at open (`video`,
/// `tracks`, `input`, `formatName`) may still be read anywhere. Closing (the last reference
/// gone) lets the thread end after its read in progress.
///
/// Not thread-safe on the reader's side: one owner, the `FrameReader` whose `source` it is.
public final class PacketReadAhead: PacketSource {
    public let options: ReadAheadOptions
    private let shared: ReadAheadState
    /// The sinks of routed tracks, called from `read` on the reader's thread.
    private var sinks: [Int: (Packet) -> Void] = [:]
    public var sinksPaused = false
    public let seeksByPresentationTime: Bool
    public var transportCounts: TSCounts? { nil }

    /// The demuxer until the filling thread starts.
    private var unstarted: Demuxer?

    /// Reads `demuxer` ahead on a thread of its own from the first `read` on.
    public init(demuxer: Demuxer, options: ReadAheadOptions) {
        self.options = options
        seeksByPresentationTime = demuxer.seeksByPresentationTime
        shared = ReadAheadState(options: options, timeBase: demuxer.video.timeBase)
        unstarted = demuxer
    }

    private func startFilling() {
        guard let demuxer = unstarted else { return }
        unstarted = nil
        shared.start(demuxer: demuxer)
    }

    deinit { shared.close() }

    /// Whether `demuxer` is one the player reads ahead: a network input with an end (a file over
    /// HTTP, an HLS playlist with `#EXT-X-ENDLIST`). Local files are read at disk speed and live
    /// inputs follow their sender.
    public static func wants(_ demuxer: Demuxer) -> Bool {
        !demuxer.isLive && Demuxer.isHTTP(demuxer.input) && demuxer.hasKnownEnd
    }

    /// What it holds now.
    public var level: BufferLevel { shared.level() }

    /// An adaptive HLS input's variants and changes as of the newest packet read (copied by the
    /// filling thread, which alone reads the demuxer); nil for other inputs.
    public var adaptive: AdaptiveReading? { shared.adaptiveReading() }

    /// How many times `read` found nothing held and had to wait for the network, and for how
    /// long in all.
    public var waits: (count: Int, time: Duration) { shared.waitTotals() }

    /// Waits until the next packet is held, or `span` passed (at once when the input ended or
    /// the read-ahead is full).
    public func waitForData(within span: Duration) {
        startFilling()
        shared.waitForData(within: span)
    }

    /// Calls `report` (on the reading thread, from inside `read`) once a read has waited
    /// `seconds` for the network, with the seconds waited; as `Demuxer.reportStalls`.
    public func reportStalls(after seconds: Double, _ report: @escaping (Double) -> Void) {
        stallThreshold = .nanoseconds(inSeconds: max(seconds, 0))
        onStall = report
    }
    private var stallThreshold = Duration.zero
    private var onStall: ((Double) -> Void)?

    public func read(into packet: Packet) throws -> Bool {
        startFilling()
        while true {
            switch try shared.take(stallAfter: onStall == nil ? .zero : stallThreshold, onStall: onStall) {
            case .video(let p):
                packet.unref()
                av_packet_move_ref(packet.pointer, p.pointer)
                return true
            case .track(let p):
                if !sinksPaused { sinks[p.streamIndex]?(p) }
            case .end:
                return false
            }
        }
    }

    public func seek(toTimestamp timestamp: Int64, position: Int64?) throws {
        if let demuxer = unstarted { return try demuxer.seek(toTimestamp: timestamp, position: position) }
        try shared.perform(clearing: true) { demuxer in try demuxer.seek(toTimestamp: timestamp, position: position) }
    }

    public func route(track index: Int, to sink: ((Packet) -> Void)?) throws {
        let state = shared
        let routing: (Demuxer) throws -> Void = { demuxer in
            try demuxer.route(track: index, to: sink == nil ? nil : { state.append(track: $0.clone()) })
        }
        if let demuxer = unstarted { try routing(demuxer) } else { try shared.perform(clearing: false, routing) }
        sinks[index] = sink
    }
}

/// An adaptive HLS input's variants, the one read and the changes so far, as a value another
/// thread can keep.
public struct AdaptiveReading: Sendable, Equatable {
    public var variants: [HLSVariant]
    public var current: HLSVariant
    /// The last segment's measured throughput, bits a second; nil before the first.
    public var throughput: Double?
    /// The start variant and every change since, in order.
    public var switches: [VariantSwitch]
}

extension Demuxer {
    /// Nil when the input is not an adaptive HLS stream.
    public var adaptiveReading: AdaptiveReading? {
        guard let current = currentVariant else { return nil }
        return AdaptiveReading(variants: variants, current: current, throughput: segmentThroughput, switches: variantSwitches)
    }
}

extension Demuxer {
    /// Whether the input has an end: a duration in the container (an HLS playlist has one once
    /// it holds `#EXT-X-ENDLIST`) or in the video stream.
    var hasKnownEnd: Bool { context.pointee.duration > 0 || video.duration != nil }
}
