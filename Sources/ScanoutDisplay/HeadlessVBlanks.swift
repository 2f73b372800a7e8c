import ScanoutCore

/// The vblanks of a headless output given a refresh rate (`outputRefresh`): a grid of period
/// `refreshInterval` from the moment it was made, as a free-running screen's are, so that a
/// headless service paces and lands its frames as one on a screen does (the sync benchmark runs
/// several, at 59.94 to 60.06 Hz, each with its own phase). A present waits for the first vblank
/// after its draw, as a swap to a screen that waits for vblank does, and the frame is taken as
/// seen there.
public final class HeadlessVBlanks: VBlankSource {
    public let refreshInterval: Duration
    private let origin: ClockTime
    private let clock: any PlaybackClock

    /// `hertz` in 1...1000.
    public init(hertz: Double, clock: any PlaybackClock = MonotonicClock()) {
        refreshInterval = .nanoseconds(Int64((1e9 / min(max(hertz, 1), 1000)).rounded()))
        self.clock = clock
        origin = clock.now()
    }

    public var lastVBlank: ClockTime? { vblank(atOrBefore: clock.now()) }

    /// The vblank at or before `t` on the grid.
    func vblank(atOrBefore t: ClockTime) -> ClockTime {
        let period = refreshInterval.nanosecondCount
        let n = (t - origin).nanosecondCount / period
        return origin + .nanoseconds(n * period)
    }

    /// Waits for the first vblank after now; returns it.
    @discardableResult
    public func waitForVBlank() -> ClockTime {
        let next = vblank(atOrBefore: clock.now()) + refreshInterval
        clock.sleep(until: next)
        return next
    }
}
