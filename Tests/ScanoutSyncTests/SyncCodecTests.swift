import ScanoutCore
import ScanoutSync
import Testing

@Suite("sync messages on the wire: the group's key, replays and stale messages refused")
struct SyncCodecTests {
    static let key = Array("0123456789abcdef0123456789abcdef".utf8)

    static let messages: [SyncMessage] = [
        SyncMessage(sender: 7, sequence: 1, sentAt: -5, body: .timeRequest(nonce: 99, t1: 123_456_789)),
        SyncMessage(sender: 1, sequence: 2, sentAt: 1_000, body: .timeResponse(follower: 7, nonce: 99, t1: 123_456_789, t2: 2_000_000_000, t3: 2_000_100_000)),
        SyncMessage(sender: 1, sequence: 3, sentAt: 2_000, body: .timeline(SyncTimeline(term: 4, index: 2, item: "/srv/media/clip é.mp4", mediaTime: 12_345_678,
                                                                                   groupTime: 9_000_000_000, rate: 1.0, paused: false))),
        SyncMessage(sender: .max, sequence: .max, sentAt: .min, body: .announce(priority: 10, term: 4)),
    ]

    @Test("every message comes back as it went")
    func roundTrip() throws {
        let codec = try SyncCodec(group: "lobby", key: Self.key)
        for m in Self.messages {
            let wire = try codec.encode(m)
            #expect(Array(wire.prefix(4)) == Array("SCSY".utf8))
            #expect(try codec.decode(wire) == m)
        }
    }

    @Test("another key, another group, a flipped bit anywhere, a cut or padded datagram: refused, naming why")
    func refusals() throws {
        let codec = try SyncCodec(group: "lobby", key: Self.key)
        let wire = try codec.encode(Self.messages[2])
        #expect(throws: SyncCodecError.badTag) { try SyncCodec(group: "lobby", key: Array("another key, 16+ bytes".utf8)).decode(wire) }
        #expect(throws: SyncCodecError.otherGroup) { try SyncCodec(group: "window", key: Self.key).decode(wire) }
        for i in wire.indices {
            var bad = wire
            bad[i] ^= 0x10
            #expect(throws: SyncCodecError.self) { try codec.decode(bad) }
        }
        #expect(throws: SyncCodecError.self) { try codec.decode(Array(wire.dropLast())) }
        #expect(throws: SyncCodecError.self) { try codec.decode(wire + [0]) }
        #expect(throws: SyncCodecError.self) { try codec.decode([]) }
        #expect(throws: SyncCodecError.badConfiguration("key: at least 16 bytes (give 32 random bytes)")) { try SyncCodec(group: "lobby", key: [1, 2, 3]) }
        let long = SyncMessage(sender: 1, sequence: 1, sentAt: 0, body: .timeline(SyncTimeline(term: 1, index: 0, item: String(repeating: "x", count: 1025),
                                                                                          mediaTime: 0, groupTime: 0, rate: 1, paused: false)))
        #expect(throws: SyncCodecError.self) { try codec.encode(long) }
    }

    @Test("a message taken once; reordered ones within 64 taken; a replay, one too far back or too old refused")
    func replays() {
        var guardian = ReplayGuard(maxAge: 2_000_000_000)
        func m(_ sender: UInt64, _ seq: UInt64, at t: Int64 = 0) -> SyncMessage {
            SyncMessage(sender: sender, sequence: seq, sentAt: t, body: .announce(priority: 1, term: 1))
        }
        #expect(guardian.check(m(1, 10), groupNow: 0) == .fresh)
        #expect(guardian.check(m(1, 10), groupNow: 0) == .replayed)
        #expect(guardian.check(m(1, 12), groupNow: 0) == .fresh)
        #expect(guardian.check(m(1, 11), groupNow: 0) == .fresh)   // late, not seen: taken
        #expect(guardian.check(m(1, 11), groupNow: 0) == .replayed)
        #expect(guardian.check(m(2, 11), groupNow: 0) == .fresh)   // another sender's own count
        #expect(guardian.check(m(1, 100), groupNow: 0) == .fresh)
        #expect(guardian.check(m(1, 37), groupNow: 0) == .fresh)   // 63 back: the window's last
        #expect(guardian.check(m(1, 37), groupNow: 0) == .replayed)
        #expect(guardian.check(m(1, 36), groupNow: 0) == .replayed) // 64 back, past it: refused
        #expect(guardian.check(m(3, 1, at: 0), groupNow: 2_500_000_000) == .stale(ageNanoseconds: 2_500_000_000))
        #expect(guardian.check(m(3, 1, at: 5_000_000_000), groupNow: 2_500_000_000) == .stale(ageNanoseconds: -2_500_000_000))
        // Before the receiver knows the group's time, age is not judged.
        #expect(guardian.check(m(3, 1, at: 0), groupNow: nil) == .fresh)
    }

    @Test("a timeline gives the media time at any group time; paused, it stands")
    func timeline() {
        let t = SyncTimeline(term: 1, index: 0, item: "a", mediaTime: 1_000_000_000, groupTime: 10_000_000_000, rate: 1, paused: false)
        #expect(t.mediaTime(atGroup: 10_500_000_000) == 1_500_000_000)
        var fast = t
        fast.rate = 2
        #expect(fast.mediaTime(atGroup: 9_000_000_000) == -1_000_000_000)
        var paused = t
        paused.paused = true
        #expect(paused.mediaTime(atGroup: 99_000_000_000) == 1_000_000_000)
    }
}
