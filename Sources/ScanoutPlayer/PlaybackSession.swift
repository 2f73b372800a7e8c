import ScanoutCore
import ScanoutDecode
import ScanoutDemux
import ScanoutDisplay

/// Plays one input on one display: decode → (wait for the frame's time) → present.
///
/// With `timed` each frame is shown when the clock reaches its presentation time (scaled by
/// `rate`) — or, when the display has vblank timestamps, at the vblank nearest that time; a
/// frame already more than one frame interval late when it comes out of the decoder is dropped,
/// as mpv's and GStreamer's sinks do, and counted; timed by the sound (`masterClock`), so is one
/// that would reach the screen more than `maxLateness` (20 ms) after it is heard. Untimed
/// playback shows every frame as fast as it decodes (benchmarks).
///
/// The session keeps where frames come from (the reader, frames decoded ahead, a held frame, the
/// network's read-ahead) and shows them; when each is shown, dropped, or moves the timeline is
/// its `PresentScheduler`'s decision. The timeline maps media time to clock time: a frame `m`
/// seconds after the item's first frame is due at `anchorTime + (m − anchorMedia) / rate`.
/// Seeks, resumes and rate changes re-anchor it (`rebase`); a new item continues it gaplessly
/// (`continueWith`): its first frame is due one frame interval after the previous item's last one.
///
/// Runs on the calling thread (`run`) or one frame per call (`step`, the player's loop). Not
/// thread-safe: one owner, which also owns the reader and the display.
///
/// Split by concern: this file (state, `run`, `step`), `+Frames` (where a frame comes from:
/// decoding, decoding ahead), `+Network` (waiting for a network source), `+Timeline` (seeks,
/// resumes, rates, new inputs), `+Present` (showing, dropping, the figures).
public final class PlaybackSession {
    public internal(set) var reader: FrameReader?
    public var display: any Display
    public let clock: any PlaybackClock
    public var timed: Bool
    public var rate: Double { scheduler.rate }
    public var progressInterval = Duration.milliseconds(250)
    /// Layout of the frames shown (orientation and scaling). Nil: the stream's own orientation, fit.
    public var layout: FrameLayout?
    /// A read that takes longer than this is a stall: the timeline is re-anchored at the frame
    /// that finally came (no flood of drops after it) and `lastStepStalled` says so.
    public var stallThreshold: Duration?
    /// Keep at most this many pacing deviations (the latest), for endless playback.
    public var deviationWindow: Int?
    public weak var observer: (any PlaybackObserver)?
    public internal(set) var stats = PlaybackStats()
    /// How long the read that made the last step stall waited, seconds (0 when it did not stall).
    public internal(set) var lastStallSeconds = 0.0
    /// Whether the last `step` waited longer than `stallThreshold` for its frame.
    public var lastStepStalled: Bool { lastStallSeconds > 0 }
    /// Media time (seconds from the item's first frame) of the last frame shown.
    public internal(set) var position: Double = 0
    /// The last frame shown's time on the container's timeline (the one audio chunks and
    /// subtitles are stamped on), seconds; nil before the input's first frame.
    public var streamPosition: Double? { streamTime(ofMedia: position) }
    public internal(set) var lastPresentedPts: Int64?
    /// How long the last frame shown lasts on its timeline (its own duration, nanoseconds at
    /// rate 1); nil when it states none.
    public internal(set) var lastPresentedLength: Double?
    /// The clock time the last frame shown was meant to reach the screen at (nil: untimed).
    public internal(set) var lastPresentedTarget: ClockTime?
    /// The clock time the last frame shown reaches the screen at: the first vblank after its
    /// commit on a display with vblank timestamps, the end of its present on others.
    public internal(set) var lastPresentedShown: ClockTime?

    /// When each frame is shown, dropped, or moves the timeline.
    var scheduler: PresentScheduler

    var pending: VideoFrame? {
        didSet { if let p = pending { heldFrame = p } }
    }
    /// The frame handed in from outside (a seek's target, a prepared item's first frame), which
    /// the pool must not take.
    var heldFrame: VideoFrame?
    var originPts: Int64?
    var decodedInReader = 0
    /// Decoder error counts and bytes of readers already finished with.
    var earlierErrors = DecodeStats()
    var earlierBytes = 0

    /// The counter shared by the decoders' downloads and the display's uploads (the pipeline's
    /// `DecoderOptions.transfers`); its counts go into `stats.transfers`.
    public var transfers: FrameTransfers?

    /// The audio clock when the item has audio: frames are due when the listener hears their
    /// time (the video follows the samples actually played). The session's own timeline takes
    /// over, from the last frame timed by it, whenever it answers nil.
    public var masterClock: (any MediaClockSource)?
    /// The item the master clock must be playing for its time to count (`AudioChunk.epoch`).
    public var masterEpoch = 0
    /// A sync group's clock (`SyncMediaClock`): when it answers, frames are due when the group's
    /// timeline reaches them, whatever the sound says; it answers media time (from the item's
    /// first frame), for the item bound to `groupEpoch`.
    public var groupClock: (any MediaClockSource)?
    public var groupEpoch = 0
    /// Told, before the wait, of each timed frame: its media time and when it is due (the
    /// timeline's time, before the vblank): what a sync group's leader publishes.
    public var onTimelineAim: ((_ media: Double, _ target: ClockTime) -> Void)?

    /// How late a frame timed by the sound may reach the screen (at least half a refresh more
    /// than the vblank grid's own error, `PresentScheduler.allowedLateness`).
    public var maxLateness: Duration {
        get { scheduler.maxLateness }
        set { scheduler.maxLateness = newValue }
    }
    /// Frames dropped in a row by `maxLateness` at most: when the sound's clock stays ahead of
    /// what the screen can reach, a picture still comes now and then.
    public var maxConsecutiveMasterDrops: Int {
        get { scheduler.maxConsecutiveMasterDrops }
        set { scheduler.maxConsecutiveMasterDrops = newValue }
    }
    /// How much earlier than its slot the first frame of a timeline starts its present on a
    /// screen that holds its commit until then (`VBlankSource.holdNextCommit`).
    public var firstFrameDrawLead: Duration {
        get { scheduler.firstFrameDrawLead }
        set { scheduler.firstFrameDrawLead = newValue }
    }

    /// Asked before a timeline starts (a start, a seek): whether the sound that is to start with
    /// its first frame has none of it decoded yet (`PlayerAudio`). Frames are then decoded ahead
    /// until it has, at most `maxDecodedAhead`: a file whose sound packets come after the first
    /// frame's (flash-beep.mp4) otherwise had its sound read only at the next frame, and started
    /// 112 ms after that first frame was seen (in the vkms guest).
    public var wantsSound: (() -> Bool)?
    /// Told, before the wait, of each timed frame: its stream time (on the container's timeline)
    /// and when it is to be seen (the vblank it is aimed at, else its time). The sound that
    /// waits for the picture starts from it (`PlayerAudio`).
    public var onAim: ((_ streamTime: Double, _ seenAt: ClockTime) -> Void)?

    /// Frames decoded ahead of the one being waited for, at most (0: none).
    public var maxDecodedAhead = 8
    var ahead: [(frame: VideoFrame, media: Double)] = []
    var spare: [VideoFrame] = []
    var readerExhausted = false
    /// Running estimate of one decode, nanoseconds.
    var decodeEstimate: Double?

    /// Told when the timeline starts waiting for a network source's read-ahead (true, with its
    /// level) and when the wait ends (false): resumed, or given up by a seek, a resume, a new
    /// input. Called on the session's thread, inside `step` or the command that ended it. The
    /// player says `buffering` and holds the sound meanwhile.
    public var onBuffering: ((_ waiting: Bool, _ level: BufferLevel) -> Void)?
    var gate = BufferingGate()
    /// Whether the read-ahead held a packet since the timeline started (`waitForBuffer`).
    var bufferPrimed = false
    /// `stats.framesPresented` when the timeline last started.
    var timelineStartFrames = 0
    /// The read-ahead's total wait for the network at the last step.
    var networkWaitsSeen = Duration.zero

    public init(reader: FrameReader, display: any Display, clock: any PlaybackClock = MonotonicClock(), timed: Bool = true, rate: Double = 1) {
        self.reader = reader
        self.display = display
        self.clock = clock
        self.timed = timed
        scheduler = PresentScheduler(rate: rate)
    }

    /// A session with no input yet (`continueWith` or `replace` gives it one).
    public init(display: any Display, clock: any PlaybackClock = MonotonicClock(), timed: Bool = true, rate: Double = 1) {
        self.display = display
        self.clock = clock
        self.timed = timed
        scheduler = PresentScheduler(rate: rate)
    }

    /// Nanoseconds between two frames of the current input at rate 1 (30 fps when unknown).
    public var frameInterval: Double {
        guard let v = reader?.video, v.frameRate.isValid, v.frameRate.doubleValue > 0 else { return 1e9 / 30 }
        return 1e9 / v.frameRate.doubleValue
    }

    var orientation: Orientation { layout?.orientation ?? reader?.video.orientation ?? .identity }

    /// Plays to the end (or until `shouldStop` returns true) and returns the figures.
    public func run(orientation: Orientation? = nil, shouldStop: () -> Bool = { false }, progress: (PlaybackProgress) -> Void = { _ in }) throws -> PlaybackStats {
        if let orientation { layout = FrameLayout(orientation: orientation, scaling: layout?.scaling ?? .fit) }
        let start = clock.now()
        var lastProgress = start
        let duration = reader?.video.durationSeconds
        while !shouldStop() {
            let r = try step()
            if r == .ended { break }
            // Waiting for the network: the step waited a little for data; step again.
            if case .buffering = r { continue }
            let now = clock.now()
            if case .presented = r, now - lastProgress >= progressInterval {
                lastProgress = now
                stats.wallSeconds = (now - start).secondsValue
                refreshReaderStats()
                progress(PlaybackProgress(position: position, duration: duration, stats: stats))
            }
        }
        stats.wallSeconds = (clock.now() - start).secondsValue
        refreshReaderStats()
        stats.pacingDeviations.sort()
        return stats
    }

    /// Decodes the next frame (or takes the one held back by a seek or a prepared item, or one
    /// decoded ahead), waits for its time and shows it, or drops it when it is too late.
    ///
    /// While waiting, frames after it are decoded ahead (up to `maxDecodedAhead`) whenever the
    /// wait is longer than a decode usually takes: a queue of decoded frames absorbs decode-time
    /// spikes (a busy machine, a large keyframe) that would otherwise make frames late. Still one
    /// thread: the reader and the frames never leave the session's owner.
    public func step() throws -> PlaybackStep {
        lastStallSeconds = 0
        let f: VideoFrame
        let media: Double
        switch try nextFrame() {
        case .frame(let frame, let m):
            f = frame
            media = m
        case .done(let step):
            return step
        }
        let lateIsNetwork = lateIsTheNetworks()
        defer { recycle(f) }
        stats.mediaSeconds = max(stats.mediaSeconds, media)
        if scheduler.needsStart || lastStepStalled { try startTimeline(at: f, media: media) }
        guard timed else {
            let now = clock.now()
            let target = scheduler.target(of: media, now: now, heard: heardMedia(at: now)).time
            try show(f, media: media, target: nil)
            scheduler.presented(target: target)
            return .presented(pts: f.pts, media: media)
        }
        return try presentTimed(f, media: media, lateIsNetwork: lateIsNetwork)
    }

    /// Starts the timeline at `f` (a start, a seek, a resume; or a stall, which starts it again
    /// at once). A start first reads ahead for the sound and warms the display up for the frame.
    private func startTimeline(at f: VideoFrame, media: Double) throws {
        if timed, !lastStepStalled {
            try readAheadForTheSound()
            display.warmUp(for: f, layout: layout ?? FrameLayout(orientation: orientation))
        }
        scheduler.start(media: media, now: clock.now(), stalled: lastStepStalled)
    }

    /// Asks the scheduler where `f` goes, decodes ahead while it waits for it, and shows it (or
    /// drops it).
    private func presentTimed(_ f: VideoFrame, media: Double, lateIsNetwork: Bool) throws -> PlaybackStep {
        let context = presentContext(at: clock.now(), lateIsNetwork: lateIsNetwork)
        guard case .present(let aim) = scheduler.aim(media: media, in: context) else { return dropped(f, media: media) }
        count(aim.rebase)
        if let onAim, let t = streamTime(ofMedia: media) { onAim(t, aim.seenAt) }
        onTimelineAim?(media, aim.target)
        var target = aim.target
        var commitAt: ClockTime?
        // Not before the first frame of a timeline (a start, a seek, a stall): its wait is
        // short (`delayNextStart`), and the decodes that follow a start or a seek are the
        // slowest (a new reader, its threads starting). In the vkms guest one decode ahead
        // there took 180 ms where 25 were expected: the frame reached the screen 260 ms
        // after its aim, where its sound had started.
        if try !aim.firstOfTimeline && decodeAhead(until: aim.presentAt) {
            // A read inside the wait blocked past the stall threshold: the timeline starts
            // again at this frame (`decodeAhead` set `lastStallSeconds`).
            target = scheduler.restartAfterStall(media: media, now: clock.now())
        } else {
            // The first frame of a timeline is drawn early and its commit held until its
            // time, on a screen that can hold one: its present does more than the next
            // ones (in the vkms guest 47 ms from its call to its commit against 17, with its
            // kind of frame drawn once before), and it was seen 27-37 ms after its aim,
            // where its sound started.
            let wake = scheduler.wake(for: aim, grid: context.grid)
            if let hold = wake.commitHold {
                commitAt = hold
                display.vblankSource?.holdNextCommit(until: hold)
            }
            clock.sleep(until: wake.at)
            // The sound's clock may have moved during the wait: started (it said nothing
            // when the frame was aimed), or a step ahead (a device that takes its first
            // writes into a buffer it does not report). Judged again after the wait, as
            // GStreamer's sinks judge a buffer after their clock wait.
            if masterClock != nil || groupClock != nil, !aim.firstOfTimeline {
                var after = context
                after.now = clock.now()
                after.heard = heardMedia(at: after.now)
                if scheduler.judgeAfterWait(media: media, aim: aim, in: after) != nil { return dropped(f, media: media) }
            }
        }
        try show(f, media: media, target: target, commitAt: commitAt)
        scheduler.presented(target: target)
        return .presented(pts: f.pts, media: media)
    }
}
