import ScanoutCore
import ScanoutDecode
import ScanoutPlayer
import Testing

@Suite("picture watch: black and frozen alarms, in virtual time")
struct PictureWatchTests {
    static let black = PictureSample(luma: Array(repeating: 16, count: 144), fullRange: false)
    static func moving(_ n: Int) -> PictureSample { PictureSample(luma: (0..<144).map { UInt8(($0 * 7 + n * 13) % 200 + 40) }, fullRange: false) }

    /// Looks every half second from t = 0 for `seconds`, the picture given by `picture(t)`;
    /// returns each alarm change with the time it came at.
    func run(_ watch: inout PictureWatch, from start: Double = 0, seconds: Double, playing: (Double) -> Bool = { _ in true },
             picture: (Double) -> PictureSample?) -> [(t: Double, kind: PictureAlarm, active: Bool)] {
        var out: [(Double, PictureAlarm, Bool)] = []
        var t = start
        while t <= start + seconds + 1e-9 {
            let look = PictureWatch.Look(time: ClockTime(nanoseconds: UInt64(1_000_000_000 + t * 1e9)), playing: playing(t), presented: Int(t * 30),
                                         sample: picture(t), bytesRead: Int(t * 250_000))
            for c in watch.observe(look) { out.append((t, c.kind, c.active)) }
            t += 0.5
        }
        return out
    }

    @Test("black for 5 s raises the black alarm at 5 s (and, unchanged, frozen at 10 s); a moving picture ends both")
    func blackThenMoving() {
        var watch = PictureWatch(settings: .init(black: 5, frozen: 10))
        let changes = run(&watch, seconds: 14) { t in t < 12 ? Self.black : Self.moving(Int(t * 2)) }
        #expect(changes.map(\.t) == [5, 10, 12, 12])
        #expect(changes.map(\.kind) == [.black, .frozen, .black, .frozen])
        #expect(changes.map(\.active) == [true, true, false, false])
        #expect(watch.active.isEmpty && watch.unchangedSeconds == 0)
        // 250 kB a second read: 2 Mb/s.
        #expect(watch.bitrate == 2_000_000)
    }

    @Test("a picture that stops changing (the same frame, or no new one) is frozen after the threshold; paused, nothing is raised and alarms end")
    func frozenAndPaused() {
        var watch = PictureWatch(settings: .init(black: 5, frozen: 3))
        let still = Self.moving(7)
        let changes = run(&watch, seconds: 8, playing: { $0 < 6 }) { t in t < 1 ? Self.moving(Int(t * 2)) : still }
        // Unchanged from the look at 1 s: frozen at 4 s; paused at 6 s: the alarm ends.
        #expect(changes.map(\.t) == [4, 6])
        #expect(changes.map(\.active) == [true, false])
        #expect(changes.allSatisfy { $0.kind == .frozen })
    }

    @Test("frames with no sample (in GPU memory) raise nothing; a threshold of 0 turns its watch off")
    func unwatched() {
        var gpu = PictureWatch(settings: .init(black: 1, frozen: 1))
        #expect(run(&gpu, seconds: 10) { _ in nil }.isEmpty)
        var off = PictureWatch(settings: .init(black: 0, frozen: 0))
        #expect(run(&off, seconds: 10) { _ in Self.black }.isEmpty)
    }
}
