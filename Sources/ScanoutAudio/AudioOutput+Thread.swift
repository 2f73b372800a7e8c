import Foundation
import ScanoutCore

// The output thread: its loop, stretching, lining up and pausing. Its writes are in `+Write`.
extension AudioOutput {
    /// What the output thread has done so far, kept by it between two turns of its loop.
    struct ThreadSide {
        /// Flushes handled (`generation`).
        var handled: Int
        /// Whether the device is paused (or was dropped for a pause it could not keep), and
        /// whether that pause kept its samples (`AudioSink.pause`).
        var devicePaused = false
        var pauseKept = false
    }

    /// The output thread's loop: waits for work, then handles a flush, a pause or a resume, a
    /// play-out, or the next chunk, in that order; ends when the output is closed or lost.
    func run() {
        defer {
            done.withLock {
                finished = true
                done.broadcast()
            }
        }
        var side = ThreadSide(handled: condition.withLock { generation })
        while true {
            condition.lock()
            waitForWork(side)
            if closed || lost != nil { condition.unlock(); return }
            if side.handled != generation {
                discardForFlush(&side)
            } else if paused != side.devicePaused {
                followPause(&side)
            } else if queue.isEmpty {
                playOut()
            } else if !writeNext(handled: side.handled) {
                return
            }
        }
    }

    /// Whether the output thread, at `side`, has nothing to do: not closed or lost, no flush or
    /// pause change to handle, and nothing queued and no play-out asked, or paused. Under
    /// `condition`.
    func hasNothingToDo(_ side: ThreadSide) -> Bool {
        !closed && lost == nil && side.handled == generation && paused == side.devicePaused
            && ((queue.isEmpty && drainsDone == drainsAsked) || paused)
    }

    /// Waits while there is nothing to do (`parked` says so meanwhile). Under `condition`.
    private func waitForWork(_ side: ThreadSide) {
        parked = side
        while hasNothingToDo(side) {
            _ = condition.wait(until: Date(timeIntervalSinceNow: 0.05))
        }
        parked = nil
    }

    /// A flush came: what the device and the stretcher hold goes. Called under `condition`,
    /// which it lets go.
    private func discardForFlush(_ side: inout ThreadSide) {
        side.handled = generation
        stretcherPending = 0
        stretcherFirst = nil
        writingFirst = nil
        condition.unlock()
        stretcher = nil
        device.discard()
        side.devicePaused = false
        side.pauseKept = false
    }

    /// Pauses or resumes the device as `paused` says. Called under `condition`, which it lets go.
    private func followPause(_ side: inout ThreadSide) {
        let pausing = paused
        condition.unlock()
        side.devicePaused = pausing
        if pausing {
            side.pauseKept = pauseDevice()
        } else {
            if side.pauseKept { resumeDevice() }
            side.pauseKept = false
        }
    }

    /// Everything is written: the device plays what it holds to its end, and the play-out asked
    /// for is done. Called under `condition`, which it lets go.
    private func playOut() {
        let asked = drainsAsked
        condition.unlock()
        device.drain()
        condition.withLock {
            drainsDone = asked
            condition.broadcast()
        }
    }

    /// Takes the chunk at the queue's head, stretches it and writes what comes out, lined up
    /// with `start(at:)` when asked; false once the device is lost. Called under `condition`,
    /// which it lets go.
    private func writeNext(handled: Int) -> Bool {
        let chunk = queue.removeFirst()
        queuedFrames -= chunk.samples.count / format.channels
        // Counted as being written while it is stretched, for the next item's clock.
        writingLeft = Int(Self.playedFrames(chunk, channels: format.channels))
        stretching = chunk.tempo == 1 && (chunk.rate != 1 || chunk.ends || stretcher != nil)
        let (v, m, f) = (volume, muted, flushes)
        let start = startTime
        startTime = nil
        condition.unlock()
        let pieces = stretch(chunk)
        let pending = stretcher?.pending ?? 0
        let first = stretcher.flatMap { s in s.hasEmitted ? nil : s.origin.map { (s.epoch, $0, s.rate) } }
        condition.withLock {
            stretching = false
            stretcherPending = pending
            stretcherFirst = first
            writingLeft = pieces.reduce(0) { $0 + $1.samples.count } / format.channels
            // Nothing came out yet (a stretcher filling its window): the next piece is the
            // one to line up.
            if pieces.isEmpty, let start, startTime == nil, handled == generation { startTime = start }
        }
        if pieces.isEmpty { return true }
        if let start { lineUp(at: start) }
        return write(pieces, volume: v, muted: m, generation: handled, flushes: f)
    }

    /// Stretches `chunk` for its rate (`AudioChunk.rate`): what the stretcher puts out for it,
    /// after what the one before still held when the rate or the item changed or the item ended
    /// (`AudioTempo.drain`). A chunk stretched already (the rest of one a pause cut short) and
    /// one at rate 1 go as they are. Here, on the output thread, and not where the decoder runs:
    /// the stretcher costs the loop thread no time.
    private func stretch(_ chunk: AudioChunk) -> [AudioChunk] {
        guard chunk.tempo == 1 else { return [chunk] }
        var out: [AudioChunk] = []
        let wanted = chunk.ends ? nil : (chunk.rate != 1 ? chunk.rate : nil)
        if let s = stretcher, chunk.ends || s.rate != wanted || (!s.isFresh && s.epoch != chunk.epoch) {
            if let tail = s.drain() { out.append(tail) }
            stretcher = nil
            // The next item most likely plays at the same rate: its stretcher is made now,
            // while the device still holds this item's end, not when its first chunk comes (in
            // the vkms guest, making one and its first blocks at that moment left the device
            // dry for about 50 ms at a gapless move).
            if chunk.ends { stretcher = try? AudioTempo(rate: s.rate, format: format) }
        }
        if chunk.ends || chunk.samples.isEmpty { return out }
        guard let rate = wanted else { return out + [chunk] }
        if stretcher == nil { stretcher = try? AudioTempo(rate: rate, format: format) }
        // A stretcher that cannot be built plays the chunk as it is; the clock follows its tempo.
        guard let s = stretcher else { return out + [chunk] }
        if let piece = try? s.process(chunk) { out.append(piece) }
        return out
    }

    /// Writes silence until `time` (less what the device holds): the next sample written is
    /// heard then. At most a second: the time asked for is a frame's, a refresh or two away.
    private func lineUp(at time: ClockTime) {
        let rate = Double(format.sampleRate)
        let queued = Double(device.delay() ?? 0) / rate
        let t = now()
        guard time > t else { return }
        let frames = min(Int((((time - t).secondsValue - queued) * rate).rounded()), format.sampleRate)
        guard frames > 0 else { return }
        let silence = [Int16](repeating: 0, count: frames * format.channels)
        _ = silence.withUnsafeBufferPointer { device.write($0) }
    }

    /// Pauses the device with its samples kept, the clock frozen where the listener is; true
    /// when kept. A device that cannot pause (or was not playing) is dropped instead, and the
    /// clock waits for the next write.
    private func pauseDevice() -> Bool {
        guard device.pause(true) else {
            dropHeld()
            return false
        }
        let delay = device.delay()
        let t = now()
        condition.withLock {
            guard heard != nil, let delay else { return }
            heard = writtenEnd - Double(delay) / Double(format.sampleRate) * heardTempo
            stamp = t
        }
        return true
    }

    /// Resumes a device paused with its samples kept, the clock going on from where it stopped;
    /// one that will not resume is dropped.
    private func resumeDevice() {
        guard device.pause(false) else { return dropHeld() }
        let t = now()
        condition.withLock { stamp = t }
    }

    /// Drops what the device holds (a pause or resume it would not take): the clock waits for
    /// the next write.
    private func dropHeld() {
        device.discard()
        condition.withLock { heard = nil }
    }
}
