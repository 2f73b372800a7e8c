import Foundation
import ScanoutCore
import ScanoutDemux

/// Seconds each step of preparing an item took: opening the input (for a live channel, joining
/// it), probing its streams (for a live channel, mostly waiting for a keyframe), opening the
/// decoder, and decoding the first frame.
public struct PreparationStages: Equatable, Sendable {
    public var open: Double
    public var probe: Double
    public var decoder: Double
    public var firstDecode: Double

    public init(open: Double, probe: Double, decoder: Double, firstDecode: Double) {
        self.open = open
        self.probe = probe
        self.decoder = decoder
        self.firstDecode = firstDecode
    }
}

/// What a player reports, in the order it happens. Delivered on the player's loop thread.
public enum PlayerEvent: Equatable, Sendable {
    case stateChanged(from: PlayerState, to: PlayerState)
    /// An item is open and its first frame decoded.
    case prepared(item: Int, source: String, width: Int, height: Int, codec: String, duration: Double?)
    /// Playback started or resumed; `userInitiated` is false when the player did it itself
    /// (autoplay, a kiosk's restart).
    case play(userInitiated: Bool)
    case pause(userInitiated: Bool)
    /// Waiting for data (on), or playing again (off); `reason` says what is awaited.
    case buffering(Bool, reason: String? = nil)
    /// A live input's transport stream showed continuity-counter errors or discontinuities since
    /// the last report (`ccErrors`, `discontinuities`, `rtpPacketsLost` are the new ones;
    /// `totals`, the channel's since the service started).
    case discontinuity(source: String, item: Int?, ccErrors: Int, discontinuities: Int, rtpPacketsLost: Int, totals: TSCounts)
    /// An adaptive HLS item's variant: the start one (`from` nil), then each change, whose first
    /// frame is the keyframe at `pts` (`seconds` on the item's timeline); `bandwidth` (bits a
    /// second) is the throughput that decided it.
    case variantSwitch(item: Int?, from: HLSVariant?, to: HLSVariant, bandwidth: Double, reason: String, pts: Int64?, seconds: Double?)
    case stop
    case seekStarted(target: Double, exact: Bool)
    /// Landed on `frame` (its number when the seek was exact) at `position` seconds.
    case seekCompleted(position: Double, frame: Int?)
    case durationChanged(Double?)
    /// The current item changed (playlist move, gapless transition, loop).
    case itemChanged(index: Int, source: String)
    /// The first frame of the current item is on screen; `sinceRequest` is the time in seconds
    /// from the command that made it current (load, jump, next/previous, a retry) to its
    /// presentation — a channel change's zap time — and nil after a gapless transition;
    /// `stages`, where the item's preparation spent its time.
    case firstFrame(item: Int, source: String, sinceRequest: Double?, stages: PreparationStages)
    case position(seconds: Double, duration: Double?, item: Int)
    case rateChanged(Double)
    /// A rate above 2x: the machine may not keep up.
    case warning(String)
    case ended
    /// `item` failed; `skipped` when the player moved on to another item by itself.
    case error(message: String, item: Int?, skipped: Bool)
    /// Decoding moved from one decoder to another (e.g. "hw" → "sw") at frame `frame`.
    case decoderFallback(from: String, to: String, reason: String, frame: Int)
    /// The audio device could not open, or failed mid-play: video goes on with its own clock.
    case audioLost(device: String, reason: String)
    /// The audio device that could not open opened (tried again every `PlayerAudio.reopenInterval`).
    case audioRestored(device: String)
    case outputChanged(description: String)
    /// `output` stopped showing the content (a content policy's `reason`), or shows it again (nil).
    case outputCensored(output: String, reason: String?)
    /// The HDCP link of `output` changed state.
    case hdcpChanged(output: String, state: String)
    /// The service as a whole is up (reasons empty) or down (why).
    case serviceState(up: Bool, reasons: ServiceReasons)
    /// The timeshift buffer dropped the packets at the position of a paused (or behind-live)
    /// live item: the position moved from `from` to the buffer's start (stream time, seconds).
    case timeshiftWrapped(from: Double, to: Double)
    /// Playback of a live item is at the live edge again (`playLive`).
    case liveEdge(position: Double)
    /// A channel of the channel list was tuned: its URL is the current item.
    case channelChanged(id: String, name: String, source: String)
    /// Channels came into the channel list or left it (`count`: how many it holds now).
    case channelsChanged(count: Int, added: [String], removed: [String])
    /// The channel playing left the announcements (`reason`); playback stopped.
    case channelInvalid(id: String, reason: String)
    /// The subtitles shown changed: another track or file, on/off, or the delay (`POST /subtitles`).
    case subtitlesChanged(SubtitleStatus)
    /// A download of the offline store advanced (at most twice a second): bytes on disk of
    /// `total` (announced lengths, the estimate for the rest), `rate` in bytes a second, `eta`
    /// in seconds (nil: unknown).
    case downloadProgress(id: String, bytes: Int64, total: Int64, percent: Double, rate: Double, eta: Double?)
    /// A download's state changed (queued, downloading, paused, completed, failed, cancelled).
    case downloadState(id: String, state: String, reason: String?)
    /// A zone's picture has been black, or unchanged, for `seconds` while it plays (`active`),
    /// or is no longer (`active` false): a multiviewer's alarm (`PictureWatch`).
    case pictureAlarm(kind: PictureAlarm, active: Bool, seconds: Double)
    /// In a sync group: this member has the group's clock and follows `leader` (leading itself:
    /// its own id).
    case syncLocked(leader: String, term: UInt64)
    /// In a sync group: this member lost the group's clock (`reason`) and runs on its own.
    case syncLost(reason: String)
    /// In a sync group: another member leads (`leading`: this one), under leadership `term`.
    case leaderChanged(leader: String?, term: UInt64, leading: Bool)
    /// The schedule's rule that holds changed (`rule`: event, slot or default; `id` its name):
    /// its playlist plays; `next`: when the next change comes (and its rule), nil: none within
    /// a week.
    case scheduleChanged(rule: String, id: String?, next: Date?, nextRule: String?)
    /// The screens were switched off or on (`POST /display`, the schedule).
    case displayPower(on: Bool)

    /// The event's name on the wire (SSE `event:` field).
    public var name: String {
        switch self {
        case .stateChanged: return "stateChanged"
        case .prepared: return "prepared"
        case .play: return "play"
        case .pause: return "pause"
        case .buffering: return "buffering"
        case .discontinuity: return "discontinuity"
        case .variantSwitch: return "variantSwitch"
        case .stop: return "stop"
        case .seekStarted: return "seekStarted"
        case .seekCompleted: return "seekCompleted"
        case .durationChanged: return "durationChanged"
        case .itemChanged: return "itemChanged"
        case .firstFrame: return "firstFrame"
        case .position: return "position"
        case .rateChanged: return "rateChanged"
        case .warning: return "warning"
        case .ended: return "ended"
        case .error: return "error"
        case .decoderFallback: return "decoderFallback"
        case .audioLost: return "audioLost"
        case .audioRestored: return "audioRestored"
        case .outputChanged: return "outputChanged"
        case .outputCensored: return "outputCensored"
        case .hdcpChanged: return "hdcpChanged"
        case .serviceState: return "serviceState"
        case .timeshiftWrapped: return "timeshiftWrapped"
        case .liveEdge: return "liveEdge"
        case .channelChanged: return "channelChanged"
        case .channelsChanged: return "channelsChanged"
        case .channelInvalid: return "channelInvalid"
        case .subtitlesChanged: return "subtitlesChanged"
        case .downloadProgress: return "downloadProgress"
        case .downloadState: return "downloadState"
        case .pictureAlarm: return "pictureAlarm"
        case .syncLocked: return "syncLocked"
        case .syncLost: return "syncLost"
        case .leaderChanged: return "leaderChanged"
        case .scheduleChanged: return "scheduleChanged"
        case .displayPower: return "displayPower"
        }
    }
}
