import ScanoutCore
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("Orientation")
struct OrientationTests {
    @Test("rotation is normalised to 0..<360")
    func normalised() {
        #expect(Orientation(rotation: -90).rotation == 270)
        #expect(Orientation(rotation: 450).rotation == 90)
        #expect(Orientation(rotation: 360) == .identity)
        #expect(Orientation(rotation: 90).swapsDimensions)
        #expect(Orientation(rotation: 270, mirrored: true).swapsDimensions)
        #expect(!Orientation(rotation: 180).swapsDimensions)
        #expect(!Orientation(rotation: 0, mirrored: true).isIdentity)
        #expect(Orientation(rotation: 90, mirrored: true).description == "rotate 90, mirror")
    }

    @Test("every multiple of 90 from -720 to 720 lands on one of the four turns", arguments: Array(stride(from: -720, through: 720, by: 90)))
    func turns(degrees: Int) {
        let o = Orientation(rotation: degrees)
        #expect([0, 90, 180, 270].contains(o.rotation))
        #expect((o.rotation - degrees) % 360 == 0)
        #expect(o.swapsDimensions == (abs(degrees) % 180 == 90))
        #expect(o.isIdentity == (degrees % 360 == 0))
    }
}

@Suite("the monotonic clock")
struct MonotonicClockTests {
    @Test("readings never go back, and the clock reads the same scale as ClockTime.now()")
    func readings() {
        let clock = MonotonicClock()
        var last = ClockTime.zero
        for _ in 0..<10_000 {
            let before = ClockTime.now()
            let t = clock.now()
            let after = ClockTime.now()
            #expect(t >= last && before <= t && t <= after)
            last = t
        }
        // CLOCK_MONOTONIC itself: the same reading as clock_gettime, to within the calls between.
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        let system = ClockTime(nanoseconds: UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec))
        let mine = clock.now()
        #expect(mine >= system && mine - system < .seconds(1))
    }

    @Test("a deadline already past returns at once, the clock at or after it")
    func pastDeadline() {
        let clock = MonotonicClock()
        let now = clock.now()
        for deadline in [ClockTime.zero, ClockTime(nanoseconds: now.nanoseconds / 2), now] {
            clock.sleep(until: deadline)
            #expect(clock.now() >= deadline)
        }
    }
}
