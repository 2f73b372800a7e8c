/// One exchange of four timestamps between a follower and the group's leader, as NTP's on-wire
/// protocol has them: the follower sends at `t1` (its clock), the leader receives at `t2` and
/// answers at `t3` (the leader's clock, which is the group's), the follower receives at `t4`.
/// Nanoseconds, signed, each on its own clock's scale.
public struct ClockExchange: Sendable, Equatable {
    public var t1: Int64
    public var t2: Int64
    public var t3: Int64
    public var t4: Int64

    public init(t1: Int64, t2: Int64, t3: Int64, t4: Int64) {
        self.t1 = t1; self.t2 = t2; self.t3 = t3; self.t4 = t4
    }

    /// The leader's clock minus the follower's, assuming the two directions took as long:
    /// ((t2 − t1) + (t3 − t4)) / 2. Its error is at most half the difference of the two
    /// directions' delays, so at most half the round trip.
    public var offset: Int64 { ((t2 - t1) + (t3 - t4)) / 2 }

    /// The round trip less the leader's own time: (t4 − t1) − (t3 − t2).
    public var roundTrip: Int64 { (t4 - t1) - (t3 - t2) }

    /// The follower's time the offset is measured at: the middle of its send and receive.
    public var localMidpoint: Int64 { t1 + (t4 - t1) / 2 }
}
