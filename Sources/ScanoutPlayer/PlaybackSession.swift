import ScanoutDisplay
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio

/// Figures from one playback.
public struct PlaybackStats: Sendable {
    public var framesDecoded = 0
    public var framesPresented = 0
    /// Frames skipped because they were already more than one frame late when decoded.
    public var framesDropped = 0
    /// Live inputs: frames that were late and were shown anyway, the timeline moved back to
    /// them (`liveSlips`), and the delay those moves added, seconds.
    public var liveSlips = 0
    public var liveSlipSeconds = 0.0
    /// Wall time spent inside the decoder (demux + decode), seconds.
    public var decodeSeconds = 0.0
    /// Wall time spent presenting (conversion + display), seconds.
    public var presentSeconds = 0.0
    /// Wall time of the whole playback, seconds.
    public var wallSeconds = 0.0
    /// Media time covered, seconds.
    public var mediaSeconds = 0.0
    /// Compressed bytes read.
    public var bytesRead = 0
    /// |presentation time − target time| of each presented frame, nanoseconds; sorted once
    /// playback ends (`run`), in presentation order while it goes on. A session with a
    /// `deviationWindow` keeps only the latest ones.
    public var pacingDeviations: [UInt64] = []
    public var decodeErrors = DecodeStats()
    /// Copies of decoded pictures between CPU and GPU memory (downloads, uploads) and the ones
    /// that stayed on the GPU (GPU copies, imports), when the session counts them.
    public var transfers = TransferCounts()
    /// Network sources read ahead: the times the timeline paused because the read-ahead ran
    /// dry, and how long those waits lasted in all, seconds (`BufferingGate`).
    public var bufferingWaits = 0
    public var bufferingSeconds = 0.0
    /// Frames that came late because a read waited for the network, shown with the timeline
    /// moved back to them instead of dropped.
    public var networkLateFrames = 0

    public init() {}

    /// Decoded frames per second of decoder time.
    public var decodeFPS: Double { decodeSeconds > 0 ? Double(framesDecoded) / decodeSeconds : 0 }

    /// The `p`-th percentile (0...100) of the pacing deviation, milliseconds (`percentile`).
    public func pacingPercentile(_ p: Double) -> Double { Self.percentile(p, of: pacingDeviations) }

    /// The `p`-th percentile (0...100) of `deviations` (nanoseconds), milliseconds. Sorts a copy
    /// when they are not sorted yet: callers off the playback thread (`PlayerSnapshot`) pay for it.
    public static func percentile(_ p: Double, of deviations: [UInt64]) -> Double {
        guard !deviations.isEmpty else { return 0 }
        var sorted = deviations
        for i in sorted.indices.dropFirst() where sorted[i] < sorted[i - 1] { sorted.sort(); break }
        let i = min(sorted.count - 1, Int((p / 100 * Double(sorted.count - 1)).rounded()))
        return Double(sorted[i]) / 1e6
    }
}

/// Where playback stands, reported a few times a second.
public struct PlaybackProgress: Sendable {
    public var position: Double
    public var duration: Double?
    public var stats: PlaybackStats
}

/// Told about each frame as it goes through the loop (metrics). Called on the playback thread.
public protocol PlaybackObserver: AnyObject {
    func frameDecoded(seconds: Double, bytes: Int)
    func framePresented(seconds: Double)
    func frameDropped()
    /// One frame of `output` was drawn censored (a content policy).
    func frameCensored(output: String)
}

extension PlaybackObserver {
    public func frameCensored(output: String) {}
}

/// What one step of the loop did.
public enum PlaybackStep: Equatable, Sendable {
    /// A frame was shown; its timestamp and media time (seconds from the item's first frame).
    case presented(pts: Int64?, media: Double)
    /// A frame came out of the decoder too late and was skipped.
    case dropped(pts: Int64?, media: Double)
    /// The reader is exhausted (or none is set).
    case ended
    /// The network source's read-ahead ran dry: nothing was decoded, the timeline waits
    /// (`BufferingGate`). Step again.
    case buffering(BufferLevel)
}

/// The display failed to show a frame (no output).
public struct PresentError: Error, CustomStringConvertible {
    public var display: String
    public var underlying: any Error
    public var description: String { "cannot present on \(display): \(underlying)" }
}

/// Plays one input on one display: decode → (wait for the frame's time) → present.
///
/// With `timed` each frame is shown when the clock reaches its presentation time (scaled by
/// `rate`) — or, when the display has vblank timestamps, at the vblank nearest that time; a
/// frame already more than one frame interval late when it comes out of the decoder is dropped,
/// as mpv's and GStreamer's sinks do, and counted; timed by the sound (`masterClock`), so is one
/// that would reach the screen more than `maxLateness` (20 ms) after it is heard. Untimed
/// playback shows every frame as fast as it decodes (benchmarks).
///
/// The timeline maps media time to clock time: a frame `m` seconds after the item's first frame
/// is due at `anchorTime + (m − anchorMedia) / rate`. Seeks, resumes and rate changes re-anchor
/// it (`rebase`); a new item continues it gaplessly (`continueWith`): its first frame is due one
/// frame interval after the previous item's last one.
///
/// Runs on the calling thread (`run`) or one frame per call (`step`, the player's loop). Not
/// thread-safe: one owner, which also owns the reader and the display.
public final class PlaybackSession {
    public private(set) var reader: FrameReader?
    public var display: any Display
    public let clock: any PlaybackClock
    public var timed: Bool
    public private(set) var rate: Double
    public var progressInterval: UInt64 = 250_000_000
    /// Layout of the frames shown (orientation and scaling). Nil: the stream's own orientation, fit.
    public var layout: FrameLayout?
    /// A read that takes longer than this (nanoseconds) is a stall: the timeline is re-anchored at
    /// the frame that finally came (no flood of drops after it) and `lastStepStalled` says so.
    public var stallThreshold: UInt64?
    /// Keep at most this many pacing deviations (the latest), for endless playback.
    public var deviationWindow: Int?
    public weak var observer: (any PlaybackObserver)?
    public private(set) var stats = PlaybackStats()
    /// How long the read that made the last step stall waited, seconds (0 when it did not stall).
    public private(set) var lastStallSeconds = 0.0
    /// Whether the last `step` waited longer than `stallThreshold` for its frame.
    public var lastStepStalled: Bool { lastStallSeconds > 0 }
    /// Media time (seconds from the item's first frame) of the last frame shown.
    public private(set) var position: Double = 0
    /// The last frame shown's time on the container's timeline (the one audio chunks and
    /// subtitles are stamped on), seconds; nil before the input's first frame.
    public var streamPosition: Double? { streamTime(ofMedia: position) }

    /// Media time `media` on the container's timeline; nil before the input's first frame.
    private func streamTime(ofMedia media: Double) -> Double? {
        guard let originPts, let tb = reader?.video.timeBase.doubleValue else { return nil }
        return Double(originPts) * tb + media
    }
    public private(set) var lastPresentedPts: Int64?
    /// The clock time the last frame shown was meant to reach the screen at (nil: untimed).
    public private(set) var lastPresentedTarget: UInt64?
    /// The clock time the last frame shown reaches the screen at: the first vblank after its
    /// commit on a display with vblank timestamps, the end of its present on others.
    public private(set) var lastPresentedShown: UInt64?

    private var pending: VideoFrame? {
        didSet { if let p = pending { heldFrame = p } }
    }
    /// The frame handed in from outside (a seek's target, a prepared item's first frame), which
    /// the pool must not take.
    private var heldFrame: VideoFrame?
    private var originPts: Int64?
    private var anchorTime: UInt64?
    private var anchorMedia: Double?
    private var lastTarget: UInt64?
    private var forcePresent = true
    private var decodedInReader = 0
    /// Decoder error counts and bytes of readers already finished with.
    private var earlierErrors = DecodeStats()
    private var earlierBytes = 0

    /// The counter shared by the decoders' downloads and the display's uploads (the pipeline's
    /// `DecoderOptions.transfers`); its counts go into `stats.transfers`.
    public var transfers: FrameTransfers?

    /// The audio clock when the item has audio: frames are due when the listener hears their
    /// time (the video follows the samples actually played). The session's own timeline takes
    /// over, from the last frame timed by it, whenever it answers nil.
    public var masterClock: (any MediaClockSource)?
    /// The item the master clock must be playing for its time to count (`AudioChunk.epoch`).
    public var masterEpoch = 0
    /// Whether the master clock timed the frame being stepped.
    private var timedByMaster = false

    public init(reader: FrameReader, display: any Display, clock: any PlaybackClock = MonotonicClock(), timed: Bool = true, rate: Double = 1) {
        self.reader = reader
        self.display = display
        self.clock = clock
        self.timed = timed
        self.rate = rate
    }

    /// A session with no input yet (`continueWith` or `replace` gives it one).
    public init(display: any Display, clock: any PlaybackClock = MonotonicClock(), timed: Bool = true, rate: Double = 1) {
        self.display = display
        self.clock = clock
        self.timed = timed
        self.rate = rate
    }

    /// Nanoseconds between two frames of the current input at rate 1 (30 fps when unknown).
    public var frameInterval: Double {
        guard let v = reader?.video, v.frameRate.isValid, v.frameRate.doubleValue > 0 else { return 1e9 / 30 }
        return 1e9 / v.frameRate.doubleValue
    }

    private var orientation: Orientation { layout?.orientation ?? reader?.video.orientation ?? .identity }

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
            if case .presented = r, now &- lastProgress >= progressInterval {
                lastProgress = now
                stats.wallSeconds = Double(now &- start) / 1e9
                refreshReaderStats()
                progress(PlaybackProgress(position: position, duration: duration, stats: stats))
            }
        }
        stats.wallSeconds = Double(clock.now() &- start) / 1e9
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
        if let p = pending {
            f = p
            media = mediaTime(of: p)
            pending = nil
        } else if !ahead.isEmpty {
            let next = ahead.removeFirst()
            f = next.frame
            media = next.media
        } else {
            if timed, let buffer = reader?.readAheadSource, let wait = waitForBuffer(buffer) { return wait }
            guard let (frame, m, seconds) = try decodeOne() else {
                refreshReaderStats()
                return .ended
            }
            if timed, let limit = stallThreshold, UInt64(seconds * 1e9) > limit, anchorTime != nil {
                lastStallSeconds = seconds
            }
            f = frame
            media = m
        }
        // A read waited for the network since the last step (for this frame, or for one decoded
        // ahead of it in the last wait, which may be this one): lateness now is the network's.
        var waitedForNetwork = false
        if let waits = reader?.readAheadSource?.waits.nanoseconds {
            waitedForNetwork = waits > networkWaitsSeen
            networkWaitsSeen = waits
        }
        defer { recycle(f) }
        stats.mediaSeconds = max(stats.mediaSeconds, media)
        if anchorTime == nil || lastStepStalled {
            if timed, !lastStepStalled {
                try readAheadForTheSound()
                display.warmUp(for: f, layout: layout ?? FrameLayout(orientation: orientation))
            }
            anchorTime = clock.now() &+ (lastStepStalled ? 0 : nextStartDelay)
            nextStartDelay = 0
            if anchorMedia == nil || lastStepStalled { anchorMedia = media }
            forcePresent = true
        }
        var target = self.target(of: media)
        var commitAt: UInt64?
        if timed {
            let now = clock.now()
            // Timed by the sound, a frame that would be seen more than `maxLateness` after it
            // is heard is dropped (GStreamer's video sinks drop at 20 ms): shown, it puts the
            // picture visibly behind its sound, while the next frame may still be on time.
            var seenAt = seen(ifShownAt: now, aimedAt: target)
            var late = !forcePresent && now > target &+ UInt64(frameInterval / rate)
            if !late, !forcePresent, timedByMaster { late = lateForTheSound(seen: seenAt, target: target) }
            if !late { masterDrops = 0 }
            // Timed by the audio, a late live frame is dropped as any other: the audio plays the
            // packets the buffer already holds, so the frames after it are there to catch up with.
            if late, waitedForNetwork || (reader?.readAheadSource != nil && !bufferPrimed) {
                // The frame is late because its read waited for the network (the read-ahead
                // held part of what it needed), or while the read-ahead fills for the first time
                // (the network paces decoding then): the time lost is the network's, and the
                // timeline moves back to this frame instead of dropping it.
                stats.networkLateFrames += 1
                rebaseHere(media: media, now: now)
                target = anchorTime!
                seenAt = seen(ifShownAt: now, aimedAt: target)
            } else if late, reader?.demuxer.isLive == true, !timedByMaster {
                // A live source cannot be caught up: its frames come no sooner than it sends them,
                // so dropping a late one loses it and makes the next one no earlier. The
                // timeline moves back to this frame instead, once per delay (pictures held for
                // reordering when a channel starts at its keyframe, a late burst of packets),
                // with one frame interval to spare so that the frames after it, which come just
                // in time, are not shown late.
                let slack = UInt64(frameInterval / rate)
                stats.liveSlips += 1
                stats.liveSlipSeconds += Double(now - target + slack) / 1e9
                anchorTime = now + slack
                anchorMedia = media
                target = now + slack
                seenAt = seen(ifShownAt: now, aimedAt: target)
            } else if late {
                return drop(f, media: media, target: target)
            }
            // On a screen with vblank timestamps the frame is aimed at the vblank nearest its
            // time, and committed in the refresh before it (`presentTime`).
            let slot = display.vblankSource.flatMap { v in v.vblank(nearest: target).map(v.presentTime(for:)) } ?? target
            if let onAim, let t = streamTime(ofMedia: media) { onAim(t, seenAt) }
            // Not before the first frame of a timeline (a start, a seek, a stall): its wait is
            // short (`delayNextStart`), and the decodes that follow a start or a seek are the
            // slowest (a new reader, its threads starting). In the vkms guest one decode ahead
            // there took 180 ms where 25 were expected: the frame reached the screen 260 ms
            // after its aim, where its sound had started.
            if try !forcePresent && decodeAhead(until: slot) {
                // A read inside the wait blocked past the stall threshold: the timeline starts
                // again at this frame (`decodeAhead` set `lastStallSeconds`).
                anchorTime = clock.now()
                anchorMedia = media
                target = anchorTime!
            } else {
                // The first frame of a timeline is drawn early and its commit held until its
                // time, on a screen that can hold one: its present does more than the next
                // ones (in the vkms guest 47 ms from its call to its commit against 17, with its
                // kind of frame drawn once before), and it was seen 27-37 ms after its aim,
                // where its sound started.
                var wake = slot
                if forcePresent, let v = display.vblankSource, v.holdsCommits {
                    let hold = slot &+ v.commitLead
                    commitAt = hold
                    wake = slot &- min(slot, firstFrameDrawLead)
                    v.holdNextCommit(until: hold)
                }
                clock.sleep(until: wake)
                // The sound's clock may have moved during the wait: started (it said nothing
                // when the frame was aimed), or a step ahead (a device that takes its first
                // writes into a buffer it does not report). Judged again after the wait, as
                // GStreamer's sinks judge a buffer after their clock wait. On a screen the frame
                // is still seen at the vblank it was aimed at (its present starts now, in time
                // for it); elsewhere, now.
                if !forcePresent, masterClock != nil {
                    let seenAfter = display.vblankSource == nil ? max(clock.now(), target) : seenAt
                    let heardTarget = self.target(of: media)
                    if timedByMaster, lateForTheSound(seen: seenAfter, target: heardTarget) {
                        return drop(f, media: media, target: heardTarget)
                    }
                }
            }
        }
        try show(f, media: media, target: timed ? target : nil, commitAt: commitAt)
        lastTarget = target
        return .presented(pts: f.pts, media: media)
    }

    /// How late a frame timed by the sound may reach the screen, nanoseconds (at least half a
    /// refresh more than the vblank grid's own error, `allowedLateness`).
    public var maxLateness: UInt64 = 20_000_000
    /// Frames dropped in a row by `maxLateness` at most: when the sound's clock stays ahead of
    /// what the screen can reach, a picture still comes now and then.
    public var maxConsecutiveMasterDrops = 8
    private var masterDrops = 0

    private var allowedLateness: UInt64 {
        max(maxLateness, (display.vblankSource?.refreshInterval ?? 0) / 2 + 1_000_000)
    }

    /// Whether a frame timed by the sound at `target`, seen at `seen`, is more than
    /// `allowedLateness` behind it; counts the drop (`maxConsecutiveMasterDrops`: false past them).
    private func lateForTheSound(seen: UInt64, target: UInt64) -> Bool {
        guard masterDrops < maxConsecutiveMasterDrops, seen > target &+ allowedLateness else {
            return false
        }
        masterDrops += 1
        return true
    }

    private func drop(_ f: VideoFrame, media: Double, target: UInt64) -> PlaybackStep {
        stats.framesDropped += 1
        lastTarget = target
        observer?.frameDropped()
        return .dropped(pts: f.pts, media: media)
    }

    /// When a frame aimed at `target` reaches the screen if its present starts at `now`: the
    /// vblank nearest its time when there is still time to commit for it, else the first one a
    /// commit from now reaches; without vblank timestamps, its time or now, whichever is later.
    private func seen(ifShownAt now: UInt64, aimedAt target: UInt64) -> UInt64 {
        guard let v = display.vblankSource, let slot = v.vblank(nearest: target) else { return max(now, target) }
        return v.presentTime(for: slot) >= now ? slot : v.vblank(after: now &+ v.commitLead) ?? now
    }

    /// Asked before a timeline starts (a start, a seek): whether the sound that is to start with
    /// its first frame has none of it decoded yet (`PlayerAudio`). Frames are then decoded ahead
    /// until it has, at most `maxDecodedAhead`: a file whose sound packets come after the first
    /// frame's (flash-beep.mp4) otherwise had its sound read only at the next frame, and started
    /// 112 ms after that first frame was seen (in the vkms guest).
    public var wantsSound: (() -> Bool)?

    private func readAheadForTheSound() throws {
        guard let wantsSound else { return }
        while wantsSound(), ahead.count < maxDecodedAhead, !readerExhausted, pending == nil, !readAheadIsDry {
            guard let (frame, media, _) = try decodeOne() else { break }
            ahead.append((frame, media))
        }
    }

    /// Told, before the wait, of each timed frame: its stream time (on the container's timeline)
    /// and when it is to be seen (the vblank it is aimed at, else its time). The sound that
    /// waits for the picture starts from it (`PlayerAudio`).
    public var onAim: ((_ streamTime: Double, _ seenAt: UInt64) -> Void)?
    /// How far ahead of the clock the next start of the timeline puts its first frame (once):
    /// time for the sound that waits for it to be written ahead of it.
    private var nextStartDelay: UInt64 = 0

    /// The next time the timeline starts (a seek, an item not continuing the last, a resume), its
    /// first frame is due `nanoseconds` after that step instead of at once.
    public func delayNextStart(by nanoseconds: UInt64) { nextStartDelay = nanoseconds }

    /// Frames decoded ahead of the one being waited for, at most (0: none).
    public var maxDecodedAhead = 8
    private var ahead: [(frame: VideoFrame, media: Double)] = []
    private var spare: [VideoFrame] = []
    private var readerExhausted = false
    /// Running estimate of one decode, nanoseconds.
    private var decodeEstimate: Double?

    // MARK: Network sources

    /// Told when the timeline starts waiting for a network source's read-ahead (true, with its
    /// level) and when the wait ends (false): resumed, or given up by a seek, a resume, a new
    /// input. Called on the session's thread, inside `step` or the command that ended it. The
    /// player says `buffering` and holds the sound meanwhile.
    public var onBuffering: ((_ waiting: Bool, _ level: BufferLevel) -> Void)?
    private var gate = BufferingGate()
    /// Whether the read-ahead held a packet since the timeline started (`waitForBuffer`).
    private var bufferPrimed = false
    /// `stats.framesPresented` when the timeline last started.
    private var timelineStartFrames = 0
    /// The read-ahead's total wait for the network at the last step (nanoseconds).
    private var networkWaitsSeen: UInt64 = 0

    /// Nil when the frame can be decoded; `.buffering` (after a short wait for data) while the
    /// read-ahead is dry and until it holds enough again, the timeline stopped meanwhile.
    private func waitForBuffer(_ buffer: PacketReadAhead) -> PlaybackStep? {
        // The first frame of a timeline (a start, a seek, a resume) is decoded whatever is held,
        // as mpv does not wait for its cache before the first frame: a start waits only for it.
        if forcePresent, !gate.isWaiting { return nil }
        let level = buffer.level
        // Nor does a timeline wait while its read-ahead fills for the first time (mpv's
        // `cache-pause-initial=no`): right after a start or a seek the decoder waits for packets
        // in its read, and a frame that comes late for it moves the timeline back. The clock
        // pauses for `resumeSeconds` only once the read-ahead has held that much, or the
        // timeline has played that much (a link slower than the media from the start).
        let resume = buffer.options.resumeSeconds
        let played = Double(stats.framesPresented - timelineStartFrames) * frameInterval / 1e9
        if level.seconds >= resume || level.ended || level.full || played >= resume { bufferPrimed = true }
        if !bufferPrimed, !gate.isWaiting { return nil }
        switch gate.check(level, resumeSeconds: resume, now: clock.now()) {
        case .go:
            return nil
        case .startWait:
            stats.bufferingWaits += 1
            onBuffering?(true, level)
        case .keepWaiting:
            break
        case .resume(let waited):
            stats.bufferingSeconds += Double(waited) / 1e9
            onBuffering?(false, level)
            // The next frame is due now, as after a pause.
            rebase(atMedia: nil)
            return nil
        }
        buffer.waitForData(nanoseconds: 20_000_000)
        return .buffering(level)
    }

    /// Whether the network source's read-ahead holds no video packet now (and more will come):
    /// nothing is decoded ahead then, so that no wait for the network happens inside a wait.
    private var readAheadIsDry: Bool {
        guard let level = reader?.readAheadSource?.level else { return false }
        return level.packets == 0 && !level.ended
    }

    /// Ends a wait for the network that something else overtook (a seek, a resume, a new input).
    private func endBufferingWait() {
        guard gate.isWaiting else { return }
        if let since = gate.since { stats.bufferingSeconds += Double(clock.now() &- since) / 1e9 }
        gate = BufferingGate()
        onBuffering?(false, reader?.readAheadSource?.level ?? BufferLevel())
    }

    /// Moves the timeline so that the frame at `media` is due `now`.
    private func rebaseHere(media: Double, now: UInt64) {
        anchorTime = now
        anchorMedia = media
    }

    /// Reads and decodes the next frame of the reader into a frame of its own.
    private func decodeOne() throws -> (VideoFrame, Double, Double)? {
        guard let reader, !readerExhausted else { return nil }
        let frame = spare.popLast() ?? VideoFrame()
        let d0 = clock.now()
        let before = reader.bytesRead
        guard try reader.next(into: frame) else {
            readerExhausted = true
            spare.append(frame)
            return nil
        }
        let d1 = clock.now()
        let seconds = Double(d1 &- d0) / 1e9
        stats.decodeSeconds += seconds
        stats.framesDecoded += 1
        decodedInReader += 1
        observer?.frameDecoded(seconds: seconds, bytes: reader.bytesRead - before)
        let ns = seconds * 1e9
        decodeEstimate = decodeEstimate.map { $0 * 0.9 + ns * 0.1 } ?? ns
        return (frame, mediaTime(of: frame), seconds)
    }

    /// Decodes frames ahead while the wait until `slot` is longer than a decode is expected to take.
    /// Returns true when a read blocked past the stall threshold.
    private func decodeAhead(until slot: UInt64) throws -> Bool {
        guard maxDecodedAhead > 0 else { return false }
        while ahead.count < maxDecodedAhead, !readerExhausted, pending == nil {
            let estimate = UInt64(max(decodeEstimate ?? frameInterval / 2, 0) * 1.5)
            guard clock.now() &+ estimate < slot, !readAheadIsDry else { break }
            guard let (frame, media, seconds) = try decodeOne() else { break }
            ahead.append((frame, media))
            if let limit = stallThreshold, UInt64(seconds * 1e9) > limit, clock.now() > slot {
                lastStallSeconds = seconds
                return true
            }
        }
        return false
    }

    /// Returns a shown or dropped frame to the pool (the held and prepared frames belong to
    /// their owners).
    private func recycle(_ f: VideoFrame) {
        guard f !== heldFrame else { heldFrame = nil; return }
        f.unref()
        if spare.count < 4 { spare.append(f) }
    }

    /// Forgets the frames decoded ahead (their reader moved, or is gone).
    private func flushAhead() {
        for a in ahead { a.frame.unref() }
        ahead.removeAll()
        readerExhausted = false
    }

    /// Shows `f` now, outside the timeline (a seek's target while paused, a slate).
    public func presentNow(_ f: VideoFrame, layout: FrameLayout? = nil) throws {
        let p0 = clock.now()
        do {
            try display.present(f, layout: layout ?? self.layout ?? FrameLayout(orientation: orientation))
        } catch {
            throw PresentError(display: display.description, underlying: error)
        }
        let seconds = Double(clock.now() &- p0) / 1e9
        stats.presentSeconds += seconds
        stats.framesPresented += 1
        observer?.framePresented(seconds: seconds)
    }

    /// How much earlier than its slot the first frame of a timeline starts its present on a
    /// screen that holds its commit until then (`VBlankSource.holdNextCommit`), nanoseconds.
    public var firstFrameDrawLead: UInt64 = 50_000_000

    /// Shows `f`; `commitAt`: its commit was held until then.
    private func show(_ f: VideoFrame, media: Double, target: UInt64?, commitAt: UInt64? = nil) throws {
        let p0 = clock.now()
        try presentNow(f)
        forcePresent = false
        position = media
        lastPresentedPts = f.pts
        lastPresentedTarget = target
        // With vblank timestamps the frame reaches the screen at the first vblank after its
        // commit, which comes the draw's time after the present's call.
        let flip = display.vblankSource.flatMap { $0.vblank(after: max(p0 &+ $0.commitLead, commitAt ?? 0)) }
        lastPresentedShown = flip ?? clock.now()
        if let target {
            let shown = flip ?? p0
            stats.pacingDeviations.append(shown > target ? shown - target : target - shown)
            if let w = deviationWindow, stats.pacingDeviations.count >= 2 * w {
                stats.pacingDeviations.removeFirst(stats.pacingDeviations.count - w)
            }
        }
    }

    private func mediaTime(of f: VideoFrame) -> Double {
        let tb = reader?.video.timeBase.doubleValue ?? 0
        let pts = f.pts ?? ((originPts ?? 0) + Int64(Double(decodedInReader - 1) * frameInterval / 1e9 / max(tb, 1e-12)))
        if originPts == nil { originPts = pts }
        return Double(pts - originPts!) * tb
    }

    private func target(of media: Double) -> UInt64 {
        timedByMaster = false
        if let master = masterClock, let originPts, let tb = reader?.video.timeBase.doubleValue {
            let now = clock.now()
            if let heard = master.streamTime(at: now, epoch: masterEpoch) {
                timedByMaster = true
                let t = time(at: now, plus: media - (heard - Double(originPts) * tb))
                // Should the audio stop, the monotonic timeline goes on from this frame.
                anchorTime = t
                anchorMedia = media
                return t
            }
        }
        return time(at: anchorTime ?? clock.now(), plus: media - (anchorMedia ?? media))
    }

    /// The clock time `seconds` of media after (or before) clock time `base`, at the rate.
    private func time(at base: UInt64, plus seconds: Double) -> UInt64 { clockTime(base, plus: seconds / rate) }

    /// Starts the timeline again at the next step: the frame at media time `media` (the next
    /// frame's own time when nil) is due at that step's clock time, and is never dropped. For
    /// resuming after a pause or a seek. The old timeline is gone with it: an item that follows
    /// before the next frame is shown (a pause between an item's last frame and its end) starts
    /// on the new one, not one frame after the last frame shown before the pause.
    public func rebase(atMedia media: Double? = nil) {
        endBufferingWait()
        bufferPrimed = false
        timelineStartFrames = stats.framesPresented
        anchorTime = nil
        anchorMedia = media
        forcePresent = true
        lastTarget = nil
    }

    /// Changes the rate from the current position on.
    public func setRate(_ r: Double) {
        if anchorTime != nil { rebase(atMedia: position) }
        rate = r
    }

    /// Holds `frame` back to be shown by the next step (a seek's target, already decoded) and
    /// starts the timeline at it.
    public func hold(_ frame: VideoFrame, media: Double? = nil) {
        flushAhead()
        pending = frame
        rebase(atMedia: media)
    }

    /// Switches to another input; `firstFrame` (already decoded from it) is shown first, and
    /// `originPts` is the timestamp of its first frame (media time 0). With `gapless`, the first
    /// frame is due one frame interval after the previous input's last frame; otherwise the
    /// timeline starts again at the next step.
    public func continueWith(_ reader: FrameReader, firstFrame: VideoFrame?, originPts: Int64?, gapless: Bool) {
        let previousInterval = frameInterval
        endBufferingWait()
        // A new input's read-ahead fills from nothing: its first fill is not waited for either,
        // gapless or not.
        bufferPrimed = false
        timelineStartFrames = stats.framesPresented
        networkWaitsSeen = 0
        retireReader()
        flushAhead()
        self.reader = reader
        self.originPts = originPts
        decodedInReader = firstFrame == nil ? 0 : 1
        pending = firstFrame
        if firstFrame != nil {
            stats.framesDecoded += 1
            observer?.frameDecoded(seconds: 0, bytes: 0)
        }
        if gapless, let last = lastTarget {
            anchorTime = last &+ UInt64(previousInterval / rate)
            anchorMedia = 0
        } else {
            rebase(atMedia: nil)
        }
    }

    /// Replaces the reader of the same input (an exact seek continues on the seeker's reader),
    /// keeping the origin.
    public func replaceReader(_ reader: FrameReader) {
        endBufferingWait()
        if reader !== self.reader { networkWaitsSeen = 0 }
        flushAhead()
        if reader !== self.reader { retireReader() }
        self.reader = reader
    }

    /// Forgets the input (stop).
    public func clear() {
        endBufferingWait()
        flushAhead()
        retireReader()
        reader = nil
        pending = nil
        originPts = nil
        lastTarget = nil
        position = 0
        rebase()
    }

    private func retireReader() {
        guard let reader else { return }
        earlierErrors = add(earlierErrors, reader.decodeStats)
        earlierBytes += reader.bytesRead
        self.reader = nil
        refreshReaderStats()
    }

    private func refreshReaderStats() {
        if let transfers { stats.transfers = transfers.counts }
        stats.decodeErrors = reader.map { add(earlierErrors, $0.decodeStats) } ?? earlierErrors
        stats.bytesRead = earlierBytes + (reader?.bytesRead ?? 0)
    }

    private func add(_ a: DecodeStats, _ b: DecodeStats) -> DecodeStats {
        var s = a
        s.rejectedPackets += b.rejectedPackets
        s.concealedFrames += b.concealedFrames
        s.loggedErrors += b.loggedErrors
        s.missingReferenceErrors += b.missingReferenceErrors
        s.framesDecoded += b.framesDecoded
        return s
    }

    /// Copies the current figures (decoder errors and bytes brought up to date).
    public func currentStats() -> PlaybackStats {
        refreshReaderStats()
        return stats
    }
}

/// Clock time `base` (nanoseconds) moved by `seconds`, earlier ones too (never below 0).
func clockTime(_ base: UInt64, plus seconds: Double) -> UInt64 {
    let offset = seconds * 1e9
    return offset >= 0 ? base &+ UInt64(offset) : base &- min(base, UInt64(-offset))
}
