import ScanoutCore
import ScanoutDisplay
import ScanoutPlayer
import Testing

/// The present scheduler in virtual time: no clock, display or decoder, every input given. The
/// input is 32 fps (a frame every 31.25 ms), so that media and clock times are exact in binary.
@Suite struct PresentSchedulerTests {
    let t0 = ClockTime(nanoseconds: 1_000_000_000)
    let interval = 31_250_000.0
    /// Media time of frame `k`.
    func m(_ k: Int) -> Double { Double(k) / 32 }
    func at(_ now: ClockTime, grid: VBlankGrid? = nil, heard: Double? = nil, network: Bool = false, live: Bool = false) -> PresentContext {
        PresentContext(now: now, grid: grid, frameInterval: interval, heard: heard, lateIsNetwork: network, live: live)
    }
    /// A scheduler whose timeline started at `t0` with frame 0, shown.
    func started(rate: Double = 1) -> PresentScheduler {
        var s = PresentScheduler(rate: rate)
        let plan = s.plan([m(0)], in: at(t0))
        s.presented(target: plan.aim!.target)
        return s
    }

    @Test func theFirstFrameStartsTheTimelineAndTheNextAreDueAtTheirTimes() throws {
        var s = PresentScheduler()
        #expect(s.needsStart)
        let first = s.plan([m(0)], in: at(t0))
        #expect(first.presented == 0 && first.dropped == [])
        let aim = try #require(first.aim)
        #expect(aim.target == t0 && aim.presentAt == t0 && aim.seenAt == t0)
        #expect(aim.firstOfTimeline && aim.rebase == nil && !aim.timedBySound && aim.vblank == nil)
        #expect(s.anchorTime == t0 && s.anchorMedia == 0)
        s.presented(target: aim.target)
        #expect(!s.firstOfTimeline && s.lastTarget == t0)
        // Asked early (at the start), each frame is due 31.25 ms after the one before.
        for k in 1...4 {
            guard case .present(let a) = s.aim(media: m(k), in: at(t0)) else { Issue.record("frame \(k) dropped"); continue }
            #expect(a.target == t0 + .nanoseconds(k * 31_250_000) && !a.firstOfTimeline)
            #expect(a.seenAt == a.target && a.presentAt == a.target)
            s.presented(target: a.target)
        }
    }

    /// A frame is dropped when more than one frame interval late; exactly one interval late it is
    /// still shown. The frames available are judged in order, the late ones dropped.
    @Test func framesMoreThanOneIntervalLateAreDropped() throws {
        var s = started()
        // 100 ms in: frames 1 (due 31.25) and 2 (due 62.5) are more than 31.25 ms late, frame 3
        // (due 93.75) is not.
        let plan = s.plan([m(1), m(2), m(3), m(4)], in: at(t0 + .nanoseconds(100_000_000)))
        #expect(plan.dropped == [0, 1])
        #expect(plan.presented == 2)
        #expect(plan.aim?.target == t0 + .nanoseconds(93_750_000))
        #expect(plan.aim?.seenAt == t0 + .nanoseconds(100_000_000))
        #expect(s.lastTarget == t0 + .nanoseconds(62_500_000), "the last dropped frame's time")
        #expect(s.anchorTime == t0 && s.anchorMedia == 0, "drops do not move the timeline")

        var edge = started()
        let onTime = edge.aim(media: m(1), in: at(t0 + .nanoseconds(62_500_000)))
        #expect(onTime != .drop(target: t0 + .nanoseconds(31_250_000)))
        let late = edge.aim(media: m(1), in: at(t0 + .nanoseconds(62_500_001)))
        #expect(late == .drop(target: t0 + .nanoseconds(31_250_000)))
    }

    /// The first frame of a timeline (a start, a seek, a resume) is never dropped, however late
    /// it is on the old timeline, and is due at once.
    @Test func theFirstFrameOfATimelineIsNeverDropped() throws {
        var s = started()
        s.rebase(atMedia: nil)
        #expect(s.needsStart && s.firstOfTimeline && s.lastTarget == nil)
        let now = t0 + .nanoseconds(10_000_000_000)
        let plan = s.plan([m(3), m(4)], in: at(now))
        #expect(plan.dropped == [] && plan.presented == 0)
        #expect(plan.aim?.target == now && plan.aim?.firstOfTimeline == true)
        #expect(s.anchorTime == now && s.anchorMedia == m(3))
    }

    /// Pausing is not stepping; the resume rebases at the frame after the picture on screen. It
    /// is due at the resume, the ones after it from there, and none is dropped; without the
    /// rebase all of them would have been.
    @Test func aResumeStartsTheTimelineAtTheFrameAfterThePicture() throws {
        var s = started()
        for k in 1...2 {
            guard case .present(let a) = s.aim(media: m(k), in: at(t0 + .nanoseconds(k * 31_250_000))) else { Issue.record("dropped"); return }
            s.presented(target: a.target)
        }
        let resume = t0 + .nanoseconds(5_000_000_000)
        var unpaused = s
        let unrebased = unpaused.plan([m(3), m(4), m(5)], in: at(resume))
        #expect(unrebased.dropped == [0, 1, 2])

        s.rebase(atMedia: m(3))
        let first = s.plan([m(3)], in: at(resume))
        #expect(first.presented == 0 && first.aim?.target == resume && first.aim?.firstOfTimeline == true)
        s.presented(target: resume)
        // A resume asked for the next frame's time (one after the picture): frame 4 is due one
        // interval after the resume.
        let next = s.plan([m(4), m(5)], in: at(resume))
        #expect(next.presented == 0 && next.aim?.target == resume + .nanoseconds(31_250_000))

        // Resumed at the picture's own time instead, the first frame decoded is due at the
        // resume plus its distance from it.
        var other = started()
        other.rebase(atMedia: m(2))
        let fromPicture = other.plan([m(3)], in: at(resume))
        #expect(fromPicture.aim?.target == resume + .nanoseconds(31_250_000))
    }

    @Test func theRateScalesTheTimelineAndTheLateness() throws {
        var fast = started(rate: 2)
        let four = fast.aim(media: m(4), in: at(t0))
        #expect(four == .present(.init(
            target: t0 + .nanoseconds(62_500_000), vblank: nil, presentAt: t0 + .nanoseconds(62_500_000), seenAt: t0 + .nanoseconds(62_500_000),
            timedBySound: false, firstOfTimeline: false, rebase: nil)))
        // At 2x a frame interval is 15.625 ms of clock: frame 1 (due 15.625) is dropped 31.25 ms
        // in; at 0.5x it is due at 62.5 ms and on time.
        let one = fast.aim(media: m(1), in: at(t0 + .nanoseconds(31_250_001)))
        #expect(one == .drop(target: t0 + .nanoseconds(15_625_000)))
        var slow = started(rate: 0.5)
        guard case .present(let a) = slow.aim(media: m(1), in: at(t0 + .nanoseconds(31_250_001))) else { Issue.record("dropped"); return }
        #expect(a.target == t0 + .nanoseconds(62_500_000))
        let again = slow.aim(media: m(1), in: at(t0 + .nanoseconds(125_000_001)))
        #expect(again == .drop(target: t0 + .nanoseconds(62_500_000)))
    }

    /// A rate change re-anchors at the picture (the session rebases at its position first): the
    /// next frame is due one interval at the new rate after the change.
    @Test func aRateChangeReanchorsAtThePicture() throws {
        var s = started()
        guard case .present(let a) = s.aim(media: m(1), in: at(t0 + .nanoseconds(31_250_000))) else { Issue.record("dropped"); return }
        s.presented(target: a.target)
        let change = t0 + .nanoseconds(40_000_000)
        for (rate, due) in [(2.0, change + .nanoseconds(15_625_000)), (0.5, change + .nanoseconds(62_500_000))] {
            var r = s
            r.rebase(atMedia: m(1))
            r.setRate(rate)
            // The frame on screen (media 1/32) anchors; frame 2 is the first decoded after it.
            let plan = r.plan([m(2), m(3)], in: at(change))
            #expect(plan.presented == 0 && plan.aim?.target == due, "rate \(rate)")
            #expect(r.anchorTime == change && r.anchorMedia == m(1) && r.rate == rate)
        }
    }

    /// 62.5 Hz, vblanks 5 ms after `t0`: each frame is aimed at the vblank nearest its time (one
    /// halfway between two at the later one), presented half a refresh before it.
    @Test func aFrameGoesToTheVBlankNearestItsTime() throws {
        let grid = VBlankGrid(period: .nanoseconds(16_000_000), lastVBlank: t0 + .nanoseconds(5_000_000))
        var s = PresentScheduler()
        var aims: [PresentScheduler.Aim] = []
        for k in 0...4 {
            if s.needsStart { s.start(media: m(k), now: t0) }
            guard case .present(let a) = s.aim(media: m(k), in: at(t0, grid: grid)) else { Issue.record("dropped"); return }
            aims.append(a)
            s.presented(target: a.target)
        }
        // Due at 0, 31.25, 62.5, 93.75 and 125 ms; vblanks at 5 + 16 n ms (125 is between 117
        // and 133).
        #expect(aims.map { grid.number(of: $0.vblank!) } == [0, 2, 4, 6, 8])
        #expect(aims.map(\.vblank) == [5, 37, 69, 101, 133].map { t0 + .milliseconds($0) })
        #expect(aims.map(\.presentAt) == [t0 - .nanoseconds(3_000_000)] + [29, 61, 93, 125].map { t0 + .milliseconds($0) })
        #expect(aims.dropFirst().map(\.seenAt) == aims.dropFirst().map(\.vblank!))
        // Halfway between two vblanks, the later one (6.5 periods after the phase: the 7th).
        #expect(grid.vblank(nearest: t0 + .nanoseconds(5_000_000) + .nanoseconds(104_000_000)) == t0 + .nanoseconds(117_000_000))
        #expect(grid.vblank(nearest: t0 + .nanoseconds(5_000_000) + .nanoseconds(103_999_999)) == t0 + .nanoseconds(101_000_000))
        // The first vblank's present time (5 − 8 ms) is past: it is seen at the first vblank a
        // commit from now reaches.
        #expect(aims[0].seenAt == t0 + .nanoseconds(5_000_000))
        // The draw's time comes off the present's start.
        var lead = started()
        let drawn = VBlankGrid(period: .nanoseconds(16_000_000), lastVBlank: t0 + .nanoseconds(5_000_000), commitLead: .nanoseconds(3_000_000))
        guard case .present(let d) = lead.aim(media: m(1), in: at(t0, grid: drawn)) else { Issue.record("dropped"); return }
        #expect(d.vblank == t0 + .nanoseconds(37_000_000) && d.presentAt == t0 + .nanoseconds(26_000_000))
    }

    /// 20 Hz and 32 fps: two frames fall in one vblank period and are aimed at the same vblank
    /// (the later one is the picture seen); a vblank can get none.
    @Test func twoFramesInOneVBlankPeriodAreAimedAtTheSameVBlank() throws {
        let grid = VBlankGrid(period: .nanoseconds(50_000_000), lastVBlank: t0 + .nanoseconds(5_000_000))
        var s = started()
        var numbers: [Int64] = []
        for k in 1...5 {
            guard case .present(let a) = s.aim(media: m(k), in: at(t0, grid: grid)) else { Issue.record("dropped"); return }
            numbers.append(grid.number(of: a.vblank!)!)
            s.presented(target: a.target)
        }
        // Due at 31.25, 62.5, 93.75, 125, 156.25 ms; vblanks at 5, 55, 105, 155 ms.
        #expect(numbers == [1, 1, 2, 2, 3])
    }

    /// A frame whose present time has passed is seen at the first vblank a commit from now
    /// reaches; it is late for it, not dropped while within an interval.
    @Test func aFramePastItsPresentTimeIsSeenAtTheNextVBlankReached() throws {
        let grid = VBlankGrid(period: .nanoseconds(16_000_000), lastVBlank: t0 + .nanoseconds(5_000_000), commitLead: .nanoseconds(2_000_000))
        var s = started()
        guard case .present(let a) = s.aim(media: m(1), in: at(t0 + .nanoseconds(40_000_000), grid: grid)) else { Issue.record("dropped"); return }
        #expect(a.vblank == t0 + .nanoseconds(37_000_000))
        #expect(a.seenAt == t0 + .nanoseconds(53_000_000))
    }

    /// Late because the network was: shown, the timeline moved back to it (due now), and the
    /// next frame due one interval later.
    @Test func aFrameLateForTheNetworkRebasesInsteadOfDropping() throws {
        var s = started()
        let now = t0 + .nanoseconds(200_000_000)
        let plan = s.plan([m(1), m(2)], in: at(now, network: true))
        #expect(plan.dropped == [] && plan.presented == 0)
        #expect(plan.aim?.rebase == .network && plan.aim?.target == now && plan.aim?.firstOfTimeline == false)
        #expect(s.anchorTime == now && s.anchorMedia == m(1))
        s.presented(target: now)
        let after = s.plan([m(2)], in: at(now))
        #expect(after.aim?.target == now + .nanoseconds(31_250_000))
        // The same frame with the network not to blame is dropped.
        var other = started()
        let blamed = other.plan([m(1)], in: at(now))
        #expect(blamed.dropped == [0])
    }

    /// A late live frame not timed by the sound moves the timeline to one interval from now;
    /// timed by the sound it is dropped as a file's.
    @Test func aLateLiveFrameSlipsTheTimeline() throws {
        var s = started()
        let now = t0 + .nanoseconds(200_000_000)
        guard case .present(let a) = s.aim(media: m(1), in: at(now, live: true)) else { Issue.record("dropped"); return }
        #expect(a.rebase == .liveSlip(seconds: 0.2))
        #expect(a.target == now + .nanoseconds(31_250_000) && s.anchorTime == now + .nanoseconds(31_250_000) && s.anchorMedia == m(1))

        var heard = started()
        // Heard at 1/32 + 250 ms: frame 1 was due 250 ms ago.
        let late = heard.aim(media: m(1), in: at(now, heard: m(1) + 0.25, live: true))
        #expect(late == .drop(target: now - .nanoseconds(250_000_000)))
    }

    /// Timed by the sound: due when it is heard, the timeline anchored at it; dropped when seen
    /// more than `maxLateness` after it is heard, at most `maxConsecutiveMasterDrops` in a row.
    @Test func theSoundTimesFramesAndDropsThoseSeenTooLate() throws {
        var s = started()
        let now = t0 + .nanoseconds(500_000_000)
        guard case .present(let a) = s.aim(media: m(17), in: at(now, heard: m(16))) else { Issue.record("dropped"); return }
        #expect(a.target == now + .nanoseconds(31_250_000) && a.timedBySound)
        #expect(s.anchorTime == now + .nanoseconds(31_250_000) && s.anchorMedia == m(17))
        s.presented(target: a.target)

        // Heard 23.4375 ms past the frame: within an interval, past the 20 ms allowed.
        let behind = 3.0 / 128
        s.maxConsecutiveMasterDrops = 3
        for k in 18...20 {
            let d = s.aim(media: m(k), in: at(now, heard: m(k) + behind))
            #expect(d == .drop(target: now - .nanoseconds(23_437_500)), "frame \(k)")
        }
        guard case .present(let shown) = s.aim(media: m(21), in: at(now, heard: m(21) + behind)) else { Issue.record("dropped"); return }
        #expect(shown.target == now - .nanoseconds(23_437_500))
        s.presented(target: shown.target)
        // On time again, the count starts over.
        _ = s.aim(media: m(22), in: at(now, heard: m(22)))
        let again = s.aim(media: m(23), in: at(now, heard: m(23) + behind))
        #expect(again == .drop(target: now - .nanoseconds(23_437_500)))
        // With a 60 Hz grid the lateness allowed is half a refresh plus 1 ms (about 9.3 ms) at
        // least; 20 ms stays the bound.
        #expect(s.allowedLateness(grid: VBlankGrid(period: .nanoseconds(16_666_667), lastVBlank: nil)) == .milliseconds(20))
        #expect(s.allowedLateness(grid: VBlankGrid(period: .nanoseconds(50_000_000), lastVBlank: nil)) == .milliseconds(26))
    }

    /// After the wait, a frame the sound has overtaken is dropped; the first frame of a timeline
    /// is not judged again.
    @Test func theSoundJudgesAFrameAgainAfterTheWait() throws {
        var s = started()
        let now = t0 + .nanoseconds(500_000_000)
        guard case .present(let a) = s.aim(media: m(17), in: at(now, heard: m(16))) else { Issue.record("dropped"); return }
        // At its time, the sound is 23.4375 ms further on than the frame (20 ms allowed).
        let woke = a.target
        let overtaken = s.judgeAfterWait(media: m(17), aim: a, in: at(woke, heard: m(17) + 3.0 / 128))
        #expect(overtaken == woke - .nanoseconds(23_437_500))
        #expect(s.lastTarget == woke - .nanoseconds(23_437_500))
        let inTime = s.judgeAfterWait(media: m(17), aim: a, in: at(woke, heard: m(17)))
        #expect(inTime == nil)

        var first = PresentScheduler()
        let plan = first.plan([m(0)], in: at(t0, heard: 0))
        let judged = first.judgeAfterWait(media: 0, aim: plan.aim!, in: at(t0, heard: 1))
        #expect(judged == nil)
    }

    /// On a screen that holds commits, the first frame of a timeline is drawn early and its
    /// commit held to its present time plus the draw; the others wake at their present time.
    @Test func theFirstFrameHoldsItsCommit() throws {
        let grid = VBlankGrid(period: .nanoseconds(16_000_000), lastVBlank: t0 + .nanoseconds(5_000_000), commitLead: .nanoseconds(3_000_000), holdsCommits: true)
        var s = PresentScheduler()
        let now = t0 + .nanoseconds(100_000_000)
        let first = try #require(s.plan([m(0)], in: at(now, grid: grid)).aim)
        // Due at 100 ms: vblank 101, presented at 101 − 8 − 3 = 90 ms.
        #expect(first.vblank == t0 + .nanoseconds(101_000_000) && first.presentAt == t0 + .nanoseconds(90_000_000))
        let wake = s.wake(for: first, grid: grid)
        #expect(wake.at == t0 + .nanoseconds(40_000_000) && wake.commitHold == t0 + .nanoseconds(93_000_000))
        s.presented(target: first.target)
        guard case .present(let next) = s.aim(media: m(1), in: at(now, grid: grid)) else { Issue.record("dropped"); return }
        #expect(s.wake(for: next, grid: grid).at == next.presentAt && s.wake(for: next, grid: grid).commitHold == nil)
        var plain = grid
        plain.holdsCommits = false
        #expect(s.wake(for: first, grid: plain).commitHold == nil)
    }

    /// A new item continues gaplessly: its first frame (media 0) is due one interval of the
    /// last item (at the rate) after the last frame's time; a start can be delayed once.
    @Test func gaplessContinuationAndADelayedStart() throws {
        var s = started(rate: 2)
        guard case .present(let a) = s.aim(media: m(5), in: at(t0)) else { Issue.record("dropped"); return }
        s.presented(target: a.target)
        let continued = s.continueGapless(previousInterval: 40_000_000)
        #expect(continued)
        #expect(!s.needsStart && s.anchorTime == a.target + .nanoseconds(20_000_000) && s.anchorMedia == 0)
        let gapless = s.plan([0], in: at(t0))
        #expect(gapless.aim?.target == a.target + .nanoseconds(20_000_000))

        var fresh = PresentScheduler()
        let nothing = fresh.continueGapless(previousInterval: 40_000_000)
        #expect(!nothing)
        fresh.delayNextStart(by: .nanoseconds(100_000_000))
        let delayed = fresh.plan([m(0)], in: at(t0))
        #expect(delayed.aim?.target == t0 + .nanoseconds(100_000_000))
        fresh.rebase(atMedia: nil)
        let undelayed = fresh.plan([m(0)], in: at(t0))
        #expect(undelayed.aim?.target == t0, "the delay is used once")
    }

    /// A stall restarts the timeline at the frame that finally came, due at once.
    @Test func aStallRestartsTheTimelineAtTheFrame() throws {
        var s = started()
        let now = t0 + .nanoseconds(3_000_000_000)
        let restarted = s.restartAfterStall(media: m(7), now: now)
        #expect(restarted == now)
        #expect(s.anchorTime == now && s.anchorMedia == m(7))
        s.start(media: m(8), now: now, stalled: true)
        #expect(s.anchorMedia == m(8) && s.firstOfTimeline)
    }
}
