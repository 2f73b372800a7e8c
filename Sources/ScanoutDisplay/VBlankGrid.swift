import ScanoutCore
/// A screen's vblank grid as a value: the refresh period, the phase (a vblank seen), how long a
/// present takes from its call to its commit, and whether a commit can be held. Taken from the
/// display's `VBlankSource` once per decision (`init(_:)`), or written by hand in tests. The
/// present scheduler (ScanoutPlayer) aims frames on it; `VBlankSource`'s own `vblank(nearest:)`,
/// `vblank(after:)` and `presentTime(for:)` are this grid's.
public struct VBlankGrid: Sendable, Equatable {
    /// The time between two vblanks.
    public var period: Duration
    /// Clock time of a vblank seen (the grid's phase); nil before the first one, when no frame
    /// can be aimed at a vblank yet.
    public var lastVBlank: ClockTime?
    /// From a present's call to its commit (the draw); zero when unknown.
    public var commitLead: Duration
    /// Whether a present can start early and its commit be held until a time.
    public var holdsCommits: Bool

    public init(period: Duration, lastVBlank: ClockTime?, commitLead: Duration = .zero, holdsCommits: Bool = false) {
        self.period = period
        self.lastVBlank = lastVBlank
        self.commitLead = commitLead
        self.holdsCommits = holdsCommits
    }

    /// What `source` says now.
    public init(_ source: any VBlankSource) {
        self.init(period: source.refreshInterval, lastVBlank: source.lastVBlank,
                  commitLead: source.commitLead, holdsCommits: source.holdsCommits)
    }

    /// The vblank nearest to `time`, extrapolated from the last one seen by whole periods; nil
    /// when no vblank has been seen yet.
    public func vblank(nearest time: ClockTime) -> ClockTime? { vblank(time, rounding: .toNearestOrAwayFromZero, plus: 0) }

    /// The first vblank after `time`: where a flip committed at `time` reaches the screen (a
    /// non-blocking atomic commit latches at the next vblank); nil before the first vblank.
    public func vblank(after time: ClockTime) -> ClockTime? { vblank(time, rounding: .down, plus: 1) }

    private func vblank(_ time: ClockTime, rounding: FloatingPointRoundingRule, plus extra: Double) -> ClockTime? {
        guard let last = lastVBlank, period > .zero else { return nil }
        let p = Double(period.nanosecondCount)
        let n = (Double((time - last).nanosecondCount) / p).rounded(rounding) + extra
        let t = Double(last.nanoseconds) + n * p
        return ClockTime(nanoseconds: t <= 0 ? 0 : UInt64(t))
    }

    /// The number of `vblank` on the grid: whole periods from `lastVBlank` (negative before it).
    public func number(of vblank: ClockTime) -> Int64? {
        guard let last = lastVBlank, period > .zero else { return nil }
        return Int64((Double((vblank - last).nanosecondCount) / Double(period.nanosecondCount)).rounded())
    }

    /// When to start presenting a frame meant for the vblank at `slot`, so that its commit comes
    /// halfway through the refresh before it: a flip latches at the first vblank after its
    /// commit, and half a refresh of slack either way absorbs the draw's jitter and the
    /// extrapolation (`commitLead` taken off for the draw).
    public func presentTime(for slot: ClockTime) -> ClockTime {
        let lead = Duration.nanoseconds(period.nanosecondCount / 2) + commitLead
        return slot.sinceOrigin > lead ? slot - lead : .zero
    }
}
