import Foundation
import ScanoutCore

/// A clock that only moves when told to, or when something sleeps on it. For tests: one instance
/// given to the session, the display, the fake device and the fake audio sink times them all.
///
/// `@unchecked Sendable`: the time and the observers are read and written under `lock` only, so
/// another thread (an audio output's) may read it while the test moves it.
public final class ManualClock: PlaybackClock, @unchecked Sendable {
    private let lock = NSLock()
    private var current: ClockTime
    private var observers: [@Sendable () -> Void] = []

    /// A clock at `start` (one second after the origin unless told).
    public init(start: ClockTime = ClockTime(nanoseconds: 1_000_000_000)) { current = start }

    /// Now; a test may set it.
    public var time: ClockTime {
        get { lock.withLock { current } }
        set { move { _ in newValue } }
    }

    public func now() -> ClockTime { time }
    public func sleep(until deadline: ClockTime) { move { max($0, deadline) } }
    public func advance(by span: Duration) { move { $0 + span } }

    /// Calls `observer` after every change of the time (outside the clock's lock, on the thread
    /// that changed it): how a fake that waits on this clock hears it move.
    public func onChange(_ observer: @escaping @Sendable () -> Void) {
        lock.withLock { observers.append(observer) }
    }

    private func move(_ to: (ClockTime) -> ClockTime) {
        let told = lock.withLock {
            current = to(current)
            return observers
        }
        for observer in told { observer() }
    }
}
