import ScanoutMedia
#if canImport(Glibc)
import Glibc
#endif

/// Time for the playback loop, in nanoseconds on a monotonic scale.
///
/// The real clock sleeps; a test's manual clock just moves, so pacing and drop decisions can be
/// checked without waiting.
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

/// A clock that only moves when told to, or when something sleeps on it. For tests.
public final class ManualClock: PlaybackClock {
    public private(set) var time: UInt64
    public init(start: UInt64 = 1_000_000_000) { time = start }
    public func now() -> UInt64 { time }
    public func sleep(until deadline: UInt64) { time = max(time, deadline) }
    public func advance(by nanoseconds: UInt64) { time += nanoseconds }
}
