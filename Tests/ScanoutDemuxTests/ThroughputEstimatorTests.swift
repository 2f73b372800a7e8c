import Foundation
import ScanoutCore
import ScanoutDemux
import Testing

/// The smoothed throughput estimate on synthetic reads: the rate of steady reads, the lower of a
/// fast and a slow average, history fading by transfer time, reads that blocked not at all.
@Suite struct ThroughputEstimatorTests {
    static func close(_ a: Double?, _ b: Double, within: Double = 1e-9) -> Bool {
        guard let a else { return false }
        return abs(a - b) <= within * b
    }

    @Test func steadyReadsGiveTheirRateAndNothingBeforeTheMinimum() {
        var e = ThroughputEstimator(minimumBytes: 16_000)
        #expect(e.estimate == nil)
        e.add(bytes: 10_000, seconds: 0.1)
        #expect(e.estimate == nil, "below the minimum bytes")
        for _ in 0..<20 { e.add(bytes: 10_000, seconds: 0.1) }
        // 100 kB/s is 800 kb/s whatever the half-lives.
        #expect(Self.close(e.estimate, 800_000))
        #expect(e.totalBytes == 210_000)
        e.reset()
        #expect(e.estimate == nil && e.totalBytes == 0)
    }

    @Test func readsThatNeverBlockedGiveNoEstimate() {
        var e = ThroughputEstimator(minimumBytes: 1)
        e.add(bytes: 50_000, seconds: 0)
        #expect(e.estimate == nil)
        e.add(bytes: 50_000, seconds: 0.5)
        // The first read's bytes count, faded by the second's 0.5 s (fast half-life: 3 s).
        #expect(Self.close(e.estimate, (50_000 * pow(0.5, 0.5 / 3) + 50_000) * 8 / 0.5))
    }

    /// The estimate is the lower of what a fast-forgetting and a slow-forgetting average say:
    /// a drop shows through the fast one, a rise only once the slow one agrees.
    @Test func theLowerOfTheFastAndTheSlowAverage() {
        var both = ThroughputEstimator(fastHalfLife: 3, slowHalfLife: 9, minimumBytes: 1)
        var fast = ThroughputEstimator(fastHalfLife: 3, slowHalfLife: 3, minimumBytes: 1)
        var slow = ThroughputEstimator(fastHalfLife: 9, slowHalfLife: 9, minimumBytes: 1)
        func add(_ bytes: Int, _ seconds: Double) {
            both.add(bytes: bytes, seconds: seconds)
            fast.add(bytes: bytes, seconds: seconds)
            slow.add(bytes: bytes, seconds: seconds)
        }
        for _ in 0..<100 { add(100_000, 0.1) }   // 10 s at 1 MB/s
        for _ in 0..<30 { add(1_000, 0.1) }      // 3 s at 10 kB/s
        let (f, s) = (fast.estimate!, slow.estimate!)
        #expect(f < s, "after a drop the fast average is the lower")
        #expect(both.estimate == f)
        #expect(f < 8_000_000 / 2, "one half-life of trickle halves what came before")
        for _ in 0..<200 { add(100_000, 0.05) }  // 10 s at 2 MB/s
        #expect(fast.estimate! > slow.estimate!, "after a rise the slow average is the lower")
        #expect(both.estimate == slow.estimate)
        #expect(slow.estimate! < 16_000_000)
    }

    /// A read of `t` seconds multiplies what came before by 0.5^(t / half-life): one half-life of
    /// reads weighs as much as everything before it did.
    @Test func historyFadesByTransferTime() {
        var e = ThroughputEstimator(fastHalfLife: 2, slowHalfLife: 2, minimumBytes: 1)
        e.add(bytes: 400_000, seconds: 2)    // 200 kB/s
        e.add(bytes: 20_000, seconds: 2)     // 10 kB/s over one half-life
        // (400 000 / 2 + 20 000) bytes over (2 / 2 + 2) seconds.
        #expect(Self.close(e.estimate, 220_000.0 * 8 / 3))
        // Bytes that came without blocking (from the socket's buffer) forget nothing and count.
        let before = e.estimate!
        e.add(bytes: 30_000, seconds: 0)
        #expect(Self.close(e.estimate, 250_000.0 * 8 / 3))
        #expect(e.estimate! > before)
    }
}
