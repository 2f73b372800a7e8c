import ScanoutCore
import ScanoutSync
import Testing

/// A sync group in virtual time: each member's clock runs from its own offset at its own rate;
/// every datagram goes through the codec to every other member, `delay` plus up to `jitter`
/// later, `loss` of them never arriving. Members tick every 10 ms.
struct VirtualGroup {
    struct Member {
        var node: SyncNode
        var offset: Int64
        var skew: Double
        var alive = true
        func local(_ t: Int64) -> Int64 { offset + Int64((Double(t) * (1 + skew)).rounded()) }
    }

    var members: [Member]
    var delay: Int64 = 5_000_000
    var jitter: Int64 = 4_000_000
    var loss = 0.01
    var random = SplitMix(seed: 11)
    let codec: SyncCodec
    private var inFlight: [(at: Int64, to: Int, datagram: [UInt8])] = []
    var now: Int64 = 0

    init(_ members: [Member]) throws {
        self.members = members
        codec = try SyncCodec(group: "wall", key: Array("a group key of 32 bytes, or more".utf8))
    }

    /// Sends `messages` from member `i` at true time `at` (now when nil).
    mutating func send(_ messages: [SyncMessage], from i: Int, at: Int64? = nil) throws {
        let departure = at ?? now
        for m in messages {
            let datagram = try codec.encode(m)
            for j in members.indices where j != i {
                if random.unit() < loss { continue }
                inFlight.append((departure + delay + Int64(random.unit() * Double(jitter)), j, datagram))
            }
        }
    }

    /// Runs to true time `end`, calling `check` after every step.
    mutating func run(until end: Int64, check: (VirtualGroup) -> Void = { _ in }) throws {
        while now < end {
            now += 10_000_000
            let due = inFlight.filter { $0.at <= now }.sorted { $0.at < $1.at }
            inFlight.removeAll { $0.at <= now }
            for d in due where members[d.to].alive {
                let m = try codec.decode(d.datagram)
                let answer = members[d.to].node.receive(m, atLocal: members[d.to].local(d.at))
                try send(answer, from: d.to, at: d.at)
            }
            for i in members.indices where members[i].alive {
                let out = members[i].node.tick(atLocal: members[i].local(now))
                try send(out, from: i)
            }
            check(self)
        }
    }

    /// How far member `i`'s reading of the group's time is from `reference`'s, now (ns).
    func error(_ i: Int, against reference: Int64) -> Int64? {
        members[i].node.groupTime(atLocal: members[i].local(now)).map { $0 - reference }
    }
}

@Suite("a sync group: one leader, followers in lock, a failover")
struct SyncGroupTests {
    static func members() -> [VirtualGroup.Member] {
        [
            .init(node: SyncNode(id: 1, configuration: .init(role: .leader, priority: 200)), offset: 0, skew: 0),
            .init(node: SyncNode(id: 2, configuration: .init(role: .auto, priority: 150)), offset: 3_200_000_000, skew: 100e-6),
            .init(node: SyncNode(id: 3, configuration: .init(role: .follower)), offset: -1_500_000_000, skew: -100e-6),
            .init(node: SyncNode(id: 4, configuration: .init(role: .auto, priority: 100)), offset: 7_000_000_000, skew: 50e-6),
        ]
    }

    @Test("seconds apart and ±100 ppm over 5 ms ± 2 ms of jitter and 1 % loss: all in lock within 2 s, then within 1 ms of the leader's clock")
    func lock() throws {
        var group = try VirtualGroup(Self.members())
        var lockedAt: Int64?
        var worst: Int64 = 0
        try group.run(until: 10_000_000_000) { g in
            let followers = 1..<4
            // The leader's clock is true time (member 1: no offset, no skew).
            let all = followers.allSatisfy { i in
                g.members[i].node.status(atLocal: g.members[i].local(g.now)).locked && abs(g.error(i, against: g.now) ?? .max) < 1_000_000
            }
            if all, lockedAt == nil { lockedAt = g.now }
            if lockedAt != nil { for i in followers { worst = max(worst, abs(g.error(i, against: g.now) ?? .max)) } }
        }
        let at = try #require(lockedAt)
        print("group in lock at \(Double(at) / 1e9) s; worst error after: \(Double(worst) / 1e6) ms")
        #expect(at <= 2_000_000_000)
        #expect(worst < 1_000_000)
        #expect(group.members.allSatisfy { $0.node.leader == 1 && $0.node.term == group.members[0].node.term })
        #expect(group.members.map { $0.node.leading } == [true, false, false, false])
    }

    @Test("the leader falls silent: the next in priority leads within 2.5 s, on the same group time, and the timeline goes on")
    func failover() throws {
        var group = try VirtualGroup(Self.members())
        try group.run(until: 1_000_000_000)
        // Only the leader's timeline counts: one published before it leads is dropped.
        group.members[0].node.publish(SyncTimeline(term: 0, index: 1, item: "clip.mp4", mediaTime: 0, groupTime: 1_000_000_000, rate: 1, paused: false))
        #expect(group.members[0].node.leading && group.members[0].node.timeline != nil)
        group.members[1].node.publish(SyncTimeline(term: 0, index: 2, item: "other.mp4", mediaTime: 0, groupTime: 1_000_000_000, rate: 1, paused: false))
        try group.run(until: 5_000_000_000)
        #expect(group.members[1...].allSatisfy { $0.node.timeline?.item == "clip.mp4" })
        let firstTerm = group.members[1].node.term
        group.members[0].alive = false
        var tookOver: Int64?
        var worst: Int64 = 0
        try group.run(until: 12_000_000_000) { g in
            if tookOver == nil, (1..<4).allSatisfy({ g.members[$0].node.leader == 2 }) { tookOver = g.now }
            // The group's time stays the old leader's (true time) through the handover.
            for i in 1..<4 { worst = max(worst, abs(g.error(i, against: g.now) ?? .max)) }
        }
        let at = try #require(tookOver)
        print("member 2 leads \(Double(at - 5_000_000_000) / 1e9) s after the leader's last word; worst error \(Double(worst) / 1e6) ms")
        #expect(at - 5_000_000_000 <= 2_500_000_000)
        // Through the handover the followers' estimates go on against the new leader's frozen model
        // of the old clock: errors of 0.83 to 1.03 ms were seen, an eighth of a refresh at most.
        #expect(worst < 2_000_000)
        #expect(group.members[1].node.leading && group.members[1].node.term == firstTerm + 1)
        #expect(group.members[2...].allSatisfy { $0.node.timeline?.item == "clip.mp4" && $0.node.timeline?.term == firstTerm + 1 })
        #expect(group.members[2].node.status(atLocal: group.members[2].local(group.now)).locked)
    }

    @Test("a member with the key but a message replayed, or a message altered, changes nothing")
    func replayedTimeline() throws {
        var leader = SyncNode(id: 1, configuration: .init(role: .leader))
        var follower = SyncNode(id: 2, configuration: .init(role: .follower))
        let announce = leader.tick(atLocal: 0)
        for m in announce { _ = follower.receive(m, atLocal: 1_000) }
        #expect(follower.leader == 1)
        leader.publish(SyncTimeline(term: 0, index: 0, item: "a.mp4", mediaTime: 0, groupTime: 0, rate: 1, paused: false))
        let first = leader.tick(atLocal: 10).filter { if case .timeline = $0.body { true } else { false } }
        #expect(first.count == 1)
        _ = follower.receive(first[0], atLocal: 2_000)
        leader.publish(SyncTimeline(term: 0, index: 1, item: "b.mp4", mediaTime: 0, groupTime: 0, rate: 1, paused: false))
        let second = leader.tick(atLocal: 20).filter { if case .timeline = $0.body { true } else { false } }
        _ = follower.receive(second[0], atLocal: 3_000)
        #expect(follower.timeline?.item == "b.mp4")
        // The first timeline replayed: refused, "b" stays.
        _ = follower.receive(first[0], atLocal: 4_000)
        #expect(follower.timeline?.item == "b.mp4")
    }
}
