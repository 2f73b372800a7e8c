#if canImport(Glibc)
import Glibc
#endif

/// Time for the playback loop and the display, on the monotonic clock (`ClockTime`). One clock is
/// injected everywhere time is read (the session's pacing, the KMS display's verdicts and flip
/// timestamps in the fake), so that a test's manual clock (`ScanoutTesting.ManualClock`) drives
/// them all.
///
/// The real clock sleeps; a manual clock just moves, so pacing and drop decisions can be checked
/// without waiting.
public protocol PlaybackClock: AnyObject {
    func now() -> ClockTime
    /// Returns once `now() >= deadline`.
    func sleep(until deadline: ClockTime)
}

/// `CLOCK_MONOTONIC` (`ClockTime.now()`), sleeping with `clock_nanosleep(TIMER_ABSTIME)` (no drift
/// from repeated relative sleeps).
public final class MonotonicClock: PlaybackClock {
    public init() {}

    public func now() -> ClockTime { ClockTime.now() }

    public func sleep(until deadline: ClockTime) {
        var ts = timespec(tv_sec: Int(deadline.secondsPart), tv_nsec: Int(deadline.nanosecondsPart))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
    }
}
