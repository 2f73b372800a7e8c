import ScanoutCore
import Foundation
import ScanoutSync
import Testing

@Suite("the group's socket: multicast on one host")
struct MulticastSocketTests {
    @Test("two members on this host hear each other's datagrams on the loopback interface; a unicast address is refused")
    func loopback() throws {
        #expect(throws: SyncSocketError.self) { try MulticastSocket(group: "10.0.0.1", port: 5398, interface: "lo") }
        let port = UInt16(40_000 + Int.random(in: 0..<20_000))
        let a = try MulticastSocket(group: "239.255.42.42", port: port, interface: "lo")
        let b = try MulticastSocket(group: "239.255.42.42", port: port, interface: "lo")
        try a.send([1, 2, 3])
        // b hears it; so does a itself (the loop), which a member drops by its sender id.
        #expect(b.receive(within: 1000) == [1, 2, 3])
        #expect(a.receive(within: 1000) == [1, 2, 3])
        try b.send(Array(repeating: 7, count: 1400))
        #expect(a.receive(within: 1000)?.count == 1400)
    }
}

@Suite("sync members on the network: two on this host over loopback multicast")
struct SyncServiceTests {
    @Test("a leader and a follower: the follower in lock within 2 s, on the leader's clock within 2 ms, with its timeline; a member with another key is refused")
    func leaderAndFollower() throws {
        let port = UInt16(40_000 + Int.random(in: 0..<20_000))
        let key = Array("the group's key, 32 bytes long!!".utf8)
        let leader = try SyncService(settings: SyncSettings(group: "lobby", role: .leader, priority: 200, port: port, interface: "lo", key: key), id: 1)
        let follower = try SyncService(settings: SyncSettings(group: "lobby", role: .follower, port: port, interface: "lo", key: key), id: 2)
        let stranger = try SyncService(settings: SyncSettings(group: "lobby", role: .auto, priority: 999, port: port, interface: "lo",
                                                              key: Array("not the group's key at all, no!!".utf8)), id: 3)
        let started = Date()
        leader.start(); follower.start(); stranger.start()
        defer { leader.stop(); follower.stop(); stranger.stop() }
        // The leader leads from its first tick.
        while leader.groupTime() == nil, Date().timeIntervalSince(started) < 1 { Thread.sleep(forTimeInterval: 0.005) }
        leader.publish(SyncTimeline(term: 0, index: 3, item: "clip.mp4", mediaTime: 0, groupTime: try #require(leader.groupTime()), rate: 1, paused: false))
        var lockedAfter: Double?
        while Date().timeIntervalSince(started) < 3 {
            if lockedAfter == nil, follower.status().node.locked { lockedAfter = Date().timeIntervalSince(started) }
            Thread.sleep(forTimeInterval: 0.01)
        }
        let s = follower.status()
        #expect(try #require(lockedAfter) < 2)
        #expect(s.node.leader == 1 && s.node.locked)
        #expect(s.timeline?.item == "clip.mp4" && s.timeline?.index == 3)
        // Both on one machine: the follower's estimate of the leader's clock against the leader's.
        let difference = abs(try #require(follower.groupTime()) - (try #require(leader.groupTime())))
        #expect(difference < 2_000_000, "\(difference) ns")
        // The stranger's announces (a higher priority, the wrong key) change nothing; it counts
        // the group's datagrams as refused.
        #expect(leader.status().counters.refused > 0 && stranger.status().counters.refused > 0)
        #expect(leader.status().node.leading)
        print("sync over loopback: locked after \(lockedAfter!) s, \(Double(difference) / 1e6) ms off, \(s.node.exchanges) exchanges")
    }
}
