import Foundation
import ScanoutCore

/// The group's time and timeline as a member has them (`SyncService` is one).
public protocol GroupTimeline: AnyObject, Sendable {
    /// The group's time at this member's clock reading `local` (ns); nil before it knows it.
    func groupTime(atLocal local: Int64) -> Int64?
    /// The leader's timeline as last heard; nil before any.
    var currentTimeline: Timeline? { get }
}

extension SyncService: GroupTimeline {
    public func groupTime(atLocal local: Int64) -> Int64? { lock.withLock { node.groupTime(atLocal: local) } }
    public var currentTimeline: Timeline? { lock.withLock { node.timeline } }
}

/// A follower's media clock (`MediaClockSource`, what a `PlaybackSession` paces its video by, as
/// it does by the sound): the stream time the group's timeline gives now, less the group's
/// latency, for the item the follower plays, so that its frames go on its screen when the
/// group's do. It says nothing (nil) while the follower plays another item than the timeline's,
/// another epoch than the one bound, or before it knows the group's time: the session then runs on
/// its own clock.
///
/// `@unchecked Sendable`: `bound` is read and written under `lock`; the rest is immutable.
public final class SyncMediaClock: MediaClockSource, @unchecked Sendable {
    private let group: any GroupTimeline
    /// Subtracted from the group's time: frames are due that much after the timeline's time.
    public let latency: Int64
    private let lock = NSLock()
    private var bound: (epoch: Int, index: Int32, item: String)?

    public init(group: any GroupTimeline, latency: Int64 = 100_000_000) {
        self.group = group
        self.latency = latency
    }

    /// The follower plays playlist entry `index` (source `item`) as the session's epoch `epoch`.
    public func bind(epoch: Int, index: Int32, item: String) { lock.withLock { bound = (epoch, index, item) } }
    public func unbind() { lock.withLock { bound = nil } }

    public func streamTime(at now: ClockTime, epoch: Int) -> Double? {
        guard let b = lock.withLock({ bound }), b.epoch == epoch, let t = group.currentTimeline, t.index == b.index, t.item == b.item,
              let g = group.groupTime(atLocal: Int64(clamping: now.nanoseconds)) else { return nil }
        return Double(t.mediaTime(atGroup: g - latency)) / 1e9
    }
}
