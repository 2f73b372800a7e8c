import ScanoutCore
import ScanoutDemux
import ScanoutDecode

/// A clock that only moves when told to, or when something sleeps on it. For tests: one instance
/// given to the session, the display and the fake device times them all.
public final class ManualClock: PlaybackClock {
    /// Now, in nanoseconds; a test may set it.
    public var time: UInt64
    public init(start: UInt64 = 1_000_000_000) { time = start }
    public func now() -> UInt64 { time }
    public func sleep(until deadline: UInt64) { time = max(time, deadline) }
    public func advance(by nanoseconds: UInt64) { time += nanoseconds }
}
