import Foundation
import ScanoutCore

/// A clock that only moves when told to, or when something sleeps on it. For tests: one instance
/// given to the session, the display, the fake device and the fake audio sink times them all.
///
/// `@unchecked Sendable`: the time and the observers are read and written under `lock` only, so
/// another thread (an audio output's) may read it while the test moves it.
public final class ManualClock: PlaybackClock, @unchecked Sendable {
    private let lock = NSLock()
    private var current: UInt64
    private var observers: [@Sendable () -> Void] = []

    public init(start: UInt64 = 1_000_000_000) { current = start }

    /// Now, in nanoseconds; a test may set it.
    public var time: UInt64 {
        get { lock.withLock { current } }
        set { move { _ in newValue } }
    }

    public func now() -> UInt64 { time }
    public func sleep(until deadline: UInt64) { move { max($0, deadline) } }
    public func advance(by nanoseconds: UInt64) { move { $0 + nanoseconds } }

    /// Calls `observer` after every change of the time (outside the clock's lock, on the thread
    /// that changed it): how a fake that waits on this clock hears it move.
    public func onChange(_ observer: @escaping @Sendable () -> Void) {
        lock.withLock { observers.append(observer) }
    }

    private func move(_ to: (UInt64) -> UInt64) {
        let told = lock.withLock {
            current = to(current)
            return observers
        }
        for observer in told { observer() }
    }
}
