import Foundation
import ScanoutCore
import ScanoutDisplay
import ScanoutAudio

/// What a member of a sync group did to stay on the group's timeline, for `GET /sync` and the
/// metrics.
public struct GroupFollowStats: Sendable, Equatable {
    /// Frames shown at the vblank nearest their due time on the group's timeline (within half a
    /// refresh, and a millisecond for the clock's own error), and those shown a vblank or more
    /// before or after it.
    public var framesOnTime = 0
    public var framesEarly = 0
    public var framesLate = 0
    /// Frames skipped to catch the group up (dropped while the group's clock timed them).
    public var framesSkipped = 0
    /// Seeks to where the group is (a join mid-item, or further apart than `seekThreshold`).
    public var seeks = 0
    /// Items changed to the group's.
    public var itemChanges = 0
    /// Timelines this member set while it led.
    public var timelinesPublished = 0
    /// The sound against the group's timeline (seconds; positive: heard ahead), and the stretch
    /// keeping it there (ppm; positive: the sound made longer); nil without sound.
    public var soundError: Double?
    public var soundStretchPPM = 0
    /// The last frame's error against the group's timeline (seconds; positive: shown late).
    public var lastError: Double?
    public init() {}
}

/// A player's place in a sync group (`PlayerEngine.sync`): the group's clock as the session's
/// (`SyncMediaClock`), and what the engine does each turn to follow the leader's timeline, or
/// to set it while it leads.
///
/// - **Everyone shows a frame when the group's timeline reaches it.** A follower's session is
///   timed by the group's clock in place of its sound: a frame a little early waits (a vblank
///   more), a late one is skipped, as a frame is for the sound. Further apart than
///   `seekThreshold` (a join mid-item, a seek of the leader's), it seeks exactly to where the group
///   will be `seekLead` later, and waits there for the group.
/// - **The leader's timeline is the one its own frames keep**: each frame it aims gives a point
///   (media time, group time of its due time); a new item, a seek, a resume, a rate change or a
///   drift of more than `republishError` from the line last set is published. Paused, it
///   publishes the frame on screen, paused. A new leader goes on from the timeline it followed.
/// - **Items**: a follower plays the timeline's entry (by position, else by source) once it has
///   differed for `itemSettle` (an item ending a few milliseconds before the leader's is not a
///   change), pauses, resumes and changes rate with it.
public final class GroupPlayback {
    public let group: any SyncGroup
    public let clock: SyncMediaClock
    /// How far apart a follower seeks instead of skipping or waiting.
    public var seekThreshold = 1.0
    /// A follower's seek lands this far ahead of the group (seconds of media at rate 1): time
    /// to open, seek and decode before the group reaches it.
    public var seekLead = 0.5
    /// A leader's line is published again when its frames drift this far from it (seconds).
    public var republishError = 0.0005
    /// How long a follower's item may differ from the timeline's before it changes.
    public var itemSettle = Duration.milliseconds(750)
    /// The group starts playing once it has a leader: the leader starts (from `ready`) with its
    /// first frame this far ahead, which the followers, ready on the same item, start with.
    public var pendingAutoplay = false
    public var startLead = Duration.milliseconds(500)
    /// Told of each frame shown while following: its error against the timeline (seconds).
    public var onFrame: ((Double) -> Void)?
    /// Told of corrections made to follow: frames skipped, a seek, an item change (their count).
    public var onCorrection: ((Int) -> Void)?
    public internal(set) var stats = GroupFollowStats()
    /// The last state reported in events.
    var reported: SyncGroupState?
    var itemMismatchSince: ClockTime?
    var nextCorrection = ClockTime.zero
    var pausedAt: Double?
    var droppedBefore = 0
    var nextSoundCheck = ClockTime.zero
    /// The sound is brought back to the group's clock over this long (seconds).
    public var soundCatchUp = 20.0
    /// Closer than this (seconds), the sound is left as it is.
    public var soundDeadband = 0.0005

    /// The stretch (ppm) for sound heard `error` seconds ahead of the group, to be taken up over
    /// `catchUp` seconds: positive (longer, so later) when ahead, bounded by
    /// `AudioDecoder.maxStretch`.
    public static func stretch(forError error: Double, catchUp: Double) -> Int {
        let ppm = (error / catchUp * 1e6).rounded()
        return Int(min(max(ppm, -Double(AudioDecoder.maxStretch)), Double(AudioDecoder.maxStretch)))
    }

    public init(group: any SyncGroup) {
        self.group = group
        clock = SyncMediaClock(group: group)
    }
}

extension PlayerEngine {
    /// Joins a sync group (nil: leaves it): the session is timed by the group's clock while this
    /// member follows.
    public func attach(_ g: GroupPlayback?) {
        sync = g
        session.groupClock = g?.clock
        session.onTimelineAim = g == nil ? nil : { [unowned self] media, target in leaderAimed(media: media, target: target) }
    }

    /// One turn's share of following the group: events for changes of leadership and lock, then
    /// the leader's pause or the follower's catching up.
    func followGroup() {
        guard let g = sync else { return }
        let state = g.group.groupState
        reportGroupChanges(g, state)
        if state.leading {
            session.groupClock = nil   // the leader's frames keep the timeline
            g.droppedBefore = session.currentStats().framesDropped
            leaderTurn(g)
            return
        }
        session.groupClock = g.clock
        if let p = current { g.clock.bind(epoch: session.groupEpoch, index: Int32(p.index), item: listed(p).source) }
        guard state.locked, let t = g.group.currentTimeline else { return }
        followerTurn(g, t)
    }


    private func reportGroupChanges(_ g: GroupPlayback, _ s: SyncGroupState) {
        let before = g.reported
        g.reported = s
        func id(_ v: UInt64?) -> String? { v.map(SyncGroupState.name) }
        if before?.leader != s.leader || before?.leading != s.leading {
            emit(.leaderChanged(leader: id(s.leader), term: s.term, leading: s.leading))
        }
        if s.locked, before?.locked != true, let leader = id(s.leader) { emit(.syncLocked(leader: leader, term: s.term)) }
        if !s.locked, before?.locked == true {
            emit(.syncLost(reason: s.leader == nil ? "no leader heard for 2 s" : "no answer from the leader for 2 s"))
        }
    }

    /// The leader, paused (or ready, or at the end): the frame on screen, paused.
    private func leaderTurn(_ g: GroupPlayback) {
        if g.pendingAutoplay, state == .ready {
            g.pendingAutoplay = false
            session.delayNextStart(by: g.startLead)
            try? play(userInitiated: false)
        }
        guard !isRunning, let i = index, let p = current, [.paused, .ready, .ended].contains(state) else { return }
        let media = Int64((position * 1e9).rounded())
        if let t = g.group.currentTimeline, t.paused, t.index == Int32(i), t.mediaTime == media { return }
        guard let now = g.group.groupTime(at: clock.now()) else { return }
        publish(g, SyncTimeline(term: 0, index: Int32(i), item: listed(p).source, mediaTime: media, groupTime: now, rate: rate, paused: true))
    }

    /// The leader aimed the frame at `media` for `target`: published when it is off the line.
    func leaderAimed(media: Double, target: ClockTime) {
        guard let g = sync, g.group.isLeading, let i = index, let p = current, let at = g.group.groupTime(at: target) else { return }
        let point = SyncTimeline(term: 0, index: Int32(i), item: listed(p).source, mediaTime: Int64((media * 1e9).rounded()), groupTime: at,
                                 rate: rate, paused: false)
        if let t = g.group.currentTimeline, !t.paused, t.index == point.index, t.item == point.item, t.rate == point.rate,
           abs(Double(t.mediaTime(atGroup: at) - point.mediaTime)) <= g.republishError * 1e9 { return }
        publish(g, point)
    }

    private func publish(_ g: GroupPlayback, _ t: SyncTimeline) {
        g.group.publish(t)
        g.stats.timelinesPublished += 1
    }

    /// A follower: the timeline's item, pause and rate; then, playing, a seek when too far apart.
    private func followerTurn(_ g: GroupPlayback, _ t: SyncTimeline) {
        let now = clock.now()
        g.pendingAutoplay = false
        guard followItem(g, t, now: now) else { return }
        if t.paused {
            if isRunning { try? pause(userInitiated: false) }
            let target = Double(t.mediaTime) / 1e9
            if g.pausedAt != target, now >= g.nextCorrection, abs(position - target) > 0.001, current?.timeshift == nil {
                g.pausedAt = target
                g.nextCorrection = now + .seconds(1)
                if (try? seek(to: max(0, target), exact: true)) != nil {
                    g.stats.seeks += 1
                    g.onCorrection?(1)
                }
            }
            return
        }
        g.pausedAt = nil
        if t.rate != rate { try? setRate(t.rate) }
        if [.paused, .ready].contains(state) { try? play(userInitiated: false) }
        guard isRunning else { return }
        let dropped = session.currentStats().framesDropped
        let skipped = max(0, dropped - g.droppedBefore)
        g.droppedBefore = dropped
        if skipped > 0 {
            g.stats.framesSkipped += skipped
            g.onCorrection?(skipped)
        }
        guard let heard = g.clock.streamTime(at: now, epoch: session.groupEpoch) else { return }
        followSound(g, group: heard, now: now)
        guard now >= g.nextCorrection, abs(heard - position) > g.seekThreshold, current?.timeshift == nil else { return }
        var to = max(0, heard + g.seekLead * rate)
        if let d = duration { to = min(to, max(0, d - 0.5)) }
        g.nextCorrection = now + .seconds(2)
        if (try? seek(to: to, exact: true)) != nil {
            g.stats.seeks += 1
            g.onCorrection?(1)
        }
    }

    /// The sound follows the group's clock by resampling: heard `e` ahead of the timeline, it is
    /// made longer by `e / soundCatchUp` (at most `AudioDecoder.maxStretch` ppm; nothing within
    /// `soundDeadband`), so the device's drift (tens of ppm) is taken up with no click. Once a
    /// second; further apart than `seekThreshold` it is the video's seek that lines them up again.
    private func followSound(_ g: GroupPlayback, group: Double, now: ClockTime) {
        guard now >= g.nextSoundCheck else { return }
        g.nextSoundCheck = now + .seconds(1)
        guard let sound = session.soundMedia(at: now) else {
            g.stats.soundError = nil
            return
        }
        let e = (sound - group) / max(rate, 0.01)
        let ppm = abs(e) < g.soundDeadband ? 0 : GroupPlayback.stretch(forError: e, catchUp: g.soundCatchUp)
        g.stats.soundError = e
        if ppm != g.stats.soundStretchPPM {
            g.stats.soundStretchPPM = ppm
            audio.setStretch(ppm: ppm)
        }
    }

    /// Plays the timeline's item once this member's has differed from it for `itemSettle`;
    /// false while they differ.
    private func followItem(_ g: GroupPlayback, _ t: SyncTimeline, now: ClockTime) -> Bool {
        if let i = index, Int32(i) == t.index, let p = current, listed(p).source == t.item {
            g.itemMismatchSince = nil
            return true
        }
        guard let since = g.itemMismatchSince else {
            g.itemMismatchSince = now
            return false
        }
        guard now - since >= g.itemSettle, now >= g.nextCorrection else { return false }
        let byIndex = playlist.indices.contains(Int(t.index)) && playlist[Int(t.index)].source == t.item ? Int(t.index) : nil
        guard let j = byIndex ?? playlist.firstIndex(where: { $0.source == t.item }) else {
            g.nextCorrection = now + .seconds(10)
            emit(.warning("sync: the group plays \(URLRedaction.redact(t.item)), which this member's playlist does not hold"))
            return false
        }
        g.nextCorrection = now + .seconds(1)
        g.itemMismatchSince = nil
        do {
            if [.ended, .stopped].contains(state) { try prepare(j) } else { try jump(to: j) }
            g.stats.itemChanges += 1
            g.onCorrection?(1)
        } catch {
            emit(.warning("sync: cannot play the group's item \(j): \(error)"))
        }
        return false
    }

    /// A frame reached the screen: its error against the group's timeline, while following.
    func groupFramePresented() {
        guard let g = sync, session.groupClock != nil, let heard = g.clock.streamTime(at: clock.now(), epoch: session.groupEpoch) else { return }
        let error = (heard - position) / max(rate, 0.01)
        let half = (display.vblankSource?.refreshInterval.secondsValue ?? session.frameInterval) / 2 + 0.001
        if error > half { g.stats.framesLate += 1 } else if error < -half { g.stats.framesEarly += 1 } else { g.stats.framesOnTime += 1 }
        g.stats.lastError = error
        g.onFrame?(error)
    }
}
