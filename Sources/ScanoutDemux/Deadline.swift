import CFFmpeg
import ScanoutCore
#if canImport(Glibc)
import Glibc
#endif

/// A monotonic deadline that libavformat's interrupt callback polls. Shared between the demuxer
/// and the callback on the same thread (libavformat calls it from inside the blocking call).
package final class Deadline {
    package init() {}
    /// When the armed call times out; nil while disarmed.
    private var limit: ClockTime?
    private(set) var fired = false
    private var armedAt = ClockTime.zero
    /// Reads only: after this long without a return, `onStall` is called once, from inside the
    /// read (zero: never).
    private var stallAfter = Duration.zero
    package var stallThreshold = Duration.zero
    package var onStall: ((Double) -> Void)?
    /// Reads only: asked while a read blocks; true stops the read (`stopped`), which is no
    /// timeout: an adaptive HLS input abandoning a late segment (`AdaptiveHLS`).
    package var stopReading: (() -> Bool)?
    private var mayStop = false
    private(set) var stopped = false

    package func arm(seconds: Double, reportingStalls: Bool = false) {
        fired = false
        stopped = false
        mayStop = reportingStalls
        armedAt = ClockTime.now()
        limit = armedAt + .nanoseconds(inSeconds: max(seconds, 0.001))
        stallAfter = reportingStalls && onStall != nil ? stallThreshold : .zero
    }

    package func disarm() { limit = nil }

    package var expired: Bool {
        guard let limit else { return false }
        if stopped { return true }
        let now = ClockTime.now()
        if now >= limit { fired = true }
        if stallAfter > .zero, now - armedAt >= stallAfter, !fired {
            stallAfter = .zero
            onStall?((now - armedAt).secondsValue)
        }
        if !fired, mayStop, let stopReading, stopReading() { stopped = true }
        return fired || stopped
    }
}
