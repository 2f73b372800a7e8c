import ScanoutCore
import ScanoutDecode
import ScanoutDemux
import ScanoutDisplay

// The timeline's commands (seeks, resumes, rates, new inputs) and what the scheduler is told
// for each frame.

extension PlaybackSession {
    /// Starts the timeline again at the next step: the frame at media time `media` (the next
    /// frame's own time when nil) is due at that step's clock time, and is never dropped. For
    /// resuming after a pause or a seek. The old timeline is gone with it: an item that follows
    /// before the next frame is shown (a pause between an item's last frame and its end) starts
    /// on the new one, not one frame after the last frame shown before the pause.
    public func rebase(atMedia media: Double? = nil) {
        endBufferingWait()
        bufferPrimed = false
        timelineStartFrames = stats.framesPresented
        scheduler.rebase(atMedia: media)
    }

    /// Changes the rate from the current position on.
    public func setRate(_ r: Double) {
        if !scheduler.needsStart { rebase(atMedia: position) }
        scheduler.setRate(r)
    }

    /// The next time the timeline starts (a seek, an item not continuing the last, a resume), its
    /// first frame is due `delay` after that step instead of at once.
    public func delayNextStart(by delay: Duration) { scheduler.delayNextStart(by: delay) }

    /// Holds `frame` back to be shown by the next step (a seek's target, already decoded) and
    /// starts the timeline at it.
    public func hold(_ frame: VideoFrame, media: Double? = nil) {
        flushAhead()
        pending = frame
        rebase(atMedia: media)
    }

    /// Switches to another input; `firstFrame` (already decoded from it) is shown first, and
    /// `originPts` is the timestamp of its first frame (media time 0). With `gapless`, the first
    /// frame is due when the previous input's last frame ends (its own duration, else one frame
    /// interval: a still image's last showing is cut at its end); otherwise the timeline starts
    /// again at the next step.
    public func continueWith(_ reader: FrameReader, firstFrame: VideoFrame?, originPts: Int64?, gapless: Bool) {
        let previousInterval = lastPresentedLength ?? frameInterval
        endBufferingWait()
        // A new input's read-ahead fills from nothing: its first fill is not waited for either,
        // gapless or not.
        bufferPrimed = false
        timelineStartFrames = stats.framesPresented
        networkWaitsSeen = .zero
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
        if !gapless || !scheduler.continueGapless(previousInterval: previousInterval) {
            rebase(atMedia: nil)
        }
    }

    /// Replaces the reader of the same input (an exact seek continues on the seeker's reader),
    /// keeping the origin.
    public func replaceReader(_ reader: FrameReader) {
        endBufferingWait()
        if reader !== self.reader { networkWaitsSeen = .zero }
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
        position = 0
        rebase()
    }

    /// What the sound clock says is heard at `now`, as media time of the current input; nil
    /// without a sound clock, before the input's first frame, or when it says nothing.
    func heardMedia(at now: ClockTime) -> Double? {
        if let group = groupClock?.streamTime(at: now, epoch: groupEpoch) { return group }
        return soundMedia(at: now)
    }

    /// What the sound clock says is heard at `now`, as media time of the current input, whatever
    /// times the frames (a sync group's clock may); nil without one.
    public func soundMedia(at now: ClockTime) -> Double? {
        guard let master = masterClock, let originPts, let tb = reader?.video.timeBase.doubleValue,
              let heard = master.streamTime(at: now, epoch: masterEpoch) else { return nil }
        return heard - Double(originPts) * tb
    }

    /// Everything the scheduler reads for a frame at `now`.
    func presentContext(at now: ClockTime, lateIsNetwork: Bool) -> PresentContext {
        PresentContext(now: now, grid: display.vblankSource.map(VBlankGrid.init), frameInterval: frameInterval,
                       heard: heardMedia(at: now), lateIsNetwork: lateIsNetwork,
                       live: reader?.demuxer.isLive == true)
    }
}
