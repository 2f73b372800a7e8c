import ScanoutCore
import ScanoutSync
import Testing

/// A follower's clock and a network between it and the leader, in virtual time: the leader's
/// clock is true time; the follower's runs `skew` fast from `offset`; each direction takes `delay`
/// plus up to `jitter` (uniform), and `loss` of the exchanges never come back.
struct SimulatedLink {
    var offset: Int64
    var skew: Double
    var delay: Int64 = 5_000_000
    var jitter: Int64 = 4_000_000
    var loss: Double = 0.01
    var random = SplitMix(seed: 7)

    func local(_ t: Int64) -> Int64 { offset + Int64((Double(t) * (1 + skew)).rounded()) }

    /// The exchange started at true time `t`, or nil when it was lost.
    mutating func exchange(at t: Int64) -> ClockExchange? {
        if random.unit() < loss { return nil }
        let there = delay + Int64(random.unit() * Double(jitter))
        let back = delay + Int64(random.unit() * Double(jitter))
        let t2 = t + there, t3 = t2 + 100_000
        return ClockExchange(t1: local(t), t2: t2, t3: t3, t4: local(t3 + back))
    }
}

struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}

@Suite("the group's clock from four-timestamp exchanges")
struct ClockEstimatorTests {
    @Test("one exchange: offset and round trip as NTP defines them")
    func oneExchange() {
        // Leader 1 s ahead; 10 ms out, 30 ms back, 2 ms at the leader.
        let e = ClockExchange(t1: 0, t2: 1_010_000_000, t3: 1_012_000_000, t4: 42_000_000)
        #expect(e.roundTrip == 40_000_000)
        // ((1.010 − 0) + (1.012 − 0.042)) / 2 = 0.990 s: 10 ms off, half the asymmetry.
        #expect(e.offset == 990_000_000)
        var estimator = ClockEstimator()
        let taken = estimator.add(ClockExchange(t1: 10, t2: 0, t3: 1_000, t4: 20))
        #expect(!taken)
        #expect(estimator.model == nil)
    }

    @Test("seconds apart and 100 ppm fast, over 5 ms ± 2 ms of jitter and 1 % loss: within 1 ms after 2 s, the drift found",
          arguments: [100e-6, -100e-6, 0])
    func skewAndJitter(skew: Double) throws {
        var link = SimulatedLink(offset: -3_700_000_000, skew: skew)
        var estimator = ClockEstimator()
        var errors: [Int64] = []
        // Four exchanges a second for 30 s.
        for k in 0..<120 {
            let t = Int64(k) * 250_000_000
            if let e = link.exchange(at: t) { estimator.add(e) }
            let m = try #require(estimator.model)
            // How far the group time read from the follower's clock is from true time.
            let probe = t + 125_000_000
            let error = m.groupTime(atLocal: link.local(probe)) - probe
            if t >= 2_000_000_000 { errors.append(abs(error)) }
            let local = link.local(probe)
            if abs(m.localTime(atGroup: m.groupTime(atLocal: local)) - local) > 1 { Issue.record("localTime is not groupTime's inverse at \(local)") }
        }
        print("skew \(skew * 1e6) ppm: worst \(errors.max()!) ns after 2 s, \(errors.suffix(40).max()!) ns in the last 10 s, drift \(estimator.model!.driftPPM) ppm")
        #expect(errors.max()! < 1_000_000, "worst \(errors.max()!) ns after 2 s")
        let late = errors.suffix(40)
        #expect(late.max()! < 200_000, "worst \(late.max()!) ns in the last 10 s")
        let m = try #require(estimator.model)
        // The group's clock gains −skew on the follower's per unit of it.
        #expect(abs(m.driftPPM - (-skew * 1e6 / (1 + skew))) < 10, "drift \(m.driftPPM) ppm")
        #expect(estimator.restarts == 0)
    }

    @Test("the leader's clock steps by a second (a new leader): the estimate starts over and is right again within a second")
    func step() throws {
        var link = SimulatedLink(offset: 500_000_000, skew: 20e-6)
        var estimator = ClockEstimator()
        for k in 0..<40 { if let e = link.exchange(at: Int64(k) * 250_000_000) { estimator.add(e) } }
        link.offset -= 1_000_000_000   // the follower now reads 1 s behind the new leader
        var last: ClockExchange?
        for k in 40..<44 {
            if let e = link.exchange(at: Int64(k) * 250_000_000) { estimator.add(e); last = e }
        }
        #expect(estimator.restarts == 1)
        let e = try #require(last)
        let m = try #require(estimator.model)
        #expect(abs(m.offset(at: e.localMidpoint) - Double(e.offset)) < 3_000_000)
        let probe: Int64 = 11_100_000_000
        #expect(abs(m.groupTime(atLocal: link.local(probe)) - probe) < 1_000_000)
    }
}
