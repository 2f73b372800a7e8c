import ScanoutCore
import ScanoutDecode
import ScanoutDemux

// Where a frame comes from: the one held back (a seek's target, a prepared item's first frame),
// the ones decoded ahead, or the reader; the pool of frames to decode into.

extension PlaybackSession {
    /// What `step` shows next, or what it returns without one.
    enum NextFrame {
        case frame(VideoFrame, media: Double)
        /// No frame: the reader ended, or the timeline waits for the network.
        case done(PlaybackStep)
    }

    /// The held frame, else the first one decoded ahead, else one decoded now (after the wait for
    /// a network source's read-ahead). Notes a stall: a read longer than `stallThreshold` once the
    /// timeline runs.
    func nextFrame() throws -> NextFrame {
        if let p = pending {
            pending = nil
            return .frame(p, media: mediaTime(of: p))
        }
        if !ahead.isEmpty {
            let next = ahead.removeFirst()
            return .frame(next.frame, media: next.media)
        }
        if timed, let buffer = reader?.readAheadSource, let wait = waitForBuffer(buffer) { return .done(wait) }
        guard let (frame, media, seconds) = try decodeOne() else {
            refreshReaderStats()
            return .done(.ended)
        }
        if timed, let limit = stallThreshold, .nanoseconds(inSeconds: seconds) > limit, !scheduler.needsStart {
            lastStallSeconds = seconds
        }
        return .frame(frame, media: media)
    }

    /// Reads and decodes the next frame of the reader into a frame of its own.
    func decodeOne() throws -> (VideoFrame, Double, Double)? {
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
        let seconds = (d1 - d0).secondsValue
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
    func decodeAhead(until slot: ClockTime) throws -> Bool {
        guard maxDecodedAhead > 0 else { return false }
        while ahead.count < maxDecodedAhead, !readerExhausted, pending == nil {
            let estimate = Duration.nanoseconds(UInt64(max(decodeEstimate ?? frameInterval / 2, 0) * 1.5))
            guard clock.now() + estimate < slot, !readAheadIsDry else { break }
            guard let (frame, media, seconds) = try decodeOne() else { break }
            ahead.append((frame, media))
            if let limit = stallThreshold, .nanoseconds(inSeconds: seconds) > limit, clock.now() > slot {
                lastStallSeconds = seconds
                return true
            }
        }
        return false
    }

    /// Before a timeline starts: decodes ahead while the sound that starts with it has none of
    /// it yet (`wantsSound`).
    func readAheadForTheSound() throws {
        guard let wantsSound else { return }
        while wantsSound(), ahead.count < maxDecodedAhead, !readerExhausted, pending == nil, !readAheadIsDry {
            guard let (frame, media, _) = try decodeOne() else { break }
            ahead.append((frame, media))
        }
    }

    /// Returns a shown or dropped frame to the pool (the held and prepared frames belong to
    /// their owners).
    func recycle(_ f: VideoFrame) {
        guard f !== heldFrame else { heldFrame = nil; return }
        f.unref()
        if spare.count < 4 { spare.append(f) }
    }

    /// Forgets the frames decoded ahead (their reader moved, or is gone).
    func flushAhead() {
        for a in ahead { a.frame.unref() }
        ahead.removeAll()
        readerExhausted = false
    }

    /// Seconds from the input's first frame to `f` (the first frame seen sets the origin); a
    /// frame without a timestamp counts frame intervals from it.
    func mediaTime(of f: VideoFrame) -> Double {
        let tb = reader?.video.timeBase.doubleValue ?? 0
        let pts = f.pts ?? ((originPts ?? 0) + Int64(Double(decodedInReader - 1) * frameInterval / 1e9 / max(tb, 1e-12)))
        if originPts == nil { originPts = pts }
        return Double(pts - originPts!) * tb
    }

    /// Media time `media` on the container's timeline; nil before the input's first frame.
    func streamTime(ofMedia media: Double) -> Double? {
        guard let originPts, let tb = reader?.video.timeBase.doubleValue else { return nil }
        return Double(originPts) * tb + media
    }
}
