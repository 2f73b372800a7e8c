import ScanoutCore
import ScanoutDecode

/// What a zone's picture watch raises.
public enum PictureAlarm: String, Sendable, CaseIterable {
    /// Every sampled point dark.
    case black
    /// The picture unchanged: the same frame again and again, or no new frame.
    case frozen
}

/// Watches one zone's picture as a multiviewer does: an alarm when it has been black, or
/// unchanged, for longer than its threshold while the zone plays, and its end when the picture
/// changes or lights up; also the zone's input bitrate from its bytes read. Pure: fed a look at
/// the zone (`observe`) at times of the caller's choosing, it answers with the alarms that
/// began or ended; a test drives it in virtual time.
public struct PictureWatch: Sendable {
    public struct Settings: Equatable, Sendable {
        /// Seconds black before the alarm; 0: not watched.
        public var black: Double
        /// Seconds unchanged before the alarm; 0: not watched.
        public var frozen: Double
        public init(black: Double = 5, frozen: Double = 10) { self.black = black; self.frozen = frozen }
    }

    /// What the zone looks like at one instant.
    public struct Look: Sendable {
        public var time: ClockTime
        /// Whether its player is playing (a paused, buffering or stopped zone raises nothing).
        public var playing: Bool
        /// Frames presented into the zone so far.
        public var presented: Int
        public var sample: PictureSample?
        /// Bytes its player has read so far.
        public var bytesRead: Int
        public init(time: ClockTime, playing: Bool, presented: Int, sample: PictureSample?, bytesRead: Int) {
            self.time = time; self.playing = playing; self.presented = presented; self.sample = sample; self.bytesRead = bytesRead
        }
    }

    public var settings: Settings
    /// Since when the picture has been black / unchanged (nil: it is not).
    private var blackSince: ClockTime?
    private var sameSince: ClockTime?
    private var lastSample: PictureSample?
    private var lastLook: ClockTime?
    /// The alarms raised now.
    public private(set) var active: Set<PictureAlarm> = []
    private var rateFrom: (time: ClockTime, bytes: Int)?
    /// Bits a second read over the last second or so; nil before a second has passed.
    public private(set) var bitrate: Double?

    public init(settings: Settings = Settings()) { self.settings = settings }

    /// Seconds the picture has been unchanged, as of the last look.
    public private(set) var unchangedSeconds = 0.0

    /// Takes a look at the zone; returns the alarms that began (`active` true, with the seconds
    /// the condition has lasted) or ended.
    public mutating func observe(_ look: Look) -> [(kind: PictureAlarm, active: Bool, seconds: Double)] {
        measureRate(look)
        guard look.playing else {
            // Not playing: nothing is watched, and a condition starts again from the next look.
            blackSince = nil; sameSince = nil; lastSample = nil; lastLook = nil; unchangedSeconds = 0
            let ended = PictureAlarm.allCases.filter { active.contains($0) }
            active.subtract(ended)
            return ended.map { ($0, false, 0) }
        }
        if let s = look.sample, s.isBlack { blackSince = blackSince ?? look.time } else { blackSince = nil }
        // The zone keeps its last frame's sample: no new frame is the same picture again. A
        // zone whose frames are in GPU memory has none, and is not watched for freezes.
        if let s = look.sample, let last = lastSample, s.looksLike(last) {
            sameSince = sameSince ?? lastLook ?? look.time
        } else {
            sameSince = nil
        }
        lastSample = look.sample
        lastLook = look.time
        unchangedSeconds = sameSince.map { (look.time - $0).secondsValue } ?? 0
        var changes: [(PictureAlarm, Bool, Double)] = []
        for (kind, since, limit) in [(PictureAlarm.black, blackSince, settings.black), (.frozen, sameSince, settings.frozen)] {
            let lasted = since.map { (look.time - $0).secondsValue } ?? 0
            let on = limit > 0 && since != nil && lasted >= limit
            if on && !active.contains(kind) {
                active.insert(kind)
                changes.append((kind, true, lasted))
            } else if !on && active.contains(kind) {
                active.remove(kind)
                changes.append((kind, false, lasted))
            }
        }
        return changes
    }

    private mutating func measureRate(_ look: Look) {
        guard let from = rateFrom else {
            rateFrom = (look.time, look.bytesRead)
            return
        }
        let span = (look.time - from.time).secondsValue
        guard span >= 1 else { return }
        bitrate = look.bytesRead >= from.bytes ? Double(look.bytesRead - from.bytes) * 8 / span : nil
        rateFrom = (look.time, look.bytesRead)
    }
}
