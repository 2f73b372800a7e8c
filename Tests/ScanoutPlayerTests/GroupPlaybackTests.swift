import Foundation
import ScanoutCore
import ScanoutPlayer
import ScanoutTestSupport
import ScanoutTesting
import Testing

/// A player in a sync group, on a manual clock with a fake group: the follower's frames at their
/// due times on the group's timeline, its joins, items and pauses; the leader's timeline.
@Suite("a player in a sync group: following the leader's timeline, or setting it")
struct GroupPlaybackTests {
    /// The clock time at which the timeline `t` reaches media time `media` (s), for a group
    /// `offset` ahead of the clock.
    func due(_ media: Double, _ t: SyncTimeline, offset: Int64) -> Int64 {
        t.groupTime + Int64(((media - Double(t.mediaTime) / 1e9) * 1e9).rounded()) - offset
    }

    @Test("a follower that joins mid-item seeks exactly to where the group will be, then shows every frame at its due time on the group's timeline")
    func followerJoinsMidItem() throws {
        let h = Harness()
        let path = try Fixtures.path("counter.mp4")
        try h.engine.load([PlaylistItem(source: path)])
        let group = FakeSyncGroup(leading: false)
        let t = SyncTimeline(term: 1, index: 0, item: path, mediaTime: 1_500_000_000,
                             groupTime: Int64(h.clock.now().nanoseconds) + group.offset, rate: 1, paused: false)
        group.timeline = t
        let playback = GroupPlayback(group: group)
        h.engine.attach(playback)
        h.run { (h.display.shown.last?.code ?? 0) >= 90 || h.engine.state == .ended }
        #expect(playback.stats.seeks == 1)
        // The seek lands 0.5 s ahead of the group (frame 60 at 2.0 s), shown at once; from then on
        // every frame follows, each at the instant the group's timeline reaches it.
        let codes = h.display.shown.map(\.code)
        let first = try #require(codes.firstIndex(of: 60))
        #expect(Array(codes[first...]) == Array(60...(60 + codes.count - first - 1)))
        let after = h.display.shown[(first + 1)...]
        #expect(!after.isEmpty)
        let worst = after.map { abs(Int64($0.at.nanoseconds) - due(Double($0.code) / 30, t, offset: group.offset)) }.max() ?? .max
        #expect(worst <= 1_000)   // ns: the manual clock sleeps to the instant
        #expect(playback.stats.framesOnTime == after.count && playback.stats.framesLate == 0 && playback.stats.framesEarly == 0)
        #expect(h.events.contains(.play(userInitiated: false)))
    }

    /// Turns the engine as the service's loop does: at once while it plays, every 50 ms while it
    /// does not (`nextWakeup`).
    func turn(_ h: Harness, limit: Int = 400, until done: () -> Bool) {
        for _ in 0..<limit where !done() {
            h.engine.tick()
            if !h.engine.isRunning { h.clock.advance(by: .milliseconds(50)) }
        }
    }

    @Test("a follower plays the timeline's item once it has differed for the settle time, pauses with it on the exact frame, and resumes with it")
    func followerItemsAndPause() throws {
        let scratch = try Scratch()
        let a = scratch.path("a.mp4"), b = scratch.path("b.mp4")
        try FileManager.default.copyItem(atPath: try Fixtures.path("counter.mp4"), toPath: a)
        try FileManager.default.copyItem(atPath: try Fixtures.path("counter.mp4"), toPath: b)
        let h = Harness()
        try h.engine.load([PlaylistItem(source: a), PlaylistItem(source: b)])
        let group = FakeSyncGroup(leading: false)
        let playback = GroupPlayback(group: group)
        h.engine.attach(playback)
        let start = Int64(h.clock.now().nanoseconds) + group.offset
        // The group plays b from 0.2 s now: this member, ready on a, changes item after 0.75 s.
        group.timeline = SyncTimeline(term: 1, index: 1, item: b, mediaTime: 200_000_000, groupTime: start, rate: 1, paused: false)
        turn(h) { h.engine.index == 1 && h.engine.state == .playing }
        h.run(limit: 2000) { h.display.shown.count > 3 }
        #expect(h.engine.index == 1 && playback.stats.itemChanges == 1)
        // Paused by the group at 1.5 s of b (frame 45): the member pauses and shows that frame.
        group.timeline = SyncTimeline(term: 1, index: 1, item: b, mediaTime: 1_500_000_000, groupTime: start, rate: 1, paused: true)
        turn(h) { h.engine.state == .paused && h.display.shown.last?.code == 45 }
        #expect(h.engine.state == .paused && h.display.shown.last?.code == 45)
        // Resumed: frame 46 on at the group's time for it.
        let resumed = SyncTimeline(term: 1, index: 1, item: b, mediaTime: 1_500_000_000, groupTime: Int64(h.clock.now().nanoseconds) + group.offset + 200_000_000,
                                   rate: 1, paused: false)
        group.timeline = resumed
        let shownBefore = h.display.shown.count
        h.run(limit: 2000) { h.display.shown.count >= shownBefore + 10 }
        let next = h.display.shown[shownBefore...].filter { $0.code > 45 }
        #expect(next.first?.code == 46)
        #expect(next.allSatisfy { abs(Int64($0.at.nanoseconds) - due(Double($0.code) / 30, resumed, offset: group.offset)) <= 1_000 })
    }

    @Test("the leader publishes the first frame's due time on the group's clock, nothing more while its frames stay on that line, then its pause and its resume")
    func leaderPublishes() throws {
        let h = Harness()
        let path = try Fixtures.path("counter.mp4")
        try h.engine.load([PlaylistItem(source: path)])
        let group = FakeSyncGroup(leading: true)
        let playback = GroupPlayback(group: group)
        h.engine.attach(playback)
        playback.pendingAutoplay = true
        h.run(limit: 2000) { (h.display.shown.last?.code ?? 0) >= 30 }
        // It started by itself, its first frame `startLead` later than its start.
        #expect(group.published.count == 1)
        let first = try #require(group.published.first)
        let firstShown = try #require(h.display.shown.first)
        #expect(first.index == 0 && first.item == path && first.mediaTime == 0 && !first.paused && first.rate == 1)
        #expect(first.groupTime == Int64(firstShown.at.nanoseconds) + group.offset)
        try h.engine.pause()
        h.engine.tick()
        let paused = try #require(group.published.last)
        #expect(group.published.count == 2 && paused.paused && paused.mediaTime == Int64((h.engine.position * 1e9).rounded()))
        try h.engine.play()
        h.run(limit: 2000) { h.display.shown.count >= 40 }
        #expect(group.published.count == 3)
        let again = try #require(group.published.last)
        let shown = try #require(h.display.shown.last { abs(Double($0.code) / 30 * 1e9 - Double(again.mediaTime)) < 1000 })
        #expect(!again.paused && again.groupTime == Int64(shown.at.nanoseconds) + group.offset)
    }

    @Test("the sound's stretch: the error taken up over 20 s, positive when the sound is ahead, at most 1000 ppm")
    func soundStretch() {
        #expect(GroupPlayback.stretch(forError: 0.010, catchUp: 20) == 500)
        #expect(GroupPlayback.stretch(forError: -0.002, catchUp: 20) == -100)
        #expect(GroupPlayback.stretch(forError: 0.5, catchUp: 20) == 1000)
        #expect(GroupPlayback.stretch(forError: -0.5, catchUp: 20) == -1000)
    }
}

/// A playlist prepared ahead of its load (`preload`: a schedule's next rule).
@Suite("a playlist prepared ahead of its load")
struct PreloadTests {
    @Test("load takes the item prepared ahead, first frame decoded: it plays even though its file went in between; without it, the load fails")
    func preloaded() throws {
        let scratch = try Scratch()
        let a = scratch.path("a.mp4"), b = scratch.path("b.ts"), c = scratch.path("c.ts")
        try FileManager.default.copyItem(atPath: try Fixtures.path("counter.mp4"), toPath: a)
        try FileManager.default.copyItem(atPath: try Fixtures.path("counter_open.ts"), toPath: b)
        try FileManager.default.copyItem(atPath: try Fixtures.path("counter_open.ts"), toPath: c)
        let h = Harness()
        try h.engine.load([PlaylistItem(source: a)])
        try h.engine.play()
        h.run { (h.display.shown.last?.code ?? 0) >= 10 }
        h.engine.preload([PlaylistItem(source: b)])
        try FileManager.default.removeItem(atPath: b)
        let before = h.display.shown.count
        try h.engine.load([PlaylistItem(source: b)], autoplay: true)
        h.run { h.display.shown.count >= before + 5 }
        #expect(h.engine.state == .playing && h.engine.playlist.map(\.source) == [b])
        #expect(h.display.shown[before...].prefix(5).map(\.code) == [0, 1, 2, 3, 4])
        // Not prepared ahead: the file is opened at the load, and is gone.
        try FileManager.default.removeItem(atPath: c)
        #expect(throws: (any Error).self) { try h.engine.load([PlaylistItem(source: c)], autoplay: true) }
        #expect(h.engine.playlist.map(\.source) == [b])
    }
}
