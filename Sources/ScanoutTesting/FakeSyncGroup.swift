import Foundation
import ScanoutCore

/// A sync group as a player sees it, set by hand: the group's time is the player's clock plus
/// `offset`; the timeline is whatever the test sets, or what this member publishes while it
/// leads (every publish kept in `published`).
///
/// `@unchecked Sendable`: every stored property is read and written under `lock`.
public final class FakeSyncGroup: SyncGroup, @unchecked Sendable {
    private let lock = NSLock()
    private var _offset: Int64
    private var _timeline: SyncTimeline?
    private var _state: SyncGroupState
    private var _published: [SyncTimeline] = []

    public init(offset: Int64 = 7_000_000_000, leading: Bool) {
        _offset = offset
        _state = SyncGroupState(leading: leading, leader: leading ? 1 : 2, term: 1, locked: true)
    }

    public var offset: Int64 {
        get { lock.withLock { _offset } }
        set { lock.withLock { _offset = newValue } }
    }
    public var timeline: SyncTimeline? {
        get { lock.withLock { _timeline } }
        set { lock.withLock { _timeline = newValue } }
    }
    public var state: SyncGroupState {
        get { lock.withLock { _state } }
        set { lock.withLock { _state = newValue } }
    }
    public var published: [SyncTimeline] { lock.withLock { _published } }

    public func groupTime(at now: ClockTime) -> Int64? { Int64(now.nanoseconds) + offset }
    public var currentTimeline: SyncTimeline? { timeline }
    public var isLeading: Bool { state.leading }
    public var groupState: SyncGroupState { state }
    public func publish(_ t: SyncTimeline) {
        lock.withLock {
            guard _state.leading else { return }
            var t = t
            t.term = _state.term
            _timeline = t
            _published.append(t)
        }
    }
}
