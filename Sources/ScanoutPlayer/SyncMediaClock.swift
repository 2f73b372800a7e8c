import Foundation
import ScanoutCore

/// A screen's media clock in a sync group (`MediaClockSource`, what a `PlaybackSession` paces
/// its video by in place of the sound: `groupClock`): the media time (seconds from the item's
/// first frame) the group's timeline gives now, for the item this member plays, so that its
/// frames go on its screen when the group's do. It says nothing (nil) while this member plays
/// another item than the timeline's, another epoch than the one bound, or before it knows the
/// group's time: the session then runs on its own clock.
///
/// `@unchecked Sendable`: `bound` is read and written under `lock`; `group` is immutable.
public final class SyncMediaClock: MediaClockSource, @unchecked Sendable {
    public let group: any SyncGroup
    private let lock = NSLock()
    private var bound: (epoch: Int, index: Int32, item: String)?

    public init(group: any SyncGroup) { self.group = group }

    /// This member plays playlist entry `index` (source `item`) as the session's epoch `epoch`.
    public func bind(epoch: Int, index: Int32, item: String) { lock.withLock { bound = (epoch, index, item) } }
    public func unbind() { lock.withLock { bound = nil } }

    /// The timeline, when it is the bound item's.
    public func timeline(epoch: Int) -> SyncTimeline? {
        guard let b = lock.withLock({ bound }), b.epoch == epoch, let t = group.currentTimeline, t.index == b.index, t.item == b.item
        else { return nil }
        return t
    }

    public func streamTime(at now: ClockTime, epoch: Int) -> Double? {
        guard let t = timeline(epoch: epoch), let g = group.groupTime(at: now) else { return nil }
        return Double(t.mediaTime(atGroup: g)) / 1e9
    }
}
