import Foundation
import ScanoutCore

/// A smoothed estimate of the network's throughput from what the reads of HLS segments measure
/// (`SegmentMeter`), sample by sample while a segment downloads, not only when it ends.
///
/// Two exponentially weighted averages of the bytes read and of the seconds the reads blocked,
/// one that forgets fast and one slowly; the estimate is the lower of their ratios (a drop shows
/// at once through the fast one, a rise only once the slow one agrees). A sample is one read:
/// its bytes and its blocked seconds. Because the estimate is bytes over time, a sample counts by
/// its bytes (the ratio is the byte-weighted harmonic mean of the samples' rates), and what came
/// before fades by the transfer time since: a sample of `t` seconds multiplies the history by
/// `0.5^(t / halfLife)`. So a read served from the socket's buffer in microseconds adds its bytes
/// and forgets nothing, and seconds of trickle push out what faster seconds said.
///
/// Pure logic: no clock of its own.
public struct ThroughputEstimator: Sendable, Equatable {
    /// One average: decayed sums of bytes and of seconds.
    struct Average: Sendable, Equatable {
        let halfLife: Double
        var bytes = 0.0
        var seconds = 0.0

        mutating func add(bytes b: Double, seconds t: Double) {
            let keep = pow(0.5, t / halfLife)
            bytes = bytes * keep + b
            seconds = seconds * keep + t
        }

        /// Bits a second; nil before any time was measured.
        var rate: Double? { seconds > 0 ? bytes * 8 / seconds : nil }
    }

    private(set) var fast: Average
    private(set) var slow: Average
    /// Bytes seen since the start (or the last `reset`).
    public private(set) var totalBytes = 0
    /// The estimate is given only once this many bytes were measured.
    public let minimumBytes: Int

    /// `fastHalfLife` and `slowHalfLife` in seconds of transfer (hls.js uses 3 and 9).
    public init(fastHalfLife: Double = 3, slowHalfLife: Double = 9, minimumBytes: Int = 16_000) {
        fast = Average(halfLife: max(fastHalfLife, 0.001))
        slow = Average(halfLife: max(slowHalfLife, 0.001))
        self.minimumBytes = minimumBytes
    }

    /// One read: `bytes` that took `seconds` of blocking.
    public mutating func add(bytes: Int, seconds: Double) {
        guard bytes > 0 || seconds > 0 else { return }
        let t = max(seconds, 0)
        fast.add(bytes: Double(max(bytes, 0)), seconds: t)
        slow.add(bytes: Double(max(bytes, 0)), seconds: t)
        totalBytes += max(bytes, 0)
    }

    /// Bits a second: the lower of the two averages; nil until `minimumBytes` were measured (or
    /// no time at all was: every read came from a buffer).
    public var estimate: Double? {
        guard totalBytes >= minimumBytes, let f = fast.rate, let s = slow.rate else { return nil }
        return min(f, s)
    }

    /// Forgets everything measured.
    public mutating func reset() {
        self = ThroughputEstimator(fastHalfLife: fast.halfLife, slowHalfLife: slow.halfLife, minimumBytes: minimumBytes)
    }
}
