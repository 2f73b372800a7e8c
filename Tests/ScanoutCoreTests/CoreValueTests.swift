import Foundation
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
    @Test("readings never go back, and the clock reads the same scale as monotonicNanoseconds")
    func readings() {
        let clock = MonotonicClock()
        var last: UInt64 = 0
        for _ in 0..<10_000 {
            let before = monotonicNanoseconds()
            let t = clock.now()
            let after = monotonicNanoseconds()
            #expect(t >= last && before <= t && t <= after)
            last = t
        }
        // CLOCK_MONOTONIC itself: the same reading as clock_gettime, to within the calls between.
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        let system = UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
        let mine = clock.now()
        #expect(mine >= system && mine - system < 1_000_000_000)
    }

    @Test("a deadline already past returns at once, the clock at or after it")
    func pastDeadline() {
        let clock = MonotonicClock()
        let now = clock.now()
        for deadline in [0, now / 2, now] {
            clock.sleep(until: deadline)
            #expect(clock.now() >= deadline)
        }
    }
}

@Suite("named threads")
struct NamedThreadTests {
    /// Linux keeps 15 bytes of a thread's name and refuses a longer one (`pthread_setname_np`:
    /// ERANGE), so the names Scanout gives are that short.
    @Test("the thread carries its name, and the kernel's task name is it")
    func nameReachesTheKernel() throws {
        final class Seen: @unchecked Sendable {
            // Written by the thread before it signals `done`, read after the wait.
            var foundation: String?
            var kernel: String?
        }
        let seen = Seen()
        let done = DispatchSemaphore(value: 0)
        let thread = Thread(named: "scanout-test-nm") {
            seen.foundation = Thread.current.name
            seen.kernel = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8))?
                .trimmingCharacters(in: .newlines)
            done.signal()
        }
        thread.start()
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(seen.foundation == "scanout-test-nm")
        #expect(seen.kernel == "scanout-test-nm")
    }
}
