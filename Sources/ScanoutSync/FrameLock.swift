import ScanoutCore
/// Which frame a member of a sync group shows at a vblank, so that every member shows frame N at
/// its vblank nearest the group time of N plus a latency, and what to do when its player is not
/// there (a frame one vblank early or late, or a seek when it is far off).
///
/// Frame N of the timeline's item (presentation time `pts(N) = firstPTS + N · frameDuration`) is
/// due on the group's clock at `timeline.groupTime + (pts(N) − timeline.mediaTime) / rate +
/// latency`. At a vblank at group time `g`, the frame to show is the last one due by `g + T/2`
/// (`T` the screen's refresh period): each frame then appears at the vblank nearest its due time,
/// on every screen, whatever their phases, so two screens show it at most `T/2` apart, plus their
/// clocks' disagreement. A pure value.
public struct FrameLock: Sendable, Equatable {
    /// Added to every frame's due time: the time a member has to decode and draw.
    public var latency: Int64
    public var frameDuration: Int64
    public var firstPTS: Int64

    public init(latency: Int64 = 100_000_000, frameDuration: Int64, firstPTS: Int64 = 0) {
        self.latency = latency
        self.frameDuration = frameDuration
        self.firstPTS = firstPTS
    }

    /// When frame `n` is due on the group's clock under `timeline` (nil while paused: nothing is
    /// due, the frame shown stays).
    public func due(_ n: Int64, under timeline: SyncTimeline) -> Int64? {
        guard !timeline.paused, timeline.rate > 0 else { return nil }
        let pts = firstPTS + n * frameDuration
        return timeline.groupTime + Int64((Double(pts - timeline.mediaTime) / timeline.rate).rounded()) + latency
    }

    /// The frame to show at a vblank at group time `vblank` on a screen refreshing every
    /// `refresh`: the last due by `vblank + refresh/2`; while paused, the frame at the timeline's
    /// media time.
    public func frame(atVBlank vblank: Int64, refresh: Int64, under timeline: SyncTimeline) -> Int64 {
        guard !timeline.paused, timeline.rate > 0 else { return index(of: timeline.mediaTime) }
        let media = timeline.mediaTime(atGroup: vblank + refresh / 2 - latency)
        return index(of: media)
    }

    /// The frame whose time covers media time `t`.
    private func index(of t: Int64) -> Int64 {
        let d = t - firstPTS
        return d >= 0 ? d / frameDuration : -((-d + frameDuration - 1) / frameDuration)
    }

    /// What a player showing frame `shown` (and able to show the frames after it in order) does
    /// at a vblank whose frame is `wanted`.
    public enum Action: Equatable, Sendable {
        /// Show the next frame (the usual step), or keep the one shown.
        case next, hold
        /// Skip `count` frames: the player is behind by a frame or a few.
        case skip(Int64)
        /// More than `seekBeyond` frames away, or behind: seek to the frame.
        case seek(Int64)
    }

    /// `seekBeyond`: frames off after which a seek is cheaper than waiting or skipping (about a
    /// GOP).
    public static func action(shown: Int64, wanted: Int64, seekBeyond: Int64) -> Action {
        let ahead = wanted - shown
        if ahead == 0 { return .hold }
        if ahead == 1 { return .next }
        if ahead > 1 && ahead <= seekBeyond { return .skip(ahead - 1) }
        // Ahead of the group by a frame or a few: hold until the group catches up; further, seek.
        if ahead < 0 && -ahead <= seekBeyond { return .hold }
        return .seek(wanted)
    }
}
