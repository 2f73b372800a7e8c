import ScanoutCore
import ScanoutDisplay

/// What a frame is shown against: everything a decision reads, passed in (the scheduler reads
/// no clock, display, decoder or sound of its own).
public struct PresentContext: Sendable, Equatable {
    /// The clock's time now.
    public var now: ClockTime
    /// The display's vblank grid; nil for a target without vblank timestamps (headless, a file).
    public var grid: VBlankGrid?
    /// Nanoseconds between two frames of the input at rate 1 (from the media's frame rate, a
    /// `Double`; cut to a whole nanosecond where a clock time is moved by it).
    public var frameInterval: Double
    /// The media time the listener hears now (the sound clock, on the item's media timeline);
    /// nil when there is no sound clock or it says nothing.
    public var heard: Double?
    /// A late frame's lateness is the network's (its read waited for it, or the read-ahead is
    /// filling for the first time): the timeline moves back to it instead of dropping it.
    public var lateIsNetwork: Bool
    /// The input is live: a late frame that the sound did not time moves the timeline back.
    public var live: Bool

    public init(now: ClockTime, grid: VBlankGrid? = nil, frameInterval: Double, heard: Double? = nil,
                lateIsNetwork: Bool = false, live: Bool = false) {
        self.now = now
        self.grid = grid
        self.frameInterval = frameInterval
        self.heard = heard
        self.lateIsNetwork = lateIsNetwork
        self.live = live
    }
}

/// When each frame is shown: the timeline, the lateness policies and the vblank slot, as a value
/// with no display, decoder or clock (`PlaybackSession` asks it, step by step; tests ask it in
/// virtual time).
///
/// The timeline maps media time to clock time: a frame `m` seconds after the item's first frame
/// is due at `anchorTime + (m − anchorMedia) / rate`, or, when the sound clock says what is heard,
/// when the listener hears `m` (the anchor then follows the sound, so the timeline goes on from
/// there should the sound stop). A frame is dropped when it is more than one frame interval (at
/// the rate) late; timed by the sound, also when it would be seen more than `allowedLateness`
/// after it is heard (`maxConsecutiveMasterDrops` in a row at most). A late frame whose lateness
/// is the network's is shown and the timeline moved back to it; a late live frame not timed by the
/// sound is shown one frame interval from now, the timeline moved with it (a live slip). The
/// first frame of a timeline (a start, a seek, a resume, a stall) is never dropped.
public struct PresentScheduler: Sendable, Equatable {
    /// The decision for one frame.
    public enum Decision: Sendable, Equatable {
        case present(Aim)
        /// Too late: skipped. `target`: when it was due.
        case drop(target: ClockTime)
    }

    /// Why the timeline moved to the frame being shown.
    public enum Rebase: Sendable, Equatable {
        /// Late because the network was: the frame is due now.
        case network
        /// A late live frame: due one frame interval from now; `seconds` the delay this adds.
        case liveSlip(seconds: Double)
    }

    /// Where and when a frame that is shown goes.
    public struct Aim: Sendable, Equatable {
        /// When the frame is due on the timeline (clock time).
        public var target: ClockTime
        /// The vblank nearest `target` (nil without a grid or its phase).
        public var vblank: ClockTime?
        /// When its present starts: half a refresh and the draw before `vblank`, else `target`.
        public var presentAt: ClockTime
        /// When it reaches the screen if its present starts now: `vblank` while there is time to
        /// commit for it, else the first vblank a commit from now reaches; without a grid, the
        /// later of `target` and now.
        public var seenAt: ClockTime
        /// Whether the sound clock timed it.
        public var timedBySound: Bool
        /// Whether it is the first frame of its timeline (never dropped, never decoded ahead of).
        public var firstOfTimeline: Bool
        /// Set when the timeline moved to this frame because it was late.
        public var rebase: Rebase?

        public init(target: ClockTime, vblank: ClockTime?, presentAt: ClockTime, seenAt: ClockTime, timedBySound: Bool,
                    firstOfTimeline: Bool, rebase: Rebase?) {
            self.target = target
            self.vblank = vblank
            self.presentAt = presentAt
            self.seenAt = seenAt
            self.timedBySound = timedBySound
            self.firstOfTimeline = firstOfTimeline
            self.rebase = rebase
        }
    }

    /// The frames available now, judged in order (`plan`): the late ones dropped, the first one
    /// that is not aimed.
    public struct Plan: Sendable, Equatable {
        /// Indices of the frames dropped.
        public var dropped: [Int] = []
        /// Index of the frame to show (nil: every frame was dropped, or none was given).
        public var presented: Int?
        public var aim: Aim?
    }

    public private(set) var rate: Double
    /// Clock time the frame at `anchorMedia` is due; nil until the timeline starts.
    public private(set) var anchorTime: ClockTime?
    /// Media time of the frame due at `anchorTime`; set before the start by a resume or a seek.
    public private(set) var anchorMedia: Double?
    /// The next frame is the first of its timeline.
    public private(set) var firstOfTimeline = true
    /// When the last frame shown or dropped was due (gapless continuation counts from it).
    public private(set) var lastTarget: ClockTime?
    /// How far after now the next start of the timeline puts its first frame (once).
    public private(set) var startDelay = Duration.zero
    /// How late a frame timed by the sound may reach the screen.
    public var maxLateness = Duration.milliseconds(20)
    /// Frames dropped in a row for the sound at most.
    public var maxConsecutiveMasterDrops = 8
    /// How much earlier than its slot the first frame of a timeline starts its present on a
    /// screen that holds its commit until then.
    public var firstFrameDrawLead = Duration.milliseconds(50)
    private var masterDrops = 0

    public init(rate: Double = 1) { self.rate = rate }

    /// Whether the timeline has not started (the next frame starts it).
    public var needsStart: Bool { anchorTime == nil }

    /// Starts the timeline at the frame at `media`: due `now` (plus the start delay, unless a
    /// stall restarts it), at the anchor's media time when a resume or a seek set one.
    public mutating func start(media: Double, now: ClockTime, stalled: Bool = false) {
        anchorTime = now + (stalled ? .zero : startDelay)
        startDelay = .zero
        if anchorMedia == nil || stalled { anchorMedia = media }
        firstOfTimeline = true
    }

    /// When the frame at `media` is due, and whether the sound timed it (`heard`: the media time
    /// heard at `now`). Timed by the sound, the timeline is anchored at the frame.
    public mutating func target(of media: Double, now: ClockTime, heard: Double?) -> (time: ClockTime, bySound: Bool) {
        if let heard {
            let t = time(at: now, plus: media - heard)
            anchorTime = t
            anchorMedia = media
            return (t, true)
        }
        return (time(at: anchorTime ?? now, plus: media - (anchorMedia ?? media)), false)
    }

    /// Whether the frame at `media` is shown and where, or dropped as late.
    public mutating func aim(media: Double, in c: PresentContext) -> Decision {
        let (due, bySound) = target(of: media, now: c.now, heard: c.heard)
        var target = due
        var late = !firstOfTimeline && c.now > target + wholeNanoseconds(c.frameInterval / rate)
        if !late, !firstOfTimeline, bySound {
            late = lateForTheSound(seen: Self.seen(ifShownAt: c.now, aimedAt: target, on: c.grid), target: target, grid: c.grid)
        }
        if !late { masterDrops = 0 }
        var rebase: Rebase?
        // Timed by the sound, a late live frame is dropped as any other: the frames after it are
        // in the buffer already, there to catch up with.
        if late, c.lateIsNetwork {
            anchorTime = c.now
            anchorMedia = media
            target = c.now
            rebase = .network
        } else if late, c.live, !bySound {
            // A live source cannot be caught up: the timeline moves back to this frame, with one
            // frame interval to spare so that the frames after it, which come just in time, are
            // not late.
            let slack = wholeNanoseconds(c.frameInterval / rate)
            rebase = .liveSlip(seconds: (c.now - target + slack).secondsValue)
            anchorTime = c.now + slack
            anchorMedia = media
            target = c.now + slack
        } else if late {
            lastTarget = target
            return .drop(target: target)
        }
        let vblank = c.grid?.vblank(nearest: target)
        return .present(Aim(target: target, vblank: vblank,
                            presentAt: vblank.flatMap { v in c.grid?.presentTime(for: v) } ?? target,
                            seenAt: Self.seen(ifShownAt: c.now, aimedAt: target, on: c.grid),
                            timedBySound: bySound, firstOfTimeline: firstOfTimeline, rebase: rebase))
    }

    /// When to wake for `aim`, and until when its commit is held: the first frame of a timeline,
    /// on a screen that holds commits, is drawn `firstFrameDrawLead` early and committed at its
    /// time.
    public func wake(for aim: Aim, grid: VBlankGrid?) -> (at: ClockTime, commitHold: ClockTime?) {
        guard aim.firstOfTimeline, let grid, grid.holdsCommits else { return (aim.presentAt, nil) }
        return (aim.presentAt - min(aim.presentAt.sinceOrigin, firstFrameDrawLead), aim.presentAt + grid.commitLead)
    }

    /// Judged again after the wait, when the item has a sound clock (`heard` what it says now):
    /// the frame is dropped (its new target returned) when it would now be seen too late for the
    /// sound. On a screen it is still seen at `aim.seenAt`; elsewhere, now at the earliest.
    public mutating func judgeAfterWait(media: Double, aim: Aim, in c: PresentContext) -> ClockTime? {
        guard !firstOfTimeline else { return nil }
        let seen = c.grid == nil ? max(c.now, aim.target) : aim.seenAt
        let (heardTarget, bySound) = target(of: media, now: c.now, heard: c.heard)
        guard bySound, lateForTheSound(seen: seen, target: heardTarget, grid: c.grid) else { return nil }
        lastTarget = heardTarget
        return heardTarget
    }

    /// A read while waiting blocked past the stall threshold: the timeline starts again at the
    /// frame, due now (returned).
    public mutating func restartAfterStall(media: Double, now: ClockTime) -> ClockTime {
        anchorTime = now
        anchorMedia = media
        return now
    }

    /// The frame aimed at `target` was shown.
    public mutating func presented(target: ClockTime) {
        firstOfTimeline = false
        lastTarget = target
    }

    /// The timeline starts again at the next frame: the one at media time `media` (the frame's
    /// own when nil) is due then and never dropped (a resume, a seek, a rate change).
    public mutating func rebase(atMedia media: Double?) {
        anchorTime = nil
        anchorMedia = media
        firstOfTimeline = true
        lastTarget = nil
    }

    /// Forgets the last frame's time too (nothing to continue from).
    public mutating func clear() {
        lastTarget = nil
        rebase(atMedia: nil)
    }

    /// Changes the rate; the caller re-anchors at the position first when the timeline runs.
    public mutating func setRate(_ r: Double) { rate = r }

    /// Continues gaplessly into a new item whose first frame (media time 0) is due one frame
    /// interval (`previousInterval`, the last item's, at rate 1) after the last frame's time;
    /// false when there is none (the caller rebases).
    public mutating func continueGapless(previousInterval: Double) -> Bool {
        guard let last = lastTarget else { return false }
        anchorTime = last + wholeNanoseconds(previousInterval / rate)
        anchorMedia = 0
        return true
    }

    /// The next start of the timeline puts its first frame `delay` after that step.
    public mutating func delayNextStart(by delay: Duration) { startDelay = delay }

    /// Judges the frames available now (media times, in order) as successive steps at the same
    /// moment would: late ones dropped, the first one that is not late aimed. Starts the timeline
    /// at the first frame when it has not started. The caller says `presented` once it shows it.
    public mutating func plan(_ frames: [Double], in c: PresentContext) -> Plan {
        var plan = Plan()
        for (i, media) in frames.enumerated() {
            if needsStart { start(media: media, now: c.now) }
            switch aim(media: media, in: c) {
            case .drop: plan.dropped.append(i)
            case .present(let aim):
                plan.presented = i
                plan.aim = aim
                return plan
            }
        }
        return plan
    }

    /// How late a frame timed by the sound may be seen: `maxLateness`, at least half a refresh
    /// plus 1 ms more than the grid's own error.
    public func allowedLateness(grid: VBlankGrid?) -> Duration {
        max(maxLateness, .nanoseconds((grid?.period ?? .zero).nanosecondCount / 2) + .milliseconds(1))
    }

    /// The clock time `seconds` of media after (or before) clock time `base`, at the rate.
    private func time(at base: ClockTime, plus seconds: Double) -> ClockTime { clockTime(base, plus: seconds / rate) }

    /// Whether a frame timed by the sound at `target`, seen at `seen`, is more than
    /// `allowedLateness` behind it; counts the drop (`maxConsecutiveMasterDrops`: false past them).
    private mutating func lateForTheSound(seen: ClockTime, target: ClockTime, grid: VBlankGrid?) -> Bool {
        guard masterDrops < maxConsecutiveMasterDrops, seen > target + allowedLateness(grid: grid) else { return false }
        masterDrops += 1
        return true
    }

    /// When a frame aimed at `target` reaches the screen if its present starts at `now`: the
    /// vblank nearest its time when there is still time to commit for it, else the first one a
    /// commit from now reaches; without vblank timestamps, its time or now, whichever is later.
    public static func seen(ifShownAt now: ClockTime, aimedAt target: ClockTime, on grid: VBlankGrid?) -> ClockTime {
        guard let grid, let slot = grid.vblank(nearest: target) else { return max(now, target) }
        return grid.presentTime(for: slot) >= now ? slot : grid.vblank(after: now + grid.commitLead) ?? now
    }
}

/// Clock time `base` moved by `seconds` (of the clock), earlier ones too (never before the
/// clock's origin); cut to whole nanoseconds.
func clockTime(_ base: ClockTime, plus seconds: Double) -> ClockTime {
    let offset = seconds * 1e9
    let n = base.nanoseconds
    return ClockTime(nanoseconds: offset >= 0 ? n &+ UInt64(offset) : n &- min(n, UInt64(-offset)))
}

/// A span of `nanoseconds` (a `Double`, a frame interval at the rate) cut to whole nanoseconds.
func wholeNanoseconds(_ nanoseconds: Double) -> Duration { .nanoseconds(Int64(nanoseconds)) }
