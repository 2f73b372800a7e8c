import ScanoutCore
/// What a sync group's members say to each other. Every message carries its sender (a random id
/// per run), a sequence number (per sender, rising by one per message) and the sender's time on
/// the group's clock when it sent it; the codec (`SyncCodec`) adds the group and the key's tag.
public struct SyncMessage: Equatable, Sendable {
    public enum Body: Equatable, Sendable {
        /// A follower asks the leader for the time: `t1` on the follower's clock; `nonce` matches
        /// the answer to the question.
        case timeRequest(nonce: UInt64, t1: Int64)
        /// The leader answers `follower`'s question `nonce`: the follower's `t1` echoed, the
        /// leader's receive `t2` and send `t3` (the group's clock).
        case timeResponse(follower: UInt64, nonce: UInt64, t1: Int64, t2: Int64, t3: Int64)
        /// The leader's timeline: what plays and where it is on the group's clock.
        case timeline(SyncTimeline)
        /// A member that may lead (role `auto` or `leader`) says so: the highest `priority` leads,
        /// ties to the lowest sender id; `term` counts the leaderships the sender has seen.
        case announce(priority: UInt32, term: UInt64)
    }

    public var sender: UInt64
    public var sequence: UInt64
    /// The sender's reading of the group's clock when it sent (ns); a follower not yet in lock
    /// sends its own clock's.
    public var sentAt: Int64
    public var body: Body

    public init(sender: UInt64, sequence: UInt64, sentAt: Int64, body: Body) {
        self.sender = sender; self.sequence = sequence; self.sentAt = sentAt; self.body = body
    }
}
