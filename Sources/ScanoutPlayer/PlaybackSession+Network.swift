import ScanoutCore
import ScanoutDecode
import ScanoutDemux

// Network sources: the timeline waits while a VOD source's read-ahead is dry (`BufferingGate`),
// and a frame late because of the network moves the timeline instead of being dropped.

extension PlaybackSession {
    /// Nil when the frame can be decoded; `.buffering` (after a short wait for data) while the
    /// read-ahead is dry and until it holds enough again, the timeline stopped meanwhile.
    func waitForBuffer(_ buffer: PacketReadAhead) -> PlaybackStep? {
        // The first frame of a timeline (a start, a seek, a resume) is decoded whatever is held,
        // as mpv does not wait for its cache before the first frame: a start waits only for it.
        if scheduler.firstOfTimeline, !gate.isWaiting { return nil }
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
            stats.bufferingSeconds += waited.secondsValue
            onBuffering?(false, level)
            // The next frame is due now, as after a pause.
            rebase(atMedia: nil)
            return nil
        }
        buffer.waitForData(within: .milliseconds(20))
        return .buffering(level)
    }

    /// Whether a frame of this step that comes late is late because of the network: a read
    /// waited for it since the last step (for this frame, or for one decoded ahead of it in the
    /// last wait, which may be this one), or the read-ahead is filling for the first time (the
    /// network paces decoding then). Notes the waits seen.
    func lateIsTheNetworks() -> Bool {
        var waited = false
        if let waits = reader?.readAheadSource?.waits.time {
            waited = waits > networkWaitsSeen
            networkWaitsSeen = waits
        }
        return waited || (reader?.readAheadSource != nil && !bufferPrimed)
    }

    /// Whether the network source's read-ahead holds no video packet now (and more will come):
    /// nothing is decoded ahead then, so that no wait for the network happens inside a wait.
    var readAheadIsDry: Bool {
        guard let level = reader?.readAheadSource?.level else { return false }
        return level.packets == 0 && !level.ended
    }

    /// Ends a wait for the network that something else overtook (a seek, a resume, a new input).
    func endBufferingWait() {
        guard gate.isWaiting else { return }
        if let since = gate.since { stats.bufferingSeconds += (clock.now() - since).secondsValue }
        gate = BufferingGate()
        onBuffering?(false, reader?.readAheadSource?.level ?? BufferLevel())
    }
}
