import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio


// How the sound waits for the first picture after a start or a seek and is lined up with it,
// and how a live item's sound is held back behind its picture.
extension PlayerAudio {
    /// A frame of stream time `seconds` was shown; it reaches the screen at `shownAt` (the
    /// engine's clock; nil: now).
    ///
    /// The first frame after a start or a seek lets the sound held for it go
    /// (`waitingForPicture`), lined up with it (`release`): the target's first sample is heard
    /// when its frame is seen, the frame reaching the screen at the vblank after its commit.
    /// Before, the sound started as soon as the seek's reads decoded it, while the picture still
    /// had its decode and draw ahead of it: the first frames after a seek reached the screen a
    /// draw's time after their sound.
    ///
    /// While a live item's sound is held back, once the picture has played `liveHold` the sound
    /// starts `liveMargin` behind it: the chunks before that are cut
    /// (`AudioOutput.flush(discardBefore:)`) and the rest queued.
    public func presented(streamTime seconds: Double, shownAt: ClockTime? = nil) {
        if waitingForPicture {
            release(picture: seconds, seenAt: shownAt ?? clock())
            return
        }
        guard let chunks = held, let output else { return }
        let since = heldSince ?? seconds
        heldSince = since
        guard seconds - since >= liveHold else { return }
        held = nil
        heldSince = nil
        output.flush(discardBefore: seconds - liveMargin)
        for c in chunks { output.enqueue(c) }
    }

    /// The sound is held until the first frame is aimed (`aimed`), and that frame comes
    /// `pictureLead` later than it would: time for the output thread to write the silence that
    /// goes before the sound.
    func waitForPicture(_ session: PlaybackSession) {
        held = []
        waitingForPicture = true
        session.delayNextStart(by: pictureLead)
    }

    /// A timed frame of stream time `seconds` is to be seen at `seenAt`, and is about to be
    /// waited for and shown (`PlaybackSession.onAim`): the sound waiting for the picture starts
    /// from it, lined up with it (`release`).
    public func aimed(streamTime seconds: Double, seenAt: ClockTime) {
        guard waitingForPicture else { return }
        release(picture: seconds, seenAt: seenAt)
    }

    /// `session` has shown its last frame: `presented(streamTime:shownAt:)` with that frame.
    /// Called after each step that shows one (repeating it for the same frame does nothing more).
    public func presented(by session: PlaybackSession) {
        guard let t = session.streamPosition else { return }
        presented(streamTime: t, shownAt: session.lastPresentedShown)
    }

    /// Lets the sound held for the picture go, lined up with the frame of stream time `t0` seen
    /// at `seenAt` (nil: as it is): the first sample kept (after a seek's cut) is to be heard
    /// `(first − t0) / rate` after the frame is seen (`AudioOutput.start(at:)`: silence first
    /// for the time left). No sample is cut for it: when the sound starts before its picture
    /// (an item whose audio begins first, an output thread late to write), the frames after the
    /// first wait for the sound's clock.
    func release(picture t0: Double, seenAt: ClockTime?) {
        waitingForPicture = false
        let chunks = held ?? []
        held = nil
        guard let output else { return }
        lineUpWith = seenAt.map { (t0, $0) }
        for c in chunks { enqueue(c, to: output) }
    }

    /// Queues `chunk` for the device. The first chunk of sound after it was let go for a
    /// picture (`lineUpWith`: the frame of stream time `t0` seen at `seenAt`), held or decoded
    /// later, is lined up with it: heard `(first − t0) / rate` after the frame is seen, its first
    /// sample being the chunk's or the seek's cut, whichever is later.
    func enqueue(_ chunk: AudioChunk, to output: AudioOutput) {
        if let l = lineUpWith, !chunk.ends {
            lineUpWith = nil
            if let start = chunk.start {
                let first = max(start, seekCut ?? start)
                output.start(at: clockTime(l.seenAt, plus: (first - l.picture) / rate))
            }
        }
        output.enqueue(chunk)
    }
}
