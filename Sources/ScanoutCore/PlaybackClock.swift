#if canImport(Glibc)
import Glibc
#endif

/// Time for the playback loop and the display, in nanoseconds on a monotonic scale. One clock is
/// injected everywhere time is read (the session's pacing, the KMS display's verdicts and flip
/// timestamps in the fake), so that a test's manual clock (`ScanoutTesting.ManualClock`) drives
/// them all.
///
/// The real clock sleeps; a manual clock just moves, so pacing and drop decisions can be checked
/// without waiting.
public protocol PlaybackClock: AnyObject {
    func now() -> UInt64
    /// Returns once `now() >= deadline`.
    func sleep(until deadline: UInt64)
}

/// `CLOCK_MONOTONIC`, sleeping with `clock_nanosleep(TIMER_ABSTIME)` (no drift from repeated
/// relative sleeps).
public final class MonotonicClock: PlaybackClock {
    public init() {}

    public func now() -> UInt64 { monotonicNanoseconds() }

    public func sleep(until deadline: UInt64) {
        var ts = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
    }
}

/// Nanoseconds on the monotonic clock (`clock_gettime(CLOCK_MONOTONIC)`).
public func monotonicNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}
