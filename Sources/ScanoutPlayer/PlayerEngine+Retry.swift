import Foundation
import ScanoutDisplay
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutRender

// MARK: Failure, the slate and the retry

extension PlayerEngine {
    /// In `error` with its retry due: the playlist is tried again from the current item, and
    /// plays if one opens. Returns whether it was due (the turn of the loop ends there).
    func retryIfDue() -> Bool {
        guard case .error(let retryAt?) = phase, clock.now() >= retryAt, !playlist.isEmpty else { return false }
        phase = .error(retryAt: nil)
        requestStartedAt = clock.now()
        do {
            try prepareCurrent(index ?? 0, userInitiated: false)
            try play(userInitiated: false)
        } catch {}
        return true
    }

    /// Nothing can be played: the slate goes up, the service reports itself down, and the
    /// playlist is tried again after `retryInterval`.
    func enterFailure() {
        current = nil
        subtitles.stop(display: display)
        preparer.cancel()
        preloading = false
        audio.detach(session: session, flush: true)
        session.clear()
        setReasons(reasons.union(.noSource))
        showSlate()
        set(.error(retryAt: clock.now() + configuration.retryInterval))
    }

    /// The display failed: reported, and the playlist tried again after `retryInterval`.
    func fail(_ message: String, item: Int?) {
        emit(.error(message: message, item: item, skipped: false))
        set(.error(retryAt: clock.now() + configuration.retryInterval))
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
