/// The search for the largest number of zones a tool composes with no frame dropped: 1, 2, 4, …
/// until a trial fails (or the cap is reached), then bisection between the largest count that
/// passed and the smallest that failed. A value: `next` says which count to try, `record` takes
/// its outcome, so that several tools' searches can run their trials in turn.
public struct ZoneSearch: Equatable, Sendable {
    public struct Trial: Equatable, Sendable {
        public var zones: Int
        public var passed: Bool
    }

    /// The most zones tried.
    public let maxZones: Int
    /// The trials so far, in order.
    public private(set) var trials: [Trial] = []
    /// The largest count that passed (0: none yet).
    public private(set) var best = 0
    /// The smallest count that failed.
    public private(set) var failed: Int?

    public init(maxZones: Int) {
        precondition(maxZones >= 1, "a zone search tries one zone at least")
        self.maxZones = maxZones
    }

    /// The count to try next; nil when the search has its answer (`best`).
    public var next: Int? {
        if let failed {
            return failed - best > 1 ? (best + failed) / 2 : nil
        }
        return best >= maxZones ? nil : min(max(2 * best, 1), maxZones)
    }

    public mutating func record(_ zones: Int, passed: Bool) {
        trials.append(Trial(zones: zones, passed: passed))
        if passed {
            best = max(best, zones)
        } else {
            failed = min(failed ?? zones, zones)
        }
    }

    /// The whole search with `trial` (true: that many zones passed).
    public static func run(maxZones: Int, trial: (Int) throws -> Bool) rethrows -> ZoneSearch {
        var search = ZoneSearch(maxZones: maxZones)
        while let n = search.next { search.record(n, passed: try trial(n)) }
        return search
    }
}
