import ScanoutCore

/// Picks variants from the smoothed throughput (`ThroughputEstimator`) and the media buffered
/// ahead of playback, with hysteresis. Pure logic; `AdaptiveHLS` carries out what it decides.
///
/// - After each segment (`next`): down at once when the estimate is below the current
///   variant's bitrate (to the highest variant it carries); up one step when `upSegments`
///   segments in a row estimated more than `upFactor` times the next variant's bitrate, and only
///   while at least `minBufferForUp` seconds are buffered (an almost empty buffer is no time to
///   fetch costlier segments).
/// - While a segment downloads (`duringSegment`): when the segment comes slower than the
///   current variant's bitrate and its rest would arrive after the buffer ran dry (its bytes left
///   over its rate so far, against the buffered seconds less `starvationMargin`), the segment is
///   abandoned for the same time range of a lower variant: the highest whose whole segment would
///   arrive before the buffer runs dry, else the lowest; only when that segment would come sooner
///   than the rest of the current one. Else the segment is finished and the change, to the
///   highest variant the rate carries, waits for the next keyframe.
public struct VariantSelector: Sendable {
    /// The variants the caps allow, by ascending bitrate; when the caps allow none, the lowest.
    public let ladder: [HLSVariant]
    public let options: AdaptiveOptions
    private var fastSegments = 0
    /// A segment is judged only after its reads blocked this long: a rate over less says little.
    public static let minimumSegmentSeconds = 0.2

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

    /// The variant to change to after a segment ended, with the throughput estimate at
    /// `throughput` bits a second and `buffered` seconds of media ahead of playback (nil:
    /// unknown, no bound on going up), while playing `current`, and why; nil to stay.
    public mutating func next(current: HLSVariant, throughput: Double, buffered: Double? = nil) -> (HLSVariant, String)? {
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
        // The count is kept while the buffer is low: up as soon as it holds enough.
        if let buffered, buffered < options.minBufferForUp { return nil }
        fastSegments = 0
        let held = buffered.map { ", \(Self.seconds($0)) buffered" } ?? ""
        return (ladder[i + 1], "throughput above \(options.upFactor)x the next variant's bitrate for \(max(1, options.upSegments)) segments\(held)")
    }

    /// What to do while a segment of `current` downloads, `progress` being how far it got,
    /// `estimate` the smoothed throughput (nil: none yet) and `buffered` the seconds of media
    /// ahead of playback; nil to go on.
    public func duringSegment(current: HLSVariant, progress: SegmentProgress, estimate: Double?, buffered: Double) -> SegmentDecision? {
        guard let i = ladder.firstIndex(of: current), i > 0, progress.seconds >= Self.minimumSegmentSeconds,
              let expected = progress.expectedBytes, let remaining = progress.remainingBytes, remaining > 0,
              let rate = progress.throughput, rate > 0, rate < Double(current.bitrate) else { return nil }
        let rest = Double(remaining * 8) / rate
        let budget = buffered - options.starvationMargin
        guard rest > budget else { return nil }
        // A lower variant's segment of the same time range: the current one's length scaled by
        // the advertised bitrates, at the lower of the segment's rate and the estimate.
        let speed = min(rate, estimate ?? rate)
        func arrival(_ v: HLSVariant) -> Double { Double(expected) * Double(v.bitrate) / Double(current.bitrate) * 8 / speed }
        let target = ladder[..<i].last { arrival($0) < budget } ?? ladder[0]
        let why = "the segment came at \(Self.kilobits(rate)), below the current variant's bitrate: its rest would take \(Self.seconds(rest)), "
            + "\(Self.seconds(max(buffered, 0))) buffered"
        guard options.abandonSegments, arrival(target) < rest else {
            // The segment is finished; the next ones come from what the rate carries.
            return .downAfter(carried(by: speed), bandwidth: speed, reason: why)
        }
        return .abandon(target, bandwidth: speed, reason: VariantSwitch.abandonedPrefix + why + "; the same time range of \(target) would take \(Self.seconds(arrival(target)))")
    }

    static func seconds(_ s: Double) -> String {
        let tenths = (s * 10).rounded() / 10
        return "\(tenths) s"
    }

    static func kilobits(_ bps: Double) -> String { "\(Int((bps / 1000).rounded())) kb/s" }
}

/// What `VariantSelector.duringSegment` decided.
public enum SegmentDecision: Sendable, Equatable {
    /// Stop downloading the segment and fetch its time range from `variant` at once.
    case abandon(HLSVariant, bandwidth: Double, reason: String)
    /// Finish the segment, then change to `variant` (at the next keyframe).
    case downAfter(HLSVariant, bandwidth: Double, reason: String)
}
