import ScanoutPlayer
import Testing

@Suite("a zone's timeline with no player: which item is on screen at a time")
struct ZoneTimelineTests {
    let items = [PlaylistItem(source: "a.mp4"), PlaylistItem(source: "b.png"), PlaylistItem(source: "c.mp4")]

    func timeline(_ mode: RepeatMode) -> ZoneTimeline {
        ZoneTimeline(playlist: items, repeatMode: mode, durations: [3.2, 5, 2])
    }

    @Test("repeat all: items one after another from 0, then again")
    func all() {
        let t = timeline(.all)
        #expect(t.locate(0)! == (0, 0))
        #expect(t.locate(3.2)! == (1, 0))
        #expect(t.locate(9)!.item == 2 && abs(t.locate(9)!.time - 0.8) < 1e-9)
        #expect(t.locate(10.2 + 1)!.item == 0 && abs(t.locate(11.2)!.time - 1) < 1e-9)
        #expect(t.locate(-1)! == (0, 0))
    }

    @Test("repeat one: the first item again and again; repeat none: the last frame stays after the end")
    func oneAndNone() {
        let one = timeline(.one)
        #expect(one.locate(7)!.item == 0 && abs(one.locate(7)!.time - 0.6) < 1e-9)
        let none = timeline(.none)
        #expect(none.locate(9.5)!.item == 2 && abs(none.locate(9.5)!.time - 1.3) < 1e-9)
        let after = none.locate(60)!
        #expect(after.item == 2 && after.time < 2 && after.time > 1.99)
    }

    @Test("an empty playlist has nothing on screen")
    func empty() {
        #expect(ZoneTimeline(playlist: [], repeatMode: .all, durations: []).locate(1) == nil)
    }
}
