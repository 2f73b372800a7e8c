import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ScanoutRender

/// Where a player stands.
///
///     idle ──load──► preparing ──► ready ──play──► playing ⇄ paused
///                        │                          │  ▲
///                        ▼                          ▼  │
///                      error ◄── every item bad   buffering / seeking ──► back
///     playing ──end of the last item (repeat none)──► ended;  any ──stop──► stopped
public enum PlayerState: String, Sendable, CaseIterable {
    case idle, preparing, ready, playing, paused, buffering, seeking, ended, stopped, error
}

/// What happens at the end of an item.
public enum RepeatMode: String, Sendable, CaseIterable {
    /// Play the playlist once, then end.
    case none
    /// Play the current item again and again.
    case one
    /// Start the playlist again after its last item.
    case all
}

/// One entry of a playlist: a file path or URL, and how to show it.
public struct PlaylistItem: Equatable, Sendable {
    public var source: String
    /// Nil: the player's default scaling mode.
    public var scaling: ScalingMode?
    /// Extra clockwise rotation, degrees (0, 90, 180, 270), on top of the stream's own orientation.
    public var rotation: Int
    /// The decoder for this item; nil: the player's.
    public var playerType: PlayerType?
    /// The decoder the content suggests (a content token's `playerType` claim); the item's or
    /// the player's own choice wins over it, as the URL's `?playerType=` hint does.
    public var contentHint: PlayerType?
    /// The content token the item was authorised with, nil for none. The player does not read
    /// it; the output looks the item's policy up by it.
    public var token: String?
    /// Drawn over this item's frames; nil: the player's overlay (`PlayerConfiguration.overlay`).
    public var overlay: Overlay?
    /// This item's audio track (`--aid`/`--alang` per item); empty: the player's choice.
    public var audio = AudioSelection()
    /// This item's subtitles (a sideband file, a track, languages); nil: the player's
    /// (`PlayerConfiguration.subtitles`).
    public var subtitles: SubtitleSelection?

    public init(source: String, scaling: ScalingMode? = nil, rotation: Int = 0, playerType: PlayerType? = nil,
                contentHint: PlayerType? = nil, token: String? = nil, overlay: Overlay? = nil) {
        self.source = source
        self.scaling = scaling
        self.rotation = rotation
        self.playerType = playerType
        self.contentHint = contentHint
        self.token = token
        self.overlay = overlay
    }

    /// The stream's orientation followed by this item's rotation.
    public func orientation(stream: Orientation) -> Orientation {
        // Orientation = mirror^m ∘ rotate(a); rotate(r) ∘ mirror ∘ rotate(a) = mirror ∘ rotate(a − r).
        stream.mirrored ? Orientation(rotation: stream.rotation - rotation, mirrored: true)
                        : Orientation(rotation: stream.rotation + rotation)
    }
}

/// Why the service is not doing its job; empty when it is.
public struct ServiceReasons: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// Nothing to play: no playlist, or no item of it can be opened.
    public static let noSource = ServiceReasons(rawValue: 1)
    /// The current item fails to decode.
    public static let decodeFailing = ServiceReasons(rawValue: 2)
    /// The display refuses frames.
    public static let noOutput = ServiceReasons(rawValue: 4)
    /// A live source (UDP, RTP) sent nothing for longer than its timeout; playback goes on when
    /// packets come back.
    public static let sourceTimeout = ServiceReasons(rawValue: 8)
    /// The channel playing was withdrawn by its announcer (SAP delete, or no announcement within
    /// its timeout); playback stopped. Up again once something plays.
    public static let channelInvalid = ServiceReasons(rawValue: 16)

    public var names: [String] {
        var n: [String] = []
        if contains(.noSource) { n.append("noSource") }
        if contains(.decodeFailing) { n.append("decodeFailing") }
        if contains(.noOutput) { n.append("noOutput") }
        if contains(.sourceTimeout) { n.append("sourceTimeout") }
        if contains(.channelInvalid) { n.append("channelInvalid") }
        return n
    }
}

/// A command the player cannot carry out. Each case says what was asked and why not.
public enum PlayerError: Error, Equatable, Sendable, CustomStringConvertible {
    case emptyPlaylist
    case itemOutOfRange(index: Int, count: Int)
    case invalidState(command: String, state: PlayerState)
    case rateOutOfRange(Double)
    case rotationInvalid(Int)
    case seekOutOfRange(seconds: Double, duration: Double?)
    /// A timeshift command on an item that is not a live input.
    case notLive(command: String)
    /// `seek` on a live item: its positions are the timeshift buffer's (`seekTimeshift`).
    case seekOnLive
    /// A timeshift position outside what the buffer holds (stream time, seconds).
    case timeshiftOutOfRange(seconds: Double, start: Double?, end: Double?)
    case noNextItem
    case noPreviousItem
    case noPlayableItem(failures: Int)
    /// An item could not be opened or decoded.
    case media(item: Int, MediaError)
    /// The display failed.
    case output(String)
    /// A subtitle track the current item does not have (stream index).
    case subtitleTrackInvalid(Int)

    public var description: String {
        switch self {
        case .emptyPlaylist: return "the playlist is empty"
        case .itemOutOfRange(let i, let n): return "item \(i) does not exist (the playlist has \(n) item\(n == 1 ? "" : "s"))"
        case .invalidState(let c, let s): return "cannot \(c) while \(s.rawValue)"
        case .rateOutOfRange(let r): return "rate \(r) is outside 0.25...4"
        case .rotationInvalid(let r): return "rotation \(r) is not 0, 90, 180 or 270"
        case .seekOutOfRange(let s, let d): return "position \(s) s is outside the item" + (d.map { " (0...\($0) s)" } ?? "")
        case .notLive(let c): return "cannot \(c): the current item is not a live input (udp://, rtp://) with a timeshift buffer"
        case .seekOnLive: return "a live item has no item timeline to seek in: seek within its timeshift buffer (POST /timeshift/seek with relative or absolute)"
        case .timeshiftOutOfRange(let t, let a, let b):
            guard let a, let b else { return "position \(t) s: the timeshift buffer is still empty" }
            return "position \(t) s is outside the timeshift buffer (\(a)...\(b) s)"
        case .noNextItem: return "no item after the last one (repeat is none)"
        case .noPreviousItem: return "no item before the first one (repeat is none)"
        case .noPlayableItem(let n): return "no item of the playlist can be played (\(n) failed)"
        case .media(let i, let e): return "item \(i): \(e.description)"
        case .output(let s): return "output failed: \(s)"
        case .subtitleTrackInvalid(let t): return "stream \(t) is not a subtitle track of the current item (see tracks in /state)"
        }
    }
}

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
        }
    }
}

/// Settings of a player, changeable while it runs.
public struct PlayerConfiguration: Sendable, Equatable {
    /// Nanoseconds between two `position` events while playing.
    public var positionInterval: UInt64 = 1_000_000_000
    /// A frame read slower than this (nanoseconds) counts as buffering.
    public var stallThreshold: UInt64 = 500_000_000
    /// Image (any format libavformat reads: PNG, JPEG) shown when nothing can be played.
    public var slate: String?
    /// Scaling for items that name none.
    public var scaling: ScalingMode = .fit
    /// Drawn over the frames of items that name no overlay of their own, and over the slate.
    public var overlay: Overlay?
    /// Nanoseconds between two attempts to play again when every item failed.
    public var retryInterval: UInt64 = 5_000_000_000
    /// Where sound goes (`none`: silent), its volume, and the audio track of items naming none.
    public var audio = AudioSettings()
    public var demuxer = DemuxerOptions()
    public var decoder = DecoderOptions()
    /// The buffer kept of live (UDP/RTP) inputs for pause and seeks behind the live edge.
    public var timeshift = TimeshiftOptions()
    /// Subtitles of items that choose none of their own: by default a forced track only.
    public var subtitles = SubtitleSelection()
    /// Frames are shown at their time (false: every frame as soon as it is decoded, nothing
    /// read ahead: `play --untimed`, and `--capture`, which the display paces).
    public var timed = true
    /// A live input that goes silent: `buffering` until its packets come back, the service down
    /// past its timeout (true: `serve`); false: the read waits its timeout and the item fails
    /// with it (`play`).
    public var waitsOutSilence = true
    public init() {}

    public static func == (a: Self, b: Self) -> Bool {
        a.positionInterval == b.positionInterval && a.stallThreshold == b.stallThreshold && a.slate == b.slate
            && a.scaling == b.scaling && a.overlay == b.overlay && a.retryInterval == b.retryInterval
            && a.demuxer.timeoutSeconds == b.demuxer.timeoutSeconds && a.demuxer.live == b.demuxer.live
            && a.demuxer.adaptive == b.demuxer.adaptive && a.demuxer.readAhead == b.demuxer.readAhead
            && a.decoder.threads == b.decoder.threads && a.timeshift == b.timeshift && a.subtitles == b.subtitles
            && a.timed == b.timed && a.waitsOutSilence == b.waitsOutSilence
    }
}

/// An item that failed (or something beside the items: `item` nil), as its `error` event said.
public struct ItemFailure: Equatable, Sendable {
    public var item: Int?
    /// The item's source, nil when `item` is.
    public var source: String?
    public var message: String
    /// Whether the player moved on to another item by itself.
    public var skipped: Bool
}

/// The audio device being played to, and what it did so far.
public struct AudioOutputStatus: Sendable, Equatable {
    public var device: String
    /// The format the device took.
    public var format: AudioFormat
    /// The device's ring buffer and period, frames.
    public var bufferFrames: Int
    public var periodFrames: Int
    public var framesPlayed: Int
    /// Underruns recovered: the device ran dry (the writing thread did not get the CPU in time).
    public var underruns: Int
    /// Chunks dropped because the queue was full.
    public var chunksDropped: Int
    /// Why the device stopped, once it has.
    public var loss: String?
}

/// A copy of where the player stands, readable from any thread.
/// How the current item's source is buffered, and what a late source costs.
public struct BufferStatus: Sendable, Equatable {
    public enum Policy: String, Sendable {
        /// A network source with an end, read ahead: when it runs dry the clock pauses
        /// (`buffering`) until enough is held again; no frame is dropped for it.
        case pause
        /// A live source: it cannot be waited for; a late frame moves the timeline back to it
        /// (`liveSlips`), and a silent source is `buffering` until packets come back.
        case slip
        /// A local file: read at disk speed, as the decoder asks.
        case direct
    }
    public var policy: Policy
    /// What the read-ahead holds (`pause` only).
    public var level: BufferLevel?
    /// Waits for the read-ahead so far, and their length in all, seconds.
    public var waits = 0
    public var waitSeconds = 0.0
    /// Frames late because a read waited for the network, shown with the timeline moved back.
    public var networkLateFrames = 0
    public init(policy: Policy) { self.policy = policy }
}

public struct PlayerSnapshot: Sendable {
    public var state: PlayerState = .idle
    /// How the current item's source is buffered; nil with no item.
    public var buffer: BufferStatus?
    public var playlist: [PlaylistItem] = []
    public var index: Int?
    public var position: Double = 0
    public var duration: Double?
    public var rate: Double = 1
    public var repeatMode: RepeatMode = .none
    public var output = ""
    public var reasons: ServiceReasons = [.noSource]
    public var framesDecoded = 0
    public var framesPresented = 0
    public var framesDropped = 0
    /// Live inputs: late frames shown with the timeline moved back to them, and the delay added.
    public var liveSlips = 0
    public var liveSlipSeconds = 0.0
    public var bytesRead = 0
    public var decodeErrors = 0
    /// The latest pacing deviations (`PlaybackStats.pacingDeviations`), unsorted: the
    /// percentiles are worked out by whoever reads them, not on the playback thread, where
    /// sorting thousands of figures four times a second made frames late on a slow CPU.
    public var pacingDeviations: [UInt64] = []
    public var pacingP50Ms: Double { PlaybackStats.percentile(50, of: pacingDeviations) }
    public var pacingP99Ms: Double { PlaybackStats.percentile(99, of: pacingDeviations) }
    public var decodeMsPerFrame = 0.0
    public var presentMsPerFrame = 0.0
    public var itemsFailed = 0
    /// The latest failure reported; nil before any.
    public var lastFailure: ItemFailure?
    /// Frames drawn censored, by output name.
    public var framesCensored: [String: Int] = [:]
    /// Copies of decoded pictures between CPU and GPU memory, and the ones that stayed on the GPU.
    public var transfers = TransferCounts()
    /// What playback waits for while `buffering`; nil otherwise.
    public var bufferingReason: String?
    /// Whether the current item is a live input (udp://, rtp://).
    public var live = false
    /// Its timeshift buffer and the position in it; nil for other items.
    public var timeshift: TimeshiftStatus?
    /// Transport-stream counts of each live input (by source) since the service started.
    public var transport: [String: TSCounts] = [:]
    /// The current item's variant choice when it is an adaptive HLS stream; nil otherwise.
    public var adaptive: AdaptiveStatus?
    /// The current item's tracks (video, audio, subtitles); empty with no item.
    public var tracks: [TrackInfo] = []
    /// Stream indices of the tracks playing now (the subtitle track shown, the audio played).
    public var selectedTracks: Set<Int> = []
    /// The current item's subtitles; nil with no item.
    public var subtitles: SubtitleStatus?
    /// The audio device and its counts; nil while none is open.
    public var audioOutput: AudioOutputStatus?
    public init() {}
}
