#if canImport(Glibc)
import Glibc
#endif

/// A time on the monotonic clock (`CLOCK_MONOTONIC`), in nanoseconds since the system booted: when
/// a frame is due, a vblank happened, a sample was heard, a read started. Spans between two clock
/// times are Swift's `Duration`: `later - earlier` is a `Duration`, `time + duration` a time.
///
/// Clock time is not media time. A position in a stream (seconds on the container's timeline, a
/// `Double`) and a pts (an `Int64` in its stream's time base) are another quantity: the player maps
/// one to the other (`PlaybackSession`), and neither is ever a `ClockTime` or a `Duration`.
///
/// `ClockTime.now()` is the one place the monotonic clock is read; code that paces playback reads
/// the time through an injected `PlaybackClock` instead, so that a test's manual clock drives it.
/// A time before the clock's origin does not exist: subtracting past zero traps, as `UInt64` does.
public struct ClockTime: Comparable, Hashable, Sendable, CustomStringConvertible {
    /// Nanoseconds since the clock's origin (boot, for `CLOCK_MONOTONIC`).
    public var nanoseconds: UInt64

    public init(nanoseconds: UInt64) { self.nanoseconds = nanoseconds }

    /// The clock's origin: before any reading of `now()`; a manual clock may start there.
    public static let zero = ClockTime(nanoseconds: 0)

    /// `clock_gettime(CLOCK_MONOTONIC)`.
    public static func now() -> ClockTime {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return ClockTime(nanoseconds: UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec))
    }

    /// The time since the clock's origin: `nanoseconds` as a span.
    public var sinceOrigin: Duration { .nanoseconds(Int64(nanoseconds)) }

    /// Seconds and nanoseconds, as `timespec` and the kernel's event stamps split them.
    public var secondsPart: UInt64 { nanoseconds / 1_000_000_000 }
    public var nanosecondsPart: UInt64 { nanoseconds % 1_000_000_000 }

    /// A time from the kernel's split seconds and microseconds (a DRM event's `tv_sec`/`tv_usec`).
    public init(seconds: UInt64, microseconds: UInt64) {
        nanoseconds = seconds * 1_000_000_000 + microseconds * 1_000
    }

    /// Seconds since the origin, with nine decimals: "12.000000345s".
    public var description: String {
        let fraction = String(nanosecondsPart)
        return "\(secondsPart).\(String(repeating: "0", count: 9 - fraction.count))\(fraction)s"
    }

    public static func < (a: ClockTime, b: ClockTime) -> Bool { a.nanoseconds < b.nanoseconds }

    public static func + (t: ClockTime, d: Duration) -> ClockTime {
        let n = d.nanosecondCount
        return ClockTime(nanoseconds: n >= 0 ? t.nanoseconds + UInt64(n) : t.nanoseconds - n.magnitude)
    }

    public static func + (d: Duration, t: ClockTime) -> ClockTime { t + d }

    public static func - (t: ClockTime, d: Duration) -> ClockTime { t + (.zero - d) }

    /// The span from `b` to `a`: negative when `a` is earlier.
    public static func - (a: ClockTime, b: ClockTime) -> Duration {
        a >= b ? .nanoseconds(Int64(a.nanoseconds - b.nanoseconds))
               : .nanoseconds(-Int64(b.nanoseconds - a.nanoseconds))
    }

    public static func += (t: inout ClockTime, d: Duration) { t = t + d }
    public static func -= (t: inout ClockTime, d: Duration) { t = t - d }
}

extension Duration {
    /// The span in whole nanoseconds, rounded to the nearest (a span made from nanoseconds gives
    /// them back exactly).
    public var nanosecondCount: Int64 {
        let (seconds, attoseconds) = components
        let (nanos, rest) = attoseconds.quotientAndRemainder(dividingBy: 1_000_000_000)
        let rounded = rest >= 500_000_000 ? nanos + 1 : rest <= -500_000_000 ? nanos - 1 : nanos
        return seconds * 1_000_000_000 + rounded
    }

    /// The span in seconds, as a `Double`, to the nanosecond (`Double(nanosecondCount) / 1e9`):
    /// for rates, logs and the seconds printed in reports.
    public var secondsValue: Double { Double(nanosecondCount) / 1e9 }

    /// A span of `seconds` (a `Double`, as configuration and options give it) cut to whole
    /// nanoseconds toward zero, as `UInt64(seconds * 1e9)` did.
    public static func nanoseconds(inSeconds seconds: Double) -> Duration {
        .nanoseconds(Int64(seconds * 1e9))
    }
}
