import Foundation
import ScanoutDisplay
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ScanoutRender

// MARK: Commands

extension PlayerEngine {
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
                opened(items[i]).flatMap { local in
                    // Prepared ahead (`preload`): its first frame is decoded already.
                    if preloading, i == start, preparer.index == i, preparer.item == local.item, let r = preparer.take() {
                        preloading = false
                        return r
                    }
                    return PreparedItem.open(local.item, index: i, demuxer: local.demuxer, decoder: itemDecoderOptions)
                }
            }
            guard let p = attempt.item else { throw attempt.error(count: items.count)! }
            release()
            playlist = items
            set(.preparing)
            become(p, gapless: false)
            set(.ready(resumeAt: nil))
            if autoplay { try play(userInitiated: false) }
            return
        }
        release()
        playlist = items
        try prepareCurrent(start, userInitiated: true)
        if autoplay { try play(userInitiated: false) }
    }

    /// The timeline that starts next (a load's first frame) starts `delay` from now, on the first
    /// vblank at or after that time: a schedule's switch lands on its second, not before.
    public func delayStart(by delay: Duration) {
        guard delay > .zero else { return }
        let half = display.vblankSource.map { Duration.nanoseconds($0.refreshInterval.nanosecondCount / 2 - 1_000_000) } ?? .zero
        session.delayNextStart(by: delay + max(.zero, half))
    }

    /// Starts preparing item `start` of a playlist about to be loaded (a schedule's next rule),
    /// beside what plays: the `load` of that playlist then takes it with its first frame decoded,
    /// so the switch shows the new item at once. Forgotten when the next item of the current
    /// playlist needs the preparer.
    public func preload(_ items: [PlaylistItem], start: Int = 0) {
        guard items.indices.contains(start), case .success(let local) = opened(items[start]) else { return }
        preloading = true
        preparer.start(local.item, index: start, demuxer: local.demuxer, decoder: itemDecoderOptions)
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
        // The screens are off: playback starts when they are on again.
        if !displayOn, [.ready, .paused, .ended, .stopped].contains(state) {
            resumeOnPower = true
            return
        }
        switch phase {
        case .playing, .buffering:
            return
        case .ready(let resumeAt), .paused(let resumeAt):
            // Resume where the picture stands: the next frame is due one frame after it.
            session.rebase(atMedia: resumeAt)
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
            let resumeAt = session.currentStats().framesPresented > 0 ? position : nil
            set(.paused(resumeAt: resumeAt))
            audio.setPaused(true)
            emit(.pause(userInitiated: userInitiated))
        default:
            throw PlayerError.invalidState(command: "pause", state: state)
        }
    }

    /// Switches the screens off (playing pauses, and goes on when they are on again: nothing is
    /// decoded meanwhile) or on. `displayPower` says so.
    public func setDisplayPower(on: Bool) throws {
        guard on != displayOn else { return }
        if on {
            switchScreens(on: true)
            try display.setPower(on: true)
            displayOn = true
            emit(.displayPower(on: true))
            if resumeOnPower {
                resumeOnPower = false
                try play(userInitiated: false)
            }
        } else {
            resumeOnPower = isRunning
            if isRunning { try pause(userInitiated: false) }
            try display.setPower(on: false)
            switchScreens(on: false)
            displayOn = false
            emit(.displayPower(on: false))
        }
    }

    /// The screens beside the display: one that does not answer (a TV off the CEC bus) is a
    /// warning, never a failure of the command; the display's own power is what holds.
    private func switchScreens(on: Bool) {
        for s in screenPower {
            do { try s.setPower(on: on) } catch { emit(.warning("\(s.name): the screen was not switched \(on ? "on" : "off"): \(error)")) }
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
        if wasPlaying { scheduleUpcoming() } else { set(.ready(resumeAt: nil)) }
    }

    // MARK: Reports from beside playback

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

    /// `output` shows the content's colour as `colour` says from now on (HDR, or tone mapped and why).
    public func reportOutputColour(output: String, colour: String) {
        outputColours[output] = colour
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
}
