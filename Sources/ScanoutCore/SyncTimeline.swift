import Foundation

/// A sync group's timeline and clock, as a member has them: what the player follows on a
/// screen in lockstep with others (`ScanoutSync`'s `SyncService` is one; the player reads it
/// through `SyncGroup` and never sees the network).

/// The group's timeline as its leader publishes it: item `item` (the playlist entry, by its
/// position `index` and its source) is at media time `mediaTime` when the group's clock reads
/// `groupTime`, going at `rate` (0 when paused). A follower shows, at each vblank, the frame
/// whose media time this line gives for the vblank's group time.
public struct SyncTimeline: Equatable, Sendable {
    /// The leadership the timeline belongs to (rises at each change of leader).
    public var term: UInt64
    public var index: Int32
    public var item: String
    public var mediaTime: Int64
    public var groupTime: Int64
    public var rate: Double
    public var paused: Bool

    public init(term: UInt64, index: Int32, item: String, mediaTime: Int64, groupTime: Int64, rate: Double, paused: Bool) {
        self.term = term; self.index = index; self.item = item; self.mediaTime = mediaTime
        self.groupTime = groupTime; self.rate = rate; self.paused = paused
    }

    /// The media time at group time `t` (ns): frozen while paused.
    public func mediaTime(atGroup t: Int64) -> Int64 {
        paused ? mediaTime : mediaTime + Int64((Double(t - groupTime) * rate).rounded())
    }
}

/// A member of a sync group as the player sees it: the group's clock, the leader's timeline, and,
/// while this member leads, the way to set it.
public protocol SyncGroup: AnyObject, Sendable {
    /// The group's time (ns) at `now` on the player's clock (`CLOCK_MONOTONIC`); nil before this
    /// member knows it.
    func groupTime(at now: ClockTime) -> Int64?
    /// The leader's timeline as last heard (or set); nil before any.
    var currentTimeline: SyncTimeline? { get }
    /// Whether this member leads the group now.
    var isLeading: Bool { get }
    /// Leadership and lock now.
    var groupState: SyncGroupState { get }
    /// Sets the group's timeline (ignored unless this member leads).
    func publish(_ t: SyncTimeline)
}

/// Where a member stands in its group: whether it leads, whom it follows, and whether it has the
/// group's clock (a leader always has).
public struct SyncGroupState: Equatable, Sendable {
    public var leading: Bool
    public var leader: UInt64?
    public var term: UInt64
    public var locked: Bool

    public init(leading: Bool, leader: UInt64?, term: UInt64, locked: Bool) {
        self.leading = leading; self.leader = leader; self.term = term; self.locked = locked
    }
}

extension SyncGroupState {
    /// A member's id as `GET /sync` and the events write it: 16 hex digits.
    public static func name(of member: UInt64) -> String { String(format: "%016llx", member) }
}
