import Foundation
import ScanoutDisplay
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ScanoutRender

/// The player's state machine and playback loop, driven one call at a time: commands (`load`,
/// `play`, `pause`, `seek`, ...) and `tick`, which shows the next frame when playing.
///
/// Everything here runs on one thread: the engine owns the display, the readers, decoders and
/// seekers of the current item and the slate. `Player` runs an engine on a thread of its own (the
/// service); `scanout play` runs one on its main thread (`run`); tests drive one directly with a
/// `ManualClock`, so state sequences, drops and timing are exact.
///
/// Events go to `emit` synchronously, in the order things happen.
///
/// The engine is split by concern: this file holds its stored state, queries and snapshot;
/// `+State` the phases and the values kept beside them; `+Commands` and `+Seek` what the API
/// asks; `+Tick` one turn of the loop; `+Items` how items are opened, made current and followed;
/// `+Retry` failure, the slate and the retry; `+Network` buffering, stalls, live silence and
/// transport; `+Run` playing to the end on the calling thread.
public final class PlayerEngine {
    public let clock: any PlaybackClock
    public let display: any Display
    public var configuration: PlayerConfiguration {
        didSet {
            configuration = Self.adopt(configuration, for: display, transfers: oldValue.decoder.transfers)
            session.stallThreshold = configuration.stallThreshold
            session.timed = configuration.timed
            audio.setVolume(configuration.audio)
        }
    }
    /// Where the engine stands, with what only one state needs (`EnginePhase`).
    var phase: EnginePhase = .idle
    public var state: PlayerState { phase.state }
    public internal(set) var playlist: [PlaylistItem] = []
    /// Index of the current item, nil before a load.
    public internal(set) var index: Int?
    public internal(set) var repeatMode: RepeatMode = .none
    public internal(set) var rate = 1.0
    public internal(set) var reasons: ServiceReasons = [.noSource]
    /// Items that failed to open or decode since the start.
    public internal(set) var itemsFailed = 0
    /// Frames drawn censored, by output name (a content policy's verdicts, counted by the output).
    public internal(set) var framesCensored: [String: Int] = [:]
    /// How each output shows the content's colour, by output name, as it last reported it
    /// ("HDR10 (PQ), …", "tone mapped to SDR (why)", "sdr").
    public internal(set) var outputColours: [String: String] = [:]
    /// Called when an item becomes current, before its first frame is shown (the output applies
    /// the item's content policy here).
    public var onItemChanged: ((PlaylistItem) -> Void)?
    /// Called on the loop thread from inside a read that blocks, once `buffering` has been
    /// announced there: the loop's owner publishes its state copy (the loop is not ticking).
    public var onBufferingInsideRead: (() -> Void)?
    /// Called when the timeline starts (`waiting`) or stops waiting for the current item's
    /// read-ahead, with what it holds then (`scanout play` prints both).
    public var onReadAheadWait: ((_ waiting: Bool, _ level: BufferLevel) -> Void)?
    /// A local copy of a source (the service's offline store), asked each time an item is
    /// opened; nil, or an answer nil: the source itself; a failure: the item fails with it (a
    /// licence that expired). A local input's content key reaches that item's demuxer only.
    public var localInput: ((String) -> Result<LocalInput, MediaError>?)?
    /// Where each frame shown is logged with the time it reached the screen (`--present-log`).
    public var presentLog: PresentLog?
    public let session: PlaybackSession

    var current: PreparedItem?
    /// The current item's subtitles (`PlayerSubtitles`).
    let subtitles = PlayerSubtitles()
    let preparer: ItemPreparer
    let sink: (PlayerEvent) -> Void
    /// The latest item failure reported (an `error` event), for `/state`; nil before any.
    public internal(set) var lastFailure: ItemFailure?
    /// The typed error behind the latest failure of an item that was playing (a read or decode
    /// failure, the display refusing frames); nil before any. `lastFailure` says it in words.
    public internal(set) var lastPlaybackError: (any Error)?
    var lastPositionEvent = ClockTime.zero
    /// The item after the current one, to be prepared once the current one has settled.
    var upcoming: Upcoming = .none
    /// How long after the current item's first frame the next one starts being prepared, at
    /// most (a quarter of a shorter item's length): not while the item starts. Opening the next
    /// item (its probe, its decoder's threads, its first decode) at the same moment as the
    /// current one's first frames made those frames late: in the vkms guest (2 CPUs) the first
    /// frame of `serve --repeat one` reached the screen 76–250 ms after its aim, against 46 ms
    /// for `play`, and the two frames after it were dropped. mpv and GStreamer's playbin open
    /// the next item near the end of the current one; this one still has the rest of it.
    public var upcomingSettle = Duration.seconds(1)
    /// The slate is on screen (shown once per failure, not again at each retry).
    var slateShown = false
    /// Why the loop waits on the current item's source, while it does (`BufferingWait`).
    var wait: BufferingWait?
    var transport = TransportTally()
    /// When the command that is making an item current began (load, prepare, jump, a retry).
    var requestStartedAt: ClockTime?
    /// The current item's first frame is still to be shown: when it was asked for (nil after a
    /// gapless transition, which no command asked for).
    var awaitingFirstFrame: FirstFrameRequest?
    var variantTally = VariantTally()
    /// The current item's audio track, decoder and output (`PlayerAudio`).
    public let audio = PlayerAudio()
    /// Decoder fallbacks posted from the thread that decodes, turned into events by `tick`.
    let fallbackInbox = FallbackInbox()
    /// Whether the screens are on (`setDisplayPower`), and whether playback goes on when they are.
    public internal(set) var displayOn = true
    var resumeOnPower = false
    /// Screens switched beside the display (HDMI-CEC): off after it, on before it.
    public var screenPower: [any ScreenPowerSwitch] = []
    /// The preparer holds a playlist's item about to be loaded (`preload`), not the next one.
    var preloading = false
    /// The sync group this player is a member of (`attach`); nil: none.
    public internal(set) var sync: GroupPlayback?

    /// `background`: the next item is prepared on a thread of its own (a real player); false:
    /// on the caller's thread, at once (tests with a manual clock, `scanout play`).
    public init(display: any Display, clock: any PlaybackClock = MonotonicClock(), configuration: PlayerConfiguration = PlayerConfiguration(),
                backgroundPreparation: Bool = false, emit: @escaping (PlayerEvent) -> Void) {
        self.display = display
        self.clock = clock
        let configuration = Self.adopt(configuration, for: display, transfers: nil)
        self.configuration = configuration
        sink = emit
        preparer = ItemPreparer(mode: backgroundPreparation ? .background : .inline)
        session = PlaybackSession(display: display, clock: clock, timed: configuration.timed)
        session.stallThreshold = configuration.stallThreshold
        session.deviationWindow = 4096
        session.transfers = configuration.decoder.transfers
        audio.clock = { [clock] in clock.now() }
        session.onBuffering = { [unowned self] waiting, level in networkBuffering(waiting, level: level) }
    }

    /// `c` with the pipeline's own decoder settings (`Display.decoding`), one copy counter for
    /// the life of the engine (`transfers`, kept across configuration changes).
    private static func adopt(_ c: PlayerConfiguration, for display: any Display, transfers: FrameTransfers?) -> PlayerConfiguration {
        var c = c
        // A live input that stalls hands control back to the loop each second (commands run,
        // `buffering` is reported) instead of blocking until its timeout; unless the item is to
        // fail at its timeout (`waitsOutSilence` false: `scanout play`).
        c.demuxer.live.reportStalls = c.waitsOutSilence
        // An audio-only item plays its sound with a still on screen.
        c.demuxer.acceptsAudioOnly = true
        c.decoder.transfers = c.decoder.transfers ?? transfers
        c.decoder = display.decoding(c.decoder)
        return c
    }

    // MARK: Queries

    public var position: Double { session.position }
    public var duration: Double? { current?.video.durationSeconds }
    public var currentItem: PreparedItem? { current }
    /// Whether `tick` has a frame to show (the loop should not wait for a command).
    public var isRunning: Bool { state == .playing || state == .buffering }
    /// When `tick` next has work while not running (a retry), on the engine's clock.
    public var nextWakeup: ClockTime? {
        if case .error(let retryAt) = phase { return retryAt }
        // In a sync group, the leader's pauses, resumes and items are followed while not playing.
        if sync != nil { return clock.now() + .milliseconds(50) }
        // Paused on a live item: the buffer fills meanwhile; look now and then whether it wrapped.
        if state == .paused, current?.timeshift != nil { return clock.now() + .milliseconds(200) }
        return nil
    }

    /// The error that kept the current item's subtitles from starting (a sideband file that
    /// cannot be read), nil when they started or none were asked for.
    public var subtitleFailure: (any Error)? { subtitles.failure }

    public func snapshot() -> PlayerSnapshot {
        var s = PlayerSnapshot()
        s.state = state
        s.playlist = playlist
        s.index = index
        s.position = position
        s.duration = duration
        s.rate = rate
        s.repeatMode = repeatMode
        s.output = display.description
        s.displayOn = displayOn
        s.reasons = reasons
        let st = session.currentStats()
        s.framesDecoded = st.framesDecoded
        s.framesPresented = st.framesPresented
        s.framesDropped = st.framesDropped
        s.liveSlips = st.liveSlips
        s.liveSlipSeconds = st.liveSlipSeconds
        s.bytesRead = st.bytesRead
        s.decodeErrors = st.decodeErrors.errorCount
        s.pacingDeviations = st.pacingDeviations
        s.decodeMsPerFrame = st.framesDecoded > 0 ? st.decodeSeconds * 1000 / Double(st.framesDecoded) : 0
        s.presentMsPerFrame = st.framesPresented > 0 ? st.presentSeconds * 1000 / Double(st.framesPresented) : 0
        s.itemsFailed = itemsFailed
        s.lastFailure = lastFailure
        s.framesCensored = framesCensored
        s.outputColours = outputColours
        s.transfers = st.transfers
        s.bufferingReason = state == .buffering ? wait?.reason : nil
        s.buffer = current.map { bufferStatus(of: $0, stats: st) }
        s.transport = transport.totals
        s.live = current.map { LiveInputOptions.handles($0.item.source) } ?? false
        s.timeshift = timeshiftStatus
        s.adaptive = current.flatMap { AdaptiveStatus($0.reader) }
        s.tracks = current?.reader.demuxer.tracks ?? []
        s.video = current?.video
        s.selectedTracks = Set(current.map { [$0.reader.video.index] } ?? [])
        s.subtitles = current == nil ? nil : subtitles.status
        s.audioOutput = audio.status
        if let t = subtitles.status.track { s.selectedTracks.insert(t) }
        if let t = audio.track { s.selectedTracks.insert(t.index) }
        return s
    }

    private func bufferStatus(of item: PreparedItem, stats st: PlaybackStats) -> BufferStatus {
        let policy: BufferStatus.Policy = item.reader.readAheadSource != nil ? .pause
            : LiveInputOptions.handles(item.item.source) ? .slip : .direct
        var b = BufferStatus(policy: policy)
        b.level = item.reader.readAheadSource?.level
        b.waits = st.bufferingWaits
        b.waitSeconds = st.bufferingSeconds
        b.networkLateFrames = st.networkLateFrames
        return b
    }
}
