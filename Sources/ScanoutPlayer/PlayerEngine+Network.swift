import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutDecode

// MARK: Buffering, stalls, live silence and transport

extension PlayerEngine {
    /// The warning after a stall: which item, its source, and how long it gave nothing.
    func warnStalled() {
        guard let i = index else { return }
        let source = listedSource(i)
        let waited = String(format: "%.1f", session.lastStallSeconds)
        emit(.warning("item \(i) (\(source)): the source stalled for \(waited) s (no data from it); playback goes on from the frame that came"))
    }

    /// Called from inside a read of the current item that has waited `seconds` for data: the
    /// player says it is buffering now, not only once the data has come (or the timeout ended it).
    private func readStalling(_ seconds: Double) {
        guard state == .playing, wait == nil, let i = index else { return }
        let source = listedSource(i)
        let reason = "no data from \(source) for \(String(format: "%.1f", seconds)) s"
        wait = BufferingWait(reason: reason, insideRead: true)
        set(.buffering)
        emit(.buffering(true, reason: reason))
        onBufferingInsideRead?()
    }

    /// The timeline started waiting for the current item's read-ahead (`waiting`), or stopped:
    /// `buffering` with the level and the reason when the wait starts, the sound held until it
    /// ends.
    func networkBuffering(_ waiting: Bool, level: BufferLevel) {
        if waiting {
            guard state == .playing, let i = index else { return }
            let source = listedSource(i)
            let reason = level.waitReason(source: URLRedaction.redact(source))
            wait = BufferingWait(reason: reason, insideRead: wait?.insideRead ?? false, readAheadSince: clock.now())
            set(.buffering)
            audio.setPaused(true)
            onReadAheadWait?(true, level)
            emit(.buffering(true, reason: reason))
        } else {
            guard let w = wait, !w.insideRead, let started = w.readAheadSince else { return }
            wait = nil
            onReadAheadWait?(false, level)
            if let i = index {
                let source = URLRedaction.redact(listedSource(i))
                let waited = String(format: "%.1f", (clock.now() - started).secondsValue)
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
    func listedSource(_ i: Int) -> String { playlist.indices.contains(i) ? playlist[i].source : "?" }

    /// Reads of `reader` (not live: those report their silence themselves) say when they block.
    func watchStalls(_ reader: FrameReader) {
        if let ahead = reader.readAheadSource {
            ahead.reportStalls(after: configuration.stallThreshold.secondsValue) { [weak self] seconds in
                self?.readStalling(seconds)
            }
            return
        }
        reader.demuxer.reportStalls(after: configuration.stallThreshold.secondsValue) { [weak self] seconds in
            self?.readStalling(seconds)
        }
    }

    /// A live input sent nothing for a while: `buffering` with the reason, then, past its
    /// timeout, the service goes down (`sourceTimeout`) until packets come back.
    func liveSourceSilent(_ e: MediaError, timedOut: Bool) {
        let first = wait == nil
        if first { wait = BufferingWait(reason: e.description) } else { wait?.reason = e.description }
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
    func liveSourceReturned() {
        wait = nil
        session.rebase()
        set(.playing)
        emit(.buffering(false))
        setReasons(reasons.subtracting(.sourceTimeout))
    }

    /// Emits `discontinuity` when the current live input counted new CC errors, discontinuities
    /// or lost RTP packets.
    func reportTransport() {
        guard let reader = current?.reader, let source = current?.item.source,
              let d = transport.update(reader: reader, source: source) else { return }
        emit(.discontinuity(source: source, item: index, ccErrors: d.ccErrors, discontinuities: d.discontinuities,
                            rtpPacketsLost: d.rtpPacketsLost, totals: transport.totals[source] ?? d))
    }

    /// Emits `variantSwitch` for the current item's variant choices not reported yet.
    func reportVariants() {
        guard let reader = current?.reader else { return }
        let video = reader.video
        for v in variantTally.update(reader: reader) {
            emit(.variantSwitch(item: index, from: v.from, to: v.to, bandwidth: v.bandwidth, reason: v.reason, pts: v.pts,
                                seconds: v.pts.map { Double($0 - (video.startTime ?? 0)) * video.timeBase.doubleValue }))
            // The new context's renditions restart at the change and drop the cues before it.
            if v.from != nil, let item = current { catchUpSubtitles(item, pts: v.pts) }
        }
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
