import ScanoutCore

/// How an HLS master playlist's variants are chosen (`Demuxer` with libavformat's `hls` demuxer).
public struct AdaptiveOptions: Sendable, Equatable {
    /// Bandwidth assumed before the first segment is measured, in bits a second: the start variant
    /// is the highest whose bitrate is at most this.
    public var initialBandwidth: Int = 2_000_000
    /// Variants taller than this many pixels are never played (nil: no cap).
    public var maxHeight: Int?
    /// Variants whose advertised bitrate (`BANDWIDTH`) exceeds this many bits a second are never
    /// played (nil: no cap).
    public var maxBitrate: Int?
    /// Up only when the measured throughput exceeds the next variant's bitrate by this factor...
    public var upFactor: Double = 1.3
    /// ...for this many segments in a row. Down happens at once, on one segment measured below
    /// the current variant's bitrate.
    public var upSegments: Int = 2
    /// No change up while less than this many seconds of media are buffered ahead of playback.
    public var minBufferForUp: Double = 8
    /// A segment is late when its rest would arrive later than the buffered seconds less this.
    public var starvationMargin: Double = 0.5
    /// Whether a late segment is abandoned mid-download for the same time range of a lower
    /// variant (false: the change waits for the segment's end).
    public var abandonSegments: Bool = true
    /// Where a live playlist starts: the segment this many from the live edge (negative, from the
    /// end of the window; libavformat's `live_start_index`).
    public var liveStartIndex: Int = -3

    public init(initialBandwidth: Int = 2_000_000, maxHeight: Int? = nil, maxBitrate: Int? = nil,
                upFactor: Double = 1.3, upSegments: Int = 2, liveStartIndex: Int = -3,
                minBufferForUp: Double = 8, starvationMargin: Double = 0.5, abandonSegments: Bool = true) {
        self.initialBandwidth = initialBandwidth
        self.maxHeight = maxHeight
        self.maxBitrate = maxBitrate
        self.upFactor = upFactor
        self.upSegments = upSegments
        self.liveStartIndex = liveStartIndex
        self.minBufferForUp = minBufferForUp
        self.starvationMargin = starvationMargin
        self.abandonSegments = abandonSegments
    }
}

/// One variant of an HLS master playlist: libavformat's `hls` demuxer makes it an `AVProgram`
/// (its id) whose `variant_bitrate` is the playlist's `BANDWIDTH`.
public struct HLSVariant: Sendable, Equatable, CustomStringConvertible {
    /// The program id: the variant's position in the master playlist, from 0.
    public var id: Int
    /// The advertised bitrate, bits a second.
    public var bitrate: Int
    public var width: Int
    public var height: Int
    /// The index of its video stream in the format context.
    public var streamIndex: Int

    public init(id: Int, bitrate: Int, width: Int, height: Int, streamIndex: Int) {
        self.id = id
        self.bitrate = bitrate
        self.width = width
        self.height = height
        self.streamIndex = streamIndex
    }

    public var description: String { "\(width)x\(height) @ \(bitrate) b/s" }
}

/// A change of variant: the first packet of `to` is the keyframe at `pts`, which follows the
/// last packet of `from` with no frame lost or repeated.
public struct VariantSwitch: Sendable, Equatable {
    /// Nil for the start variant.
    public var from: HLSVariant?
    public var to: HLSVariant
    /// The throughput that decided it, bits a second (the initial estimate for the start).
    public var bandwidth: Double
    public var reason: String
    /// Presentation timestamp of the first packet of `to`, in the stream's time base (nil for the start).
    public var pts: Int64?
    /// Whether a segment of `from` was abandoned mid-download for this change (its time range
    /// fetched again from `to`).
    public var abandonedSegment = false

    /// How the reason of a change that abandoned a segment begins.
    public static let abandonedPrefix = "segment abandoned: "
}
