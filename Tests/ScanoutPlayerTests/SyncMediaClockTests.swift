import Foundation
import ScanoutCore
import ScanoutPlayer
import Testing

/// A group whose time is the player's clock plus `offset`, with a settable timeline.
private final class FixedGroup: SyncGroup, @unchecked Sendable {
    // @unchecked Sendable: set before the reads, by one test thread.
    var offset: Int64 = 5_000_000_000
    var known = true
    var currentTimeline: SyncTimeline?
    var isLeading: Bool { false }
    var groupState: SyncGroupState { SyncGroupState(leading: false, leader: 1, term: 1, locked: true) }
    func groupTime(at now: ClockTime) -> Int64? { known ? Int64(now.nanoseconds) + offset : nil }
    func publish(_ t: SyncTimeline) {}
}

@Suite("a member's media clock: the group's timeline, for the item it plays")
struct SyncMediaClockTests {
    @Test("the media time the group's timeline gives now; nothing for another item, another epoch, or before the group's time is known")
    func streamTime() {
        let group = FixedGroup()
        // Entry 2 is at 10 s when the group's clock reads 100 s.
        group.currentTimeline = SyncTimeline(term: 1, index: 2, item: "a.mp4", mediaTime: 10_000_000_000, groupTime: 100_000_000_000, rate: 1, paused: false)
        let clock = SyncMediaClock(group: group)
        let now = ClockTime(nanoseconds: 95_500_000_000)   // group time 100.5 s
        #expect(clock.streamTime(at: now, epoch: 7) == nil)   // nothing bound yet
        clock.bind(epoch: 7, index: 2, item: "a.mp4")
        #expect(clock.streamTime(at: now, epoch: 7) == 10.5)
        #expect(clock.streamTime(at: now, epoch: 8) == nil)
        clock.bind(epoch: 8, index: 3, item: "b.mp4")
        #expect(clock.streamTime(at: now, epoch: 8) == nil)   // the group plays another item
        group.currentTimeline?.index = 3
        group.currentTimeline?.item = "b.mp4"
        group.currentTimeline?.rate = 2
        #expect(clock.streamTime(at: now, epoch: 8) == 11.0)
        group.currentTimeline?.paused = true
        #expect(clock.streamTime(at: ClockTime(nanoseconds: 999_000_000_000), epoch: 8) == 10.0)
        group.known = false
        #expect(clock.streamTime(at: now, epoch: 8) == nil)
        clock.unbind()
        group.known = true
        #expect(clock.streamTime(at: now, epoch: 8) == nil)
    }
}
