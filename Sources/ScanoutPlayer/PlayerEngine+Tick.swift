import Foundation
import ScanoutDisplay
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio

// MARK: The loop

extension PlayerEngine {
    /// One turn of the loop: when playing, shows (or drops) the next frame, moving to the next
    /// item at the end of one; when every item failed, retries once `retryInterval` has passed.
    public func tick() {
        emitFallbacks()
        followAudio()
        if retryIfDue() { return }
        followTimeshift()
        followGroup()
        guard isRunning else { return }
        do {
            let r = try session.step()
            presentLog?.note(session)
            reportTransport()
            reportVariants()
            // Waiting for a network source's read-ahead: nothing was shown (`networkBuffering`
            // said so when the wait started).
            if case .buffering = r { return }
            endWaitAfterStep()
            switch r {
            case .presented: presented()
            case .dropped, .buffering: break
            case .ended: itemEnded()
            }
        } catch {
            stepFailed(error)
        }
    }

    /// The sound's device lost (one `audioLost` and a warning), or reopened after a refusal.
    private func followAudio() {
        if let loss = audio.takeLoss(session: session) {
            emit(.audioLost(device: loss.device, reason: loss.reason))
            emit(.warning(loss.description))
        }
        if let p = current, [.playing, .paused, .ready, .buffering].contains(state) {
            for e in audio.retry(reader: p.reader, item: p.item, settings: configuration.audio, session: session) { emit(e) }
        }
    }

    /// After a step that was not a wait for the read-ahead: the buffering announced from inside
    /// a read that has now returned ends; a live source that was silent came back; a read that
    /// blocked past the threshold (and said nothing while it did) restarted the timeline.
    private func endWaitAfterStep() {
        if wait?.insideRead == true {
            // The read that blocked has returned; buffering was announced from inside it.
            wait = nil
            warnStalled()
            set(.playing)
            emit(.buffering(false))
            return
        }
        if wait != nil { liveSourceReturned() }
        if session.lastStepStalled {
            // The timeline restarted at the frame that came.
            set(.buffering)
            emit(.buffering(true, reason: "a read waited longer than \(configuration.stallThreshold.secondsValue) s for data"))
            warnStalled()
            set(.playing)
            emit(.buffering(false))
        }
    }

    /// A frame reached the screen: the sound follows it, the service is up, the next item may
    /// start being prepared, and the first-frame and position events are due.
    private func presented() {
        audio.presented(by: session)
        groupFramePresented()
        prepareUpcomingWhenSettled()
        setReasons(reasons.subtracting([.decodeFailing, .noOutput, .noSource, .sourceTimeout, .channelInvalid]))
        if let request = awaitingFirstFrame, let i = index, let item = current {
            awaitingFirstFrame = nil
            emit(.firstFrame(item: i, source: item.item.source,
                             sinceRequest: request.startedAt.map { (clock.now() - $0).secondsValue }, stages: item.stages))
        }
        let now = clock.now()
        if now - lastPositionEvent >= configuration.positionInterval, let i = index {
            lastPositionEvent = now
            emit(.position(seconds: position, duration: duration, item: i))
        }
    }

    /// The current item played to its end: its damage reported, then the next item.
    private func itemEnded() {
        if current?.seeked == false, let damage = current?.reader.damage() {
            // Played to the end with concealed errors: reported, not fatal. (After a seek
            // the packet count cannot tell a short file from skipped packets.)
            emit(.error(message: damage.description, item: index, skipped: false))
        }
        advance()
    }

    /// A step threw: a live source's silence, the display refusing frames, or the item broken.
    private func stepFailed(_ error: any Error) {
        switch error {
        case MediaError.sourceSilent(let input, let seconds, let timeout):
            reportTransport()
            liveSourceSilent(MediaError.sourceSilent(input: input, seconds: seconds, timeout: timeout), timedOut: seconds >= timeout)
        case let e as PresentError:
            lastPlaybackError = e
            setReasons(reasons.union(.noOutput))
            fail(PlayerError.output(e.description).description, item: index)
        default:
            // The item broke mid-stream (read or decode failure): report and move on.
            lastPlaybackError = error
            itemsFailed += 1
            setReasons(reasons.union(.decodeFailing))
            emit(.error(message: "\(error)", item: index, skipped: true))
            advance()
            // The failure may come after a long wait (a source given up after its timeout): the
            // next item starts on a timeline of its own, not late on the failed one's.
            if isRunning { session.rebase() }
        }
    }

    // MARK: Decoder fallbacks

    /// Decoder options whose observer also hands fallbacks to this engine (they happen inside
    /// decoding, on the loop's or the preparer's thread; `tick` turns them into events).
    var itemDecoderOptions: DecoderOptions {
        var options = configuration.decoder
        options.stillImage = options.stillImage ?? configuration.slate
        options.stillDuration = configuration.imageDuration
        let previous = options.observer
        let inbox = fallbackInbox
        options.observer = { event in
            previous?(event)
            if case let .decoderFallback(f) = event { inbox.post(f) }
        }
        return options
    }

    private func emitFallbacks() {
        for f in fallbackInbox.take() {
            reportDecoderFallback(from: f.from.rawValue, to: f.to.rawValue, reason: f.reason, frame: f.frame)
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
