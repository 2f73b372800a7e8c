import ScanoutCore
import ScanoutSync
import Testing

@Suite("frame lock: frame N at every screen's vblank nearest its due time")
struct FrameLockTests {
    static let timeline = SyncTimeline(term: 1, index: 0, item: "clip", mediaTime: 0, groupTime: 1_000_000_000, rate: 1, paused: false)

    @Test("due times, the frame at a vblank, paused, and what a player does when it is off")
    func basics() {
        let lock = FrameLock(latency: 100_000_000, frameDuration: 33_333_333)
        #expect(lock.due(0, under: Self.timeline) == 1_100_000_000)
        #expect(lock.due(3, under: Self.timeline) == 1_199_999_999)
        // Frame 0 is due at 1.1 s: a vblank 8 ms before shows it (nearest), one 9 ms before not yet.
        #expect(lock.frame(atVBlank: 1_092_000_000, refresh: 16_666_667, under: Self.timeline) == 0)
        #expect(lock.frame(atVBlank: 1_091_000_000, refresh: 16_666_667, under: Self.timeline) == -1)
        var paused = Self.timeline
        paused.paused = true
        paused.mediaTime = 66_666_666
        #expect(lock.due(5, under: paused) == nil)
        #expect(lock.frame(atVBlank: 99_000_000_000, refresh: 16_666_667, under: paused) == 2)
        #expect(FrameLock.action(shown: 10, wanted: 10, seekBeyond: 60) == .hold)
        #expect(FrameLock.action(shown: 10, wanted: 11, seekBeyond: 60) == .next)
        #expect(FrameLock.action(shown: 10, wanted: 12, seekBeyond: 60) == .skip(1))
        #expect(FrameLock.action(shown: 10, wanted: 9, seekBeyond: 60) == .hold)
        #expect(FrameLock.action(shown: 10, wanted: 200, seekBeyond: 60) == .seek(200))
        #expect(FrameLock.action(shown: 200, wanted: 10, seekBeyond: 60) == .seek(10))
    }

    @Test("four screens at 59.94, 60, 60.03 and 60.06 Hz, any phase, clocks up to 0.75 ms off: every frame shown on each, within half a refresh of its due time plus the clock's error")
    func screensAgree() {
        // 30 fps content for 60 s.
        let lock = FrameLock(latency: 100_000_000, frameDuration: 33_333_333)
        let periods: [Int64] = [16_683_350, 16_666_667, 16_658_338, 16_650_017]
        let phases: [Int64] = [0, 4_100_000, 9_700_000, 13_300_000]
        let clockErrors: [Int64] = [0, 750_000, -750_000, 400_000]
        var firstShown: [[Int64: Int64]] = Array(repeating: [:], count: 4)
        for s in 0..<4 {
            var vblank = 1_000_000_000 + phases[s]
            var shown: Int64 = -1
            while vblank < 61_000_000_000 {
                // The screen reads the group's clock with its error.
                let wanted = lock.frame(atVBlank: vblank + clockErrors[s], refresh: periods[s], under: Self.timeline)
                if wanted > shown {
                    #expect(wanted == shown + 1, "screen \(s) skipped from \(shown) to \(wanted)")
                    shown = wanted
                    if shown >= 0 { firstShown[s][shown] = vblank }
                }
                vblank += periods[s]
            }
        }
        let frames = firstShown.map(\.count).min()!
        #expect(frames >= 1790)
        var worst: Int64 = 0, late: Int64 = 0
        for n in 0..<Int64(frames) {
            let times = (0..<4).compactMap { firstShown[$0][n] }
            #expect(times.count == 4)
            worst = max(worst, times.max()! - times.min()!)
            let due = lock.due(n, under: Self.timeline)!
            for s in 0..<4 {
                // Each screen within half its refresh of the due time, shifted by its clock's error.
                let off = times[s] + clockErrors[s] - due
                late = max(late, abs(off))
                #expect(off >= -periods[s] / 2 - 1 && off < periods[s] / 2 + 1, "frame \(n) on screen \(s): \(off) ns from due")
            }
        }
        print("frame lock: \(frames) frames on 4 screens, each within \(Double(late) / 1e6) ms of due, largest spread \(Double(worst) / 1e6) ms")
        // Two free-running screens' nearest vblanks are under a refresh apart (plus the clocks).
        #expect(worst < periods.max()! + 1_500_000)
    }
}
