/// Refuses a sync message seen before (a replay) or sent too long ago (a stale one), after its tag
/// was checked. Per sender: the highest sequence number taken and a 64-message window below it,
/// as IPsec's anti-replay does, so that messages reordered by the network are still taken once.
/// The sender's group time (`SyncMessage.sentAt`) must be within `maxAge` of the receiver's, once
/// the receiver knows the group's time: an old message replayed to a member that has restarted
/// (and forgotten the sequences) is refused by its age.
public struct ReplayGuard: Sendable {
    public enum Verdict: Equatable, Sendable {
        case fresh
        case replayed
        case stale(ageNanoseconds: Int64)
    }

    public let maxAge: Int64
    /// Senders remembered at most (their keyholders are the group's members).
    public let maxSenders: Int
    private var senders: [UInt64: (highest: UInt64, window: UInt64, lastSeen: Int64)] = [:]

    public init(maxAge: Int64 = 2_000_000_000, maxSenders: Int = 256) {
        self.maxAge = maxAge
        self.maxSenders = maxSenders
    }

    /// Judges `m`, received when the group's clock read `groupNow` (nil before the receiver has
    /// the group's time: the age is then not judged), and remembers it when fresh.
    public mutating func check(_ m: SyncMessage, groupNow: Int64?) -> Verdict {
        if let now = groupNow, abs(now - m.sentAt) > maxAge { return .stale(ageNanoseconds: now - m.sentAt) }
        let stamp = groupNow ?? m.sentAt
        guard var s = senders[m.sender] else {
            if senders.count >= maxSenders, let oldest = senders.min(by: { $0.value.lastSeen < $1.value.lastSeen })?.key {
                senders[oldest] = nil
            }
            senders[m.sender] = (m.sequence, 1, stamp)
            return .fresh
        }
        if m.sequence > s.highest {
            let shift = m.sequence - s.highest
            s.window = shift >= 64 ? 1 : (s.window << shift) | 1
            s.highest = m.sequence
        } else {
            let back = s.highest - m.sequence
            guard back < 64, s.window & (1 << back) == 0 else { return .replayed }
            s.window |= 1 << back
        }
        s.lastSeen = stamp
        senders[m.sender] = s
        return .fresh
    }
}
