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
    /// Where a live playlist starts: the segment this many from the live edge (negative, from the
    /// end of the window; libavformat's `live_start_index`).
    public var liveStartIndex: Int = -3

    public init(initialBandwidth: Int = 2_000_000, maxHeight: Int? = nil, maxBitrate: Int? = nil,
                upFactor: Double = 1.3, upSegments: Int = 2, liveStartIndex: Int = -3) {
        self.initialBandwidth = initialBandwidth
        self.maxHeight = maxHeight
        self.maxBitrate = maxBitrate
        self.upFactor = upFactor
        self.upSegments = upSegments
        self.liveStartIndex = liveStartIndex
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
}

/// Picks variants from measured throughput, with hysteresis: down at once when a segment came
/// slower than the current variant's bitrate (to the highest variant the throughput carries),
/// up one step when `upSegments` segments in a row came faster than `upFactor` times the next
/// variant's bitrate. Pure logic; `Demuxer` carries out what it decides.
public struct VariantSelector: Sendable {
    /// The variants the caps allow, by ascending bitrate; when the caps allow none, the lowest.
    public let ladder: [HLSVariant]
    public let options: AdaptiveOptions
    private var fastSegments = 0

    public init(variants: [HLSVariant], options: AdaptiveOptions) {
        let sorted = variants.sorted { ($0.bitrate, $0.height) < ($1.bitrate, $1.height) }
        let allowed = sorted.filter { v in
            (options.maxHeight.map { v.height <= $0 } ?? true) && (options.maxBitrate.map { v.bitrate <= $0 } ?? true)
        }
        ladder = allowed.isEmpty ? Array(sorted.prefix(1)) : allowed
        self.options = options
    }

    /// The highest variant whose bitrate `bandwidth` carries, or the lowest.
    public func carried(by bandwidth: Double) -> HLSVariant {
        ladder.last { Double($0.bitrate) <= bandwidth } ?? ladder[0]
    }

    /// The variant to change to after a segment came at `throughput` bits a second while playing
    /// `current`, and why; nil to stay.
    public mutating func next(current: HLSVariant, throughput: Double) -> (HLSVariant, String)? {
        guard let i = ladder.firstIndex(of: current) else {
            fastSegments = 0
            return (carried(by: throughput), "variant not allowed")
        }
        if throughput < Double(current.bitrate) {
            fastSegments = 0
            let target = carried(by: throughput)
            return target == current ? nil : (target, "throughput below the current variant's bitrate")
        }
        guard i + 1 < ladder.count, throughput > options.upFactor * Double(ladder[i + 1].bitrate) else {
            fastSegments = 0
            return nil
        }
        fastSegments += 1
        guard fastSegments >= max(1, options.upSegments) else { return nil }
        fastSegments = 0
        return (ladder[i + 1], "throughput above \(options.upFactor)x the next variant's bitrate for \(max(1, options.upSegments)) segments")
    }
}
