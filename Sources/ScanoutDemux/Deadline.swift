import CFFmpeg
import ScanoutCore
#if canImport(Glibc)
import Glibc
#endif

/// A monotonic deadline that libavformat's interrupt callback polls. Shared between the demuxer
/// and the callback on the same thread (libavformat calls it from inside the blocking call).
package final class Deadline {
    package init() {}
    private var limit: UInt64 = 0
    private(set) var fired = false
    private var armedAt: UInt64 = 0
    /// Reads only: after this many nanoseconds without a return, `onStall` is called once, from
    /// inside the read (0: never).
    private var stallAfter: UInt64 = 0
    package var stallThreshold: UInt64 = 0
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
        armedAt = monotonicNanoseconds()
        limit = armedAt + UInt64(max(seconds, 0.001) * 1e9)
        stallAfter = reportingStalls && onStall != nil ? stallThreshold : 0
    }

    package func disarm() { limit = 0 }

    package var expired: Bool {
        guard limit != 0 else { return false }
        if stopped { return true }
        let now = monotonicNanoseconds()
        if now >= limit { fired = true }
        if stallAfter > 0, now - armedAt >= stallAfter, !fired {
            stallAfter = 0
            onStall?(Double(now - armedAt) / 1e9)
        }
        if !fired, mayStop, let stopReading, stopReading() { stopped = true }
        return fired || stopped
    }
}
