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
/// seekers of the current item and the slate. `Player` runs an engine on a thread of its own;
/// tests drive one directly with a `ManualClock`, so state sequences, drops and timing are exact.
///
/// Events go to `emit` synchronously, in the order things happen.
public final class PlayerEngine {
    public let clock: any PlaybackClock
    public let display: any Display
    public var configuration: PlayerConfiguration {
        didSet {
            configuration = Self.adopt(configuration, for: display, transfers: oldValue.decoder.transfers)
            session.stallThreshold = configuration.stallThreshold
            audio.setVolume(configuration.audio)
        }
    }
    public private(set) var state: PlayerState = .idle
    public private(set) var playlist: [PlaylistItem] = []
    /// Index of the current item, nil before a load.
    public private(set) var index: Int?
    public private(set) var repeatMode: RepeatMode = .none
    public private(set) var rate = 1.0
    public private(set) var reasons: ServiceReasons = [.noSource]
    /// Items that failed to open or decode since the start.
    public private(set) var itemsFailed = 0
    /// Frames drawn censored, by output name (a content policy's verdicts, counted by the output).
    public private(set) var framesCensored: [String: Int] = [:]
    /// Called when an item becomes current, before its first frame is shown (the output applies
    /// the item's content policy here).
    public var onItemChanged: ((PlaylistItem) -> Void)?
    /// Called on the loop thread from inside a read that blocks, once `buffering` has been
    /// announced there: the loop's owner publishes its state copy (the loop is not ticking).
    public var onBufferingInsideRead: (() -> Void)?
    /// A local copy of a source (the service's offline store), asked each time an item is
    /// opened; nil, or an answer nil: the source itself; a failure: the item fails with it (a
    /// licence that expired). A local input's content key reaches that item's demuxer only.
    public var localInput: ((String) -> Result<LocalInput, MediaError>?)?
    /// Where each frame shown is logged with the time it reached the screen (`serve --present-log`).
    public var presentLog: PresentLog?
    public let session: PlaybackSession

    private(set) var current: PreparedItem?
    /// The current item's subtitles (`PlayerSubtitles`).
    let subtitles = PlayerSubtitles()
    private let preparer: ItemPreparer
    private let sink: (PlayerEvent) -> Void
    /// The latest item failure reported (an `error` event), for `/state`; nil before any.
    public private(set) var lastFailure: ItemFailure?
    private var lastPositionEvent: UInt64 = 0
    private var retryAt: UInt64?
    /// The item after the current one is to be prepared once the current one has settled
    /// (`scheduleUpcoming`): when its first frame was shown and the time is `upcomingDue`.
    private var upcomingWanted = false
    private var upcomingDue: UInt64?
    /// How long after the current item's first frame the next one starts being prepared, at
    /// most (a quarter of a shorter item's length): not while the item starts. Opening the next
    /// item (its probe, its decoder's threads, its first decode) at the same moment as the
    /// current one's first frames made those frames late: in the vkms guest (2 CPUs) the first
    /// frame of `serve --repeat one` reached the screen 76–250 ms after its aim, against 46 ms
    /// for `play`, and the two frames after it were dropped. mpv and GStreamer's playbin open
    /// the next item near the end of the current one; this one still has the rest of it.
    public var upcomingSettle: UInt64 = 1_000_000_000
    private var slateShown = false
    /// Media time of the frame on screen when paused or after a seek; nil when the item's first
    /// frame is still to be shown.
    private var resumeMedia: Double?
    /// Whether the current item was seeked in (its reader skipped packets).
    private var seekedInItem = false
    /// Why the loop is `buffering` on a silent live input; nil when not.
    private var bufferingReason: String?
    private var transport = TransportTally()
    /// When the command that is making an item current began (load, prepare, jump, a retry).
    private var requestStartedAt: UInt64?
    /// The current item's first frame is still to be shown: when it was asked for (nil after a
    /// gapless transition, which no command asked for).
    private var awaitingFirstFrame: FirstFrameRequest?
    /// `buffering` was announced from inside a read of the current item that is still blocked
    /// (HTTP, HLS; live UDP/RTP report their silence through `MediaError.sourceSilent`).
    private var stallAnnounced = false
    private var variantTally = VariantTally()
    /// The current item's audio track, decoder and output (`PlayerAudio`).
    public let audio = PlayerAudio()

    /// `background`: the next item is prepared on a thread of its own (a real player); false:
    /// on the caller's thread, at once (tests with a manual clock).
    public init(display: any Display, clock: any PlaybackClock = MonotonicClock(), configuration: PlayerConfiguration = PlayerConfiguration(),
                backgroundPreparation: Bool = false, emit: @escaping (PlayerEvent) -> Void) {
        self.display = display
        self.clock = clock
        let configuration = Self.adopt(configuration, for: display, transfers: nil)
        self.configuration = configuration
        sink = emit
        preparer = ItemPreparer(mode: backgroundPreparation ? .background : .inline)
        session = PlaybackSession(display: display, clock: clock)
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
        // `buffering` is reported) instead of blocking until its timeout.
        c.demuxer.live.reportStalls = true
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
    /// When `tick` next has work while not running (a retry), in clock nanoseconds.
    public var nextWakeup: UInt64? {
        if state == .error { return retryAt }
        // Paused on a live item: the buffer fills meanwhile; look now and then whether it wrapped.
        if state == .paused, current?.timeshift != nil { return clock.now() &+ 200_000_000 }
        return nil
    }

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
        s.transfers = st.transfers
        s.bufferingReason = state == .buffering ? bufferingReason : nil
        s.buffer = current.map { item in
            let policy: BufferStatus.Policy = item.reader.readAheadSource != nil ? .pause
                : LiveInputOptions.handles(item.item.source) ? .slip : .direct
            var b = BufferStatus(policy: policy)
            b.level = item.reader.readAheadSource?.level
            b.waits = st.bufferingWaits
            b.waitSeconds = st.bufferingSeconds
            b.networkLateFrames = st.networkLateFrames
            return b
        }
        s.transport = transport.totals
        s.live = current.map { LiveInputOptions.handles($0.item.source) } ?? false
        s.timeshift = timeshiftStatus
        s.adaptive = current.flatMap { AdaptiveStatus($0.reader) }
        s.tracks = current?.reader.demuxer.tracks ?? []
        s.selectedTracks = Set(current.map { [$0.reader.video.index] } ?? [])
        s.subtitles = current == nil ? nil : subtitles.status
        s.audioOutput = audio.status
        if let t = subtitles.status.track { s.selectedTracks.insert(t) }
        if let t = audio.track { s.selectedTracks.insert(t.index) }
        return s
    }

    // MARK: Commands

    /// Replaces the playlist and prepares item `start`: opened, first frame decoded. A bad item is
    /// reported (`error`, skipped) and the next one tried; throws when none can be prepared.
    public func load(_ items: [PlaylistItem], start: Int = 0, autoplay: Bool = false) throws {
        guard !items.isEmpty else { throw PlayerError.emptyPlaylist }
        guard items.indices.contains(start) else { throw PlayerError.itemOutOfRange(index: start, count: items.count) }
        requestStartedAt = clock.now()
        for item in items where ![0, 90, 180, 270].contains(item.rotation) { throw PlayerError.rotationInvalid(item.rotation) }
        if current != nil, [.ready, .playing, .paused, .buffering].contains(state) {
            // Something is on screen: it stays until an item of the new playlist is ready, and
            // stays for good when none can be opened.
            let attempt = firstPlayable(from: start, count: items.count, next: { ($0 + 1) % items.count }) { i in
                opened(items[i]).flatMap { PreparedItem.open($0.item, index: i, demuxer: $0.demuxer, decoder: itemDecoderOptions) }
            }
            guard let p = attempt.item else { throw attempt.error(count: items.count)! }
            release()
            playlist = items
            set(.preparing)
            become(p, gapless: false)
            set(.ready)
            if autoplay { try play(userInitiated: false) }
            return
        }
        release()
        playlist = items
        try prepareCurrent(start, userInitiated: true)
        if autoplay { try play(userInitiated: false) }
    }

    /// Prepares item `i` (or the first playable one after it) as the current item; state ends
    /// `ready`, or `error` when nothing can be played.
    public func prepare(_ i: Int) throws {
        guard !playlist.isEmpty else { throw PlayerError.emptyPlaylist }
        guard playlist.indices.contains(i) else { throw PlayerError.itemOutOfRange(index: i, count: playlist.count) }
        requestStartedAt = clock.now()
        release()
        try prepareCurrent(i, userInitiated: true)
    }

    public func play(userInitiated: Bool = true) throws {
        switch state {
        case .playing, .buffering:
            return
        case .ready, .paused:
            // Resume where the picture stands: the next frame is due one frame after it.
            session.rebase(atMedia: resumeMedia)
            audio.setPaused(false)
        case .ended, .stopped:
            requestStartedAt = clock.now()
            try prepareCurrent(state == .ended ? 0 : (index ?? 0), userInitiated: userInitiated)
            guard state == .ready else { return }
            session.rebase()
        case .idle, .preparing, .seeking, .error:
            throw PlayerError.invalidState(command: "play", state: state)
        }
        set(.playing)
        emit(.play(userInitiated: userInitiated))
        lastPositionEvent = clock.now()
        scheduleUpcoming()
    }

    public func pause(userInitiated: Bool = true) throws {
        switch state {
        case .paused: return
        case .playing, .buffering:
            set(.paused)
            audio.setPaused(true)
            resumeMedia = session.currentStats().framesPresented > 0 ? position : nil
            emit(.pause(userInitiated: userInitiated))
        default:
            throw PlayerError.invalidState(command: "pause", state: state)
        }
    }

    public func stop() {
        guard state != .idle && state != .stopped else { return }
        release()
        set(.stopped)
        emit(.stop)
    }

    /// Stops because the source itself went away (a channel withdrawn): `event` says why, then
    /// playback stops and the service is down for `reason` until something plays again.
    public func stop(reporting event: PlayerEvent, reason: ServiceReasons) {
        emit(event)
        stop()
        setReasons(reasons.union(reason))
    }

    /// Hands an event that happened beside playback (the channel list) on, in order with the
    /// player's own.
    public func report(_ event: PlayerEvent) {
        emit(event)
    }

    /// Moves to `seconds` from the item's first frame: exactly that frame (`exact`, through the
    /// frame index), or the keyframe at or before it. The frame landed on is shown at once;
    /// playback goes on from it if it was playing.
    public func seek(to seconds: Double, exact: Bool) throws {
        guard [.ready, .playing, .paused, .ended, .buffering].contains(state), let item = current else {
            throw PlayerError.invalidState(command: "seek", state: state)
        }
        guard item.timeshift == nil else { throw PlayerError.seekOnLive }
        guard seconds >= 0, seconds.isFinite, duration.map({ seconds < $0 }) ?? true else {
            throw PlayerError.seekOutOfRange(seconds: seconds, duration: duration)
        }
        try performSeek(item, target: seconds, exact: exact) { try seekFrame(item, seconds: seconds, exact: exact) }
    }

    /// Shows the frame `find` lands on (`seekStarted`, `seeking`, `seekCompleted`), then goes
    /// on as before the seek: playing or paused. The one seek sequence of files and timeshift.
    func performSeek(_ item: PreparedItem, target seconds: Double, exact: Bool,
                     find: () throws -> (VideoFrame, Double, Int?)) throws {
        let resume: PlayerState = state == .ended ? .paused : (state == .buffering ? .playing : state)
        emit(.seekStarted(target: seconds, exact: exact))
        set(.seeking)
        seekedInItem = true
        // Not playing (ready, paused): what the seek reads of the sound waits for the play.
        if resume != .playing { audio.setPaused(true) }
        audio.seeking(toStreamTime: streamTime(of: item, media: seconds),
                      audioOnly: item.reader.demuxer.audioOnly, session: session)
        do {
            let (frame, media, number) = try find()
            audio.seeked(reader: item.reader)
            catchUpSubtitles(item, pts: frame.pts)
            session.hold(frame, media: media)
            _ = try session.step()  // shows it now: it is due at the re-anchored timeline's start
            presentLog?.note(session)
            audio.presented(by: session)
            session.rebase(atMedia: media)
            resumeMedia = media
            set(resume)
            emit(.seekCompleted(position: media, frame: number))
            if resume == .playing { lastPositionEvent = clock.now() }
        } catch let e as MediaError {
            audio.seeked(reader: item.reader)
            set(resume)
            emit(.error(message: e.description, item: index, skipped: false))
            throw PlayerError.media(item: item.index, e)
        }
    }

    private func seekFrame(_ item: PreparedItem, seconds: Double, exact: Bool) throws -> (VideoFrame, Double, Int?) {
        let tb = item.video.timeBase.doubleValue
        let origin = item.originPts ?? 0
        // An audio-only item's packets are all keyframes: the plain seek lands within a packet.
        if exact, !item.reader.demuxer.audioOnly {
            let seeker = try item.exactSeeker(decoder: itemDecoderOptions)
            let n = try seeker.frameNumber(at: seconds)
            // The seeker reads from the keyframe on: the audio it meets is the target's.
            audio.seeked(reader: seeker.reader)
            let f = try seeker.frame(n).clone()
            item.useSeekerReader()
            subtitles.follow(item)
            watchStalls(item.reader)
            session.replaceReader(item.reader)
            return (f, Double((f.pts ?? origin) - origin) * tb, n)
        }
        let ts = origin + Int64((seconds / tb).rounded(.down))
        try item.reader.seek(toTimestamp: ts, position: nil)
        session.replaceReader(item.reader)
        let f = VideoFrame()
        guard try item.reader.next(into: f) else { throw MediaError.timeOutOfRange(input: item.item.source, seconds: seconds, durationSeconds: duration ?? 0) }
        return (f, Double((f.pts ?? origin) - origin) * tb, nil)
    }

    public func setRate(_ r: Double) throws {
        guard r.isFinite, (0.25...4).contains(r) else { throw PlayerError.rateOutOfRange(r) }
        rate = r
        session.setRate(r)
        audio.setRate(r)
        emit(.rateChanged(r))
        if r > 2 { emit(.warning("rate \(r)x is above 2x: frames may be dropped on this machine")) }
    }

    /// Sets the volume (0...100) and mute of the sound, at once.
    public func setVolume(_ volume: Int, muted: Bool) {
        configuration.audio.volume = min(100, max(0, volume))
        configuration.audio.muted = muted
    }

    public func setRepeat(_ mode: RepeatMode) {
        repeatMode = mode
        if isRunning { scheduleUpcoming() }
    }

    public func next() throws {
        guard let i = index else { throw PlayerError.invalidState(command: "next", state: state) }
        guard let n = following(i, forced: true) else { throw PlayerError.noNextItem }
        try jump(to: n)
    }

    public func previous() throws {
        guard let i = index else { throw PlayerError.invalidState(command: "previous", state: state) }
        let p: Int
        if i > 0 { p = i - 1 } else if repeatMode == .all { p = playlist.count - 1 } else { throw PlayerError.noPreviousItem }
        try jump(to: p)
    }

    /// Makes item `i` current; playback goes on if it was playing.
    public func jump(to i: Int) throws {
        guard playlist.indices.contains(i) else { throw PlayerError.itemOutOfRange(index: i, count: playlist.count) }
        requestStartedAt = clock.now()
        let wasPlaying = isRunning
        let prepared: PreparedItem
        switch takePrepared(i) {
        case .success(let p): prepared = p
        case .failure(let e):
            itemsFailed += 1
            emit(.error(message: e.description, item: i, skipped: false))
            throw PlayerError.media(item: i, e)
        }
        become(prepared, gapless: false)
        if wasPlaying { scheduleUpcoming() } else { set(.ready) }
    }

    /// Announces the current output (at start-up).
    public func announceOutput() {
        emit(.outputChanged(description: display.description))
    }

    /// Reports that `output` stopped showing the content (`reason`), or shows it again (nil).
    public func reportOutputCensored(output: String, reason: String?) {
        emit(.outputCensored(output: output, reason: reason))
    }

    /// Reports the HDCP link state of `output` (as a content policy's guard sees it).
    public func reportHDCPChanged(output: String, state: String) {
        emit(.hdcpChanged(output: output, state: state))
    }

    /// Counts one frame of `output` drawn censored.
    public func countCensoredFrame(output: String) {
        framesCensored[output, default: 0] += 1
        session.observer?.frameCensored(output: output)
    }

    /// Reports something that went wrong beside playback (the output's policy machinery).
    public func reportWarning(_ message: String) {
        emit(.warning(message))
    }

    /// Reports a switch of decoder mid-stream (the decoder selector's `decoderFallback`).
    public func reportDecoderFallback(from: String, to: String, reason: String, frame: Int) {
        emit(.decoderFallback(from: from, to: to, reason: reason, frame: frame))
    }

    /// Decoder options whose observer also hands fallbacks to this engine (they happen inside
    /// decoding, on the loop's or the preparer's thread; `tick` turns them into events).
    private var itemDecoderOptions: DecoderOptions {
        var options = configuration.decoder
        options.stillImage = options.stillImage ?? configuration.slate
        let previous = options.observer
        let inbox = fallbackInbox
        options.observer = { event in
            previous?(event)
            if case let .decoderFallback(f) = event { inbox.post(f) }
        }
        return options
    }

    private let fallbackInbox = FallbackInbox()

    private func emitFallbacks() {
        for f in fallbackInbox.take() {
            reportDecoderFallback(from: f.from.rawValue, to: f.to.rawValue, reason: f.reason, frame: f.frame)
        }
    }

    // MARK: The loop

    /// One turn of the loop: when playing, shows (or drops) the next frame, moving to the next
    /// item at the end of one; when every item failed, retries once `retryInterval` has passed.
    public func tick() {
        emitFallbacks()
        if let loss = audio.takeLoss(session: session) {
            emit(.audioLost(device: loss.device, reason: loss.reason))
            emit(.warning(loss.description))
        }
        if let p = current, [.playing, .paused, .ready, .buffering].contains(state) {
            for e in audio.retry(reader: p.reader, item: p.item, settings: configuration.audio, session: session) { emit(e) }
        }
        if state == .error, let at = retryAt, clock.now() >= at, !playlist.isEmpty {
            retryAt = nil
            requestStartedAt = clock.now()
            do {
                try prepareCurrent(index ?? 0, userInitiated: false)
                try play(userInitiated: false)
            } catch {}
            return
        }
        followTimeshift()
        guard isRunning else { return }
        do {
            let r = try session.step()
            presentLog?.note(session)
            reportTransport()
            reportVariants()
            // Waiting for a network source's read-ahead: nothing was shown (`networkBuffering`
            // said so when the wait started).
            if case .buffering = r { return }
            if stallAnnounced {
                // The read that blocked has returned; buffering was announced from inside it.
                stallAnnounced = false
                bufferingReason = nil
                warnStalled()
                set(.playing)
                emit(.buffering(false))
            } else {
                if bufferingReason != nil { liveSourceReturned() }
                if session.lastStepStalled {
                    // The read blocked past the threshold (and said nothing while it did): the
                    // timeline restarted at the frame that came.
                    set(.buffering)
                    emit(.buffering(true, reason: "a read waited longer than \(Double(configuration.stallThreshold) / 1e9) s for data"))
                    warnStalled()
                    set(.playing)
                    emit(.buffering(false))
                }
            }
            switch r {
            case .presented:
                audio.presented(by: session)
                prepareUpcomingWhenSettled()
                setReasons(reasons.subtracting([.decodeFailing, .noOutput, .noSource, .sourceTimeout, .channelInvalid]))
                if let request = awaitingFirstFrame, let i = index, let item = current {
                    awaitingFirstFrame = nil
                    emit(.firstFrame(item: i, source: item.item.source,
                                     sinceRequest: request.startedAt.map { Double(clock.now() &- $0) / 1e9 }, stages: item.stages))
                }
                let now = clock.now()
                if now &- lastPositionEvent >= configuration.positionInterval, let i = index {
                    lastPositionEvent = now
                    emit(.position(seconds: position, duration: duration, item: i))
                }
            case .dropped, .buffering:
                break
            case .ended:
                if !seekedInItem, let damage = current?.reader.damage() {
                    // Played to the end with concealed errors: reported, not fatal. (After a seek
                    // the packet count cannot tell a short file from skipped packets.)
                    emit(.error(message: damage.description, item: index, skipped: false))
                }
                advance()
            }
        } catch MediaError.sourceSilent(let input, let seconds, let timeout) {
            reportTransport()
            liveSourceSilent(MediaError.sourceSilent(input: input, seconds: seconds, timeout: timeout), timedOut: seconds >= timeout)
        } catch let e as PresentError {
            setReasons(reasons.union(.noOutput))
            fail(PlayerError.output(e.description).description, item: index)
        } catch {
            // The item broke mid-stream (read or decode failure): report and move on.
            itemsFailed += 1
            setReasons(reasons.union(.decodeFailing))
            emit(.error(message: "\(error)", item: index, skipped: true))
            advance()
            // The failure may come after a long wait (a source given up after its timeout): the
            // next item starts on a timeline of its own, not late on the failed one's.
            if isRunning { session.rebase() }
        }
    }

    // MARK: Live inputs

    /// A live input sent nothing for a while: `buffering` with the reason, then, past its
    /// timeout, the service goes down (`sourceTimeout`) until packets come back.
    /// The warning after a stall: which item, its source, and how long it gave nothing.
    private func warnStalled() {
        guard let i = index else { return }
        let source = listedSource(i)
        let waited = String(format: "%.1f", session.lastStallSeconds)
        emit(.warning("item \(i) (\(source)): the source stalled for \(waited) s (no data from it); playback goes on from the frame that came"))
    }

    /// Called from inside a read of the current item that has waited `seconds` for data: the
    /// player says it is buffering now, not only once the data has come (or the timeout ended it).
    private func readStalling(_ seconds: Double) {
        guard state == .playing, bufferingReason == nil, !stallAnnounced, let i = index else { return }
        let source = listedSource(i)
        let reason = "no data from \(source) for \(String(format: "%.1f", seconds)) s"
        stallAnnounced = true
        bufferingReason = reason
        set(.buffering)
        emit(.buffering(true, reason: reason))
        onBufferingInsideRead?()
    }

    /// The timeline started waiting for the current item's read-ahead (`waiting`), or stopped:
    /// `buffering` with the level and the reason when the wait starts, the sound held until it
    /// ends.
    private func networkBuffering(_ waiting: Bool, level: BufferLevel) {
        if waiting {
            guard state == .playing, let i = index else { return }
            let source = listedSource(i)
            let reason = level.waitReason(source: URLRedaction.redact(source))
            bufferingReason = reason
            networkWaitStarted = clock.now()
            set(.buffering)
            audio.setPaused(true)
            emit(.buffering(true, reason: reason))
        } else {
            guard bufferingReason != nil, !stallAnnounced, let started = networkWaitStarted else { return }
            bufferingReason = nil
            networkWaitStarted = nil
            if let i = index {
                let source = URLRedaction.redact(listedSource(i))
                let waited = String(format: "%.1f", Double(clock.now() &- started) / 1e9)
                emit(.warning("item \(i) (\(source)): the source stalled for \(waited) s (its read-ahead ran dry); playback paused meanwhile and goes on with no frame lost"))
            }
            if state == .buffering {
                set(.playing)
                audio.setPaused(false)
            }
            emit(.buffering(false))
        }
    }

    /// Item `i`'s source as the playlist names it ("?" past its end), for messages.
    private func listedSource(_ i: Int) -> String { playlist.indices.contains(i) ? playlist[i].source : "?" }

    /// When the current wait for the read-ahead started (clock time).
    private var networkWaitStarted: UInt64?

    /// Reads of `reader` (not live: those report their silence themselves) say when they block.
    private func watchStalls(_ reader: FrameReader) {
        if let ahead = reader.readAheadSource {
            ahead.reportStalls(after: Double(configuration.stallThreshold) / 1e9) { [weak self] seconds in
                self?.readStalling(seconds)
            }
            return
        }
        reader.demuxer.reportStalls(after: Double(configuration.stallThreshold) / 1e9) { [weak self] seconds in
            self?.readStalling(seconds)
        }
    }

    private func liveSourceSilent(_ e: MediaError, timedOut: Bool) {
        let first = bufferingReason == nil
        bufferingReason = e.description
        if first {
            set(.buffering)
            emit(.buffering(true, reason: e.description))
        }
        if timedOut, !reasons.contains(.sourceTimeout) {
            emit(.error(message: e.description, item: index, skipped: false))
            setReasons(reasons.union(.sourceTimeout))
        }
    }

    /// Packets came back after a silence: the timeline starts again at the frame that came.
    private func liveSourceReturned() {
        bufferingReason = nil
        session.rebase()
        set(.playing)
        emit(.buffering(false))
        setReasons(reasons.subtracting(.sourceTimeout))
    }

    /// Emits `discontinuity` when the current live input counted new CC errors, discontinuities
    /// or lost RTP packets.
    private func reportTransport() {
        guard let reader = current?.reader, let source = current?.item.source,
              let d = transport.update(reader: reader, source: source) else { return }
        emit(.discontinuity(source: source, item: index, ccErrors: d.ccErrors, discontinuities: d.discontinuities,
                            rtpPacketsLost: d.rtpPacketsLost, totals: transport.totals[source] ?? d))
    }

    /// Emits `variantSwitch` for the current item's variant choices not reported yet.
    private func reportVariants() {
        guard let reader = current?.reader else { return }
        let video = reader.video
        for v in variantTally.update(reader: reader) {
            emit(.variantSwitch(item: index, from: v.from, to: v.to, bandwidth: v.bandwidth, reason: v.reason, pts: v.pts,
                                seconds: v.pts.map { Double($0 - (video.startTime ?? 0)) * video.timeBase.doubleValue }))
            // The new context's renditions restart at the change and drop the cues before it.
            if v.from != nil, let item = current { catchUpSubtitles(item, pts: v.pts) }
        }
    }

    // MARK: Internals

    /// Hands `event` on; an `error` is kept as the latest failure too.
    func emit(_ event: PlayerEvent) {
        if case let .error(message, item, skipped) = event {
            let source = item.flatMap { playlist.indices.contains($0) ? playlist[$0].source : nil }
            lastFailure = ItemFailure(item: item, source: source, message: message, skipped: skipped)
        }
        sink(event)
    }

    private func set(_ s: PlayerState) {
        guard s != state else { return }
        let old = state
        state = s
        emit(.stateChanged(from: old, to: s))
    }

    private func setReasons(_ r: ServiceReasons) {
        guard r != reasons else { return }
        reasons = r
        emit(.serviceState(up: r.isEmpty, reasons: r))
    }

    private func release() {
        bufferingReason = nil
        preparer.cancel()
        upcomingWanted = false
        upcomingDue = nil
        audio.detach(session: session, flush: true)
        session.clear()
        current = nil
        subtitles.stop(display: display)
        awaitingFirstFrame = nil
        stallAnnounced = false
    }

    /// The item after `i` under the repeat mode; `forced` (a user's "next") moves on even with
    /// repeat one.
    private func following(_ i: Int, forced: Bool = false) -> Int? {
        switch repeatMode {
        case .one where !forced: return i
        case .all, .one: return (i + 1) % playlist.count
        case .none: return i + 1 < playlist.count ? i + 1 : nil
        }
    }

    private func takePrepared(_ i: Int) -> Result<PreparedItem, MediaError> {
        let item: PlaylistItem
        let demuxer: DemuxerOptions
        switch opened(playlist[i]) {
        case .success(let local): (item, demuxer) = local
        case .failure(let e):
            preparer.cancel()
            return .failure(e)
        }
        if preparer.index == i, preparer.item == item, let r = preparer.take() { return r }
        preparer.cancel()
        return PreparedItem.open(item, index: i, demuxer: demuxer, decoder: itemDecoderOptions)
    }

    /// `item` as it is opened, with its demuxer's options: from its local copy when there is
    /// one, with that copy's content key (for this item only).
    private func opened(_ item: PlaylistItem) -> Result<(item: PlaylistItem, demuxer: DemuxerOptions), MediaError> {
        guard let local = localInput?(item.source) else { return .success((item, configuration.demuxer)) }
        return local.map { input in
            var copy = item
            copy.source = input.source
            var demuxer = configuration.demuxer
            demuxer.decryptionKey = input.decryptionKey
            return (copy, demuxer)
        }
    }

    /// The item that follows the current one is to be prepared once the current one has settled
    /// (`upcomingSettle`).
    private func scheduleUpcoming() {
        upcomingWanted = true
        upcomingDue = nil
    }

    /// After a frame is shown: starts preparing the next item when it is due, or sets when it
    /// is, counted from the current item's first frame.
    private func prepareUpcomingWhenSettled() {
        guard upcomingWanted else { return }
        let now = clock.now()
        guard let due = upcomingDue else {
            let quarter = duration.map { UInt64(max($0, 0) / 4 / max(session.rate, 0.01) * 1e9) } ?? upcomingSettle
            upcomingDue = now &+ min(upcomingSettle, quarter)
            return
        }
        guard now >= due else { return }
        upcomingWanted = false
        upcomingDue = nil
        prepareUpcoming()
    }

    /// Starts preparing the item that follows the current one, if there is one.
    private func prepareUpcoming() {
        guard let i = index, let n = following(i), case .success(let local) = opened(playlist[n]) else { preparer.cancel(); return }
        if preparer.index == n, preparer.item == local.item { return }
        preparer.start(local.item, index: n, demuxer: local.demuxer, decoder: itemDecoderOptions)
    }

    private func layout(for p: PreparedItem) -> FrameLayout {
        FrameLayout(orientation: p.item.orientation(stream: p.video.orientation), scaling: p.item.scaling ?? configuration.scaling)
    }

    /// Makes `p` the current item.
    private func become(_ p: PreparedItem, gapless: Bool) {
        let durationBefore = duration
        current = p
        index = p.index
        slateShown = false
        if configuration.timeshift.seconds > 0, LiveInputOptions.handles(p.item.source) {
            p.startTimeshift(configuration.timeshift, audioTrack: PlayerAudio.track(of: p.reader, item: p.item, settings: configuration.audio)?.index)
        }
        p.startReadAhead()
        resumeMedia = nil
        seekedInItem = false
        session.layout = layout(for: p)
        display.overlay = p.item.overlay ?? configuration.overlay
        startSubtitles(p)
        // As the playlist names it (the item opened may be a local copy of it).
        let listed = playlist.indices.contains(p.index) ? playlist[p.index] : p.item
        onItemChanged?(listed)
        if stallAnnounced {
            // The item that stalled is gone (it failed, or another was asked for): its buffering ends.
            stallAnnounced = false
            bufferingReason = nil
            if state == .buffering { set(.playing) }
            emit(.buffering(false))
        }
        watchStalls(p.reader)
        session.continueWith(p.reader, firstFrame: p.firstFrame, originPts: p.originPts, gapless: gapless)
        for e in audio.attach(reader: p.reader, item: p.item, settings: configuration.audio, session: session, gapless: gapless,
                              live: p.timeshift != nil, early: p.takeEarlyAudio()) { emit(e) }
        awaitingFirstFrame = FirstFrameRequest(startedAt: gapless ? nil : (requestStartedAt ?? clock.now()))
        requestStartedAt = nil
        emit(.itemChanged(index: p.index, source: listed.source))
        emit(.prepared(item: p.index, source: listed.source, width: p.video.width, height: p.video.height,
                       codec: p.video.codecName, duration: p.video.durationSeconds))
        if p.video.durationSeconds != durationBefore || !gapless { emit(.durationChanged(p.video.durationSeconds)) }
    }

    /// The outcome of trying items in turn: the first that opened, or how many failed and why.
    private struct Attempt {
        var item: PreparedItem?
        var failures = 0
        var firstError: PlayerError?

        /// What a caller throws when nothing opened: the item's own error for a playlist of one.
        func error(count: Int) -> PlayerError? {
            guard item == nil, failures > 0 else { return nil }
            return count == 1 ? firstError : .noPlayableItem(failures: failures)
        }
    }

    /// Opens item `start`, then the ones `next` names after it, until one opens or every item of
    /// a playlist of `count` failed once. Each failure is counted and reported (`error`, skipped
    /// when another item is tried after it). The one retry loop of `load`, `prepareCurrent` and
    /// `advance`.
    private func firstPlayable(from start: Int?, count: Int, next: (Int) -> Int?,
                               open: (Int) -> Result<PreparedItem, MediaError>) -> Attempt {
        var attempt = Attempt()
        var candidate = start
        while let i = candidate, attempt.failures < count {
            switch open(i) {
            case .success(let p):
                attempt.item = p
                return attempt
            case .failure(let e):
                attempt.failures += 1
                itemsFailed += 1
                if attempt.firstError == nil { attempt.firstError = .media(item: i, e) }
                candidate = next(i)
                let skipped = candidate != nil && attempt.failures < count
                emit(.error(message: e.description, item: i, skipped: skipped))
            }
        }
        return attempt
    }

    /// preparing → ready with item `start`, or the first playable item after it (bad ones reported
    /// and skipped); error (slate, retry later) when none can be played.
    private func prepareCurrent(_ start: Int, userInitiated: Bool) throws {
        set(.preparing)
        let count = playlist.count
        let attempt = firstPlayable(from: start, count: count, next: { ($0 + 1) % count }, open: takePrepared)
        if let p = attempt.item {
            become(p, gapless: false)
            setReasons(reasons.subtracting([.noSource, .channelInvalid]))
            set(.ready)
            return
        }
        index = start
        enterFailure()
        throw attempt.error(count: count)!
    }

    /// At the end of the current item: the next one (already prepared, so the switch shows no gap),
    /// or `ended`.
    private func advance() {
        guard let i = index else { return }
        let count = playlist.count
        let wrap = repeatMode != .none
        let attempt = firstPlayable(from: following(i), count: count,
                                    next: { wrap ? ($0 + 1) % count : ($0 + 1 < count ? $0 + 1 : nil) }, open: takePrepared)
        if let p = attempt.item {
            become(p, gapless: true)
            scheduleUpcoming()
            return
        }
        if attempt.failures >= count || (attempt.failures > 0 && wrap) {
            enterFailure()
            return
        }
        // The last item's sound plays on to its last sample.
        audio.finish()
        set(.ended)
        emit(.ended)
    }

    /// Nothing can be played: the slate goes up, the service reports itself down, and the
    /// playlist is tried again after `retryInterval`.
    private func enterFailure() {
        current = nil
        subtitles.stop(display: display)
        preparer.cancel()
        audio.detach(session: session, flush: true)
        session.clear()
        setReasons(reasons.union(.noSource))
        showSlate()
        set(.error)
        retryAt = clock.now() &+ configuration.retryInterval
    }

    private func fail(_ message: String, item: Int?) {
        emit(.error(message: message, item: item, skipped: false))
        set(.error)
        retryAt = clock.now() &+ configuration.retryInterval
    }

    private func showSlate() {
        guard !slateShown, let path = configuration.slate else { return }
        do {
            let reader = try FrameReader(input: path, demuxerOptions: configuration.demuxer)
            let f = VideoFrame()
            guard try reader.next(into: f) else { throw MediaError.noFrames(input: path) }
            display.overlay = configuration.overlay
            try session.presentNow(f, layout: FrameLayout(orientation: reader.video.orientation, scaling: .fit))
            slateShown = true
        } catch {
            emit(.error(message: "slate: \(error)", item: nil, skipped: false))
        }
    }
}

/// Decoder fallbacks posted from whichever thread decodes, taken by the engine's thread.
/// `@unchecked Sendable`: every access to `items` holds `lock`.
final class FallbackInbox: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [DecoderFallback] = []
    func post(_ f: DecoderFallback) { lock.lock(); items.append(f); lock.unlock() }
    func take() -> [DecoderFallback] {
        lock.lock()
        defer { lock.unlock() }
        let out = items
        items = []
        return out
    }
}

/// Per-channel transport-stream totals, added up over every reader a source was played with.
struct TransportTally {
    private(set) var totals: [String: TSCounts] = [:]
    private var reader: ObjectIdentifier?
    private var seen = TSCounts()

    /// Adds what `reader` counted since the last call; returns the new errors and
    /// discontinuities, nil when there are none.
    mutating func update(reader r: FrameReader, source: String) -> TSCounts? {
        guard let now = r.source.transportCounts else { return nil }
        if reader != ObjectIdentifier(r) || now.packets < seen.packets {
            reader = ObjectIdentifier(r)
            seen = TSCounts()
        }
        var d = TSCounts()
        d.packets = now.packets - seen.packets
        d.ccErrors = now.ccErrors - seen.ccErrors
        d.discontinuities = now.discontinuities - seen.discontinuities
        d.rtpPacketsLost = now.rtpPacketsLost - seen.rtpPacketsLost
        d.resyncs = now.resyncs - seen.resyncs
        seen = now
        var t = totals[source] ?? TSCounts()
        t.packets += d.packets
        t.ccErrors += d.ccErrors
        t.discontinuities += d.discontinuities
        t.rtpPacketsLost += d.rtpPacketsLost
        t.resyncs += d.resyncs
        totals[source] = t
        return d.ccErrors + d.discontinuities + d.rtpPacketsLost > 0 ? d : nil
    }
}

/// When the command that made an item current began, until the item's first frame is shown.
private struct FirstFrameRequest {
    var startedAt: UInt64?
}
