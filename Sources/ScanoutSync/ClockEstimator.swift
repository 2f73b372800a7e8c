/// The group's clock as a follower sees it: from the exchanges with the leader (`ClockExchange`),
/// the leader's clock minus the follower's at a reference time, and how fast the difference
/// changes (the two oscillators' drift, in parts per million).
///
/// How: each exchange bounds the offset from both sides. Out, the leader's receive time less the
/// follower's send time (t2 − t1) is the offset plus the outward delay; back, t3 − t4 is the offset
/// less the return delay. Delays only ever exceed their minimum (queues and jitter add, never take
/// away), so over many exchanges the lowest outward values trace the offset plus the least outward
/// delay, and the highest return values the offset less the least return delay: two envelopes
/// around the offset's line, whatever the jitter. The estimator keeps the last `window`
/// exchanges and finds the drift (the line's slope) that puts the two envelopes furthest apart,
/// which is the true slope (any other tilts one of them onto a sample); the offset is the middle
/// of the envelopes over the last `offsetSpan` (tilted by that drift), right to within half the
/// difference of the two directions' least delays (the asymmetry no two-way protocol can see).
/// Until the exchanges span `driftSpan` the slope is taken as zero: over a few seconds, a few
/// milliseconds of jitter make hundreds of ppm of slope. An exchange that falls off the line by more than `stepLimit` (the leader
/// changed, or a clock was stepped) starts the estimate over.
///
/// A pure value: it keeps no clock, so tests run it in virtual time.
public struct ClockEstimator: Sendable {
    public struct Configuration: Sendable {
        /// Exchanges kept (at four a second, a minute of them).
        public var window: Int
        /// An offset this far off the current line restarts the estimate.
        public var stepLimit: Int64
        /// Exchanges spanning at least this much local time before a drift is fitted: over a
        /// shorter span a few milliseconds of jitter make hundreds of ppm of slope.
        public var driftSpan: Int64
        /// The offset is read off the exchanges of this last stretch.
        public var offsetSpan: Int64
        /// The largest drift believed (500 ppm: ten times a cheap crystal's tolerance).
        public var maxDrift: Double

        public init(window: Int = 240, stepLimit: Int64 = 50_000_000, driftSpan: Int64 = 10_000_000_000,
                    offsetSpan: Int64 = 4_000_000_000, maxDrift: Double = 500e-6) {
            self.window = window; self.stepLimit = stepLimit; self.driftSpan = driftSpan
            self.offsetSpan = offsetSpan; self.maxDrift = maxDrift
        }
    }

    /// The group's time as a line of the follower's: `group = local + offset + drift·(local − reference)`.
    public struct Model: Sendable, Equatable {
        /// The follower's time the line is anchored at (ns).
        public var reference: Int64
        /// The leader's clock minus the follower's at `reference` (ns).
        public var offset: Double
        /// How much the offset grows per nanosecond of the follower's clock (1e-6 is 1 ppm).
        public var drift: Double
        /// Exchanges the line was fitted to, and the shortest round trip among them (ns).
        public var exchanges: Int
        public var roundTrip: Int64

        /// Drift in parts per million.
        public var driftPPM: Double { drift * 1e6 }

        /// The leader's clock minus the follower's at the follower's time `local` (ns).
        public func offset(at local: Int64) -> Double { offset + drift * Double(local - reference) }

        /// The group's time at the follower's time `local`.
        public func groupTime(atLocal local: Int64) -> Int64 { local + Int64(offset(at: local).rounded()) }

        /// The follower's time at which the group's clock reads `group`.
        public func localTime(atGroup group: Int64) -> Int64 {
            // group = local + offset + drift·(local − reference), solved for local.
            let l = (Double(group) - offset + drift * Double(reference)) / (1 + drift)
            return Int64(l.rounded())
        }
    }

    public let configuration: Configuration
    private var exchanges: [ClockExchange] = []
    /// How many times the estimate started over (a step).
    public private(set) var restarts = 0
    public private(set) var model: Model?

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Takes one exchange and refits. An exchange whose round trip is negative (clocks read
    /// wrongly, or a forged answer) is refused and returns false.
    @discardableResult
    public mutating func add(_ e: ClockExchange) -> Bool {
        guard e.roundTrip >= 0, e.t4 >= e.t1 else { return false }
        if let m = model, abs(Double(e.offset) - m.offset(at: e.localMidpoint)) > Double(configuration.stepLimit) + Double(e.roundTrip) / 2 {
            exchanges.removeAll()
            restarts += 1
        }
        exchanges.append(e)
        if exchanges.count > configuration.window { exchanges.removeFirst(exchanges.count - configuration.window) }
        model = fit()
        return true
    }

    /// The two envelopes' gap for slope `drift`: (outward floor, return ceiling), each the line's
    /// value at `reference`.
    private func envelopes(_ drift: Double, reference: Int64, since: Int64 = .min) -> (floor: Double, ceiling: Double) {
        var floor = Double.infinity, ceiling = -Double.infinity
        for e in exchanges where e.t1 >= since {
            let out = Double(e.t2 - e.t1) - drift * Double(e.t1 - reference)
            let back = Double(e.t3 - e.t4) - drift * Double(e.t4 - reference)
            floor = min(floor, out)
            ceiling = max(ceiling, back)
        }
        return (floor, ceiling)
    }

    private func fit() -> Model? {
        guard let last = exchanges.last else { return nil }
        let reference = last.localMidpoint
        let span = Double(last.t4 - exchanges[0].t1)
        var drift = 0.0
        if exchanges.count >= 4 && span >= Double(configuration.driftSpan) {
            // The gap (floor − ceiling) is concave in the slope: a ternary search finds its top.
            var lo = -configuration.maxDrift, hi = configuration.maxDrift
            for _ in 0..<80 {
                let m1 = lo + (hi - lo) / 3, m2 = hi - (hi - lo) / 3
                let g1 = envelopes(m1, reference: reference), g2 = envelopes(m2, reference: reference)
                if g1.floor - g1.ceiling < g2.floor - g2.ceiling { lo = m1 } else { hi = m2 }
            }
            drift = (lo + hi) / 2
        }
        // The offset from the recent exchanges only (their line tilted by the drift): an error in
        // the drift then moves it by little.
        let e = envelopes(drift, reference: reference, since: last.t1 - configuration.offsetSpan)
        return Model(reference: reference, offset: (e.floor + e.ceiling) / 2, drift: drift, exchanges: exchanges.count,
                     roundTrip: exchanges.map(\.roundTrip).min()!)
    }
}
