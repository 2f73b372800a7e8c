import Foundation
import ScanoutCore
import ScanoutDemux

/// Why an audio device stopped: playback goes on with video-only timing.
public struct AudioLoss: Sendable, Equatable, CustomStringConvertible {
    public var device: String
    public var reason: String
    public init(device: String, reason: String) {
        self.device = device
        self.reason = reason
    }
    public var description: String { "audio device \(device) lost: \(reason); video goes on with its own clock" }
}

/// Plays audio chunks on an audio sink (an ALSA device, `ALSADevice`) from a thread of its own.
///
/// The loop thread `enqueue`s chunks (never blocking: a bounded queue, a chunk that does not fit
/// is dropped and counted); the output thread takes them, scales them by the volume and writes
/// them with the sink's blocking write (`snd_pcm_writei`), a period at a time. After each write
/// it notes which sample the listener hears now: the stream time of the last sample written minus
/// the device's delay (`snd_pcm_delay`), stamped with the output's clock (`now`, the monotonic
/// clock unless one is given). That is the master clock (`streamTime(at:)`).
///
/// An underrun (`-EPIPE`) is recovered; any other write error ends the output for good: `loss`
/// says why, the clock answers nil, and enqueued chunks are thrown away.
///
/// Chunks to be played at a rate other than 1 are stretched here, by the output thread, just
/// before they are written (`stretch`).
///
/// Thread-safety: every mutable field is guarded by `condition`, except `stretcher`; the sink
/// and the stretcher are touched only by the output thread once `init` returns (hence
/// `@unchecked Sendable`).
///
/// One file of about 500 lines, on purpose: both threads' sides use the same guarded fields, and
/// keeping them `private` (visible to this file only) is what lets the locking above be checked
/// by reading one file. The decoding, tempo and sink parts live in their own files.
public final class AudioOutput: MediaClockSource, @unchecked Sendable {
    public let deviceName: String
    /// The format the device took; chunks must be in it.
    public let format: AudioFormat
    /// The most audio the queue holds, seconds (audio read ahead of the video by the container's
    /// interleaving fits easily).
    public let maxQueuedSeconds: Double

    private let device: any AudioSink
    private let now: @Sendable () -> UInt64
    private let condition = NSCondition()
    private var queue: [AudioChunk] = []
    private var queuedFrames = 0
    private var generation = 0
    /// Flushes so far: a chunk cut short by a pause goes back to the queue only if none came since.
    private var flushes = 0
    private var closed = false
    private var paused = false
    private var volume = 100
    private var muted = false
    private var failWritesAfter: Int?
    private var writes = 0
    private var lost: AudioLoss?
    private var dropped = 0
    private var underruns = 0
    private var framesPlayed = 0
    /// Chunks whose samples before this stream time are cut (a seek's target).
    private var discardBefore: Double?
    /// When the next chunk's first sample is to be heard (`start(at:)`).
    private var startTime: UInt64?
    /// The clock's reading: the stream time heard at `stamp`, how fast it moves, where it stops.
    private var heard: Double?
    private var stamp: UInt64 = 0
    private var heardTempo = 1.0
    private var heardEpoch = 0
    /// Two periods, seconds.
    private let slack: Double
    private var writtenEnd = 0.0
    /// Frames of the chunk being written that are not written yet.
    private var writingLeft = 0
    /// The output thread's stretcher (`stretch`), and the frames it holds.
    private var stretcher: AudioTempo?
    private var stretcherPending = 0
    /// The output thread is stretching a chunk (`stretch`).
    private var stretching = false
    /// Where the first samples of an item not heard yet are when none is queued (the next item's
    /// clock): its chunk being written, or its samples in the stretcher with nothing out yet.
    private var writingFirst: (epoch: Int, start: Double, tempo: Double)?
    private var stretcherFirst: (epoch: Int, start: Double, tempo: Double)?
    /// Play-outs asked for (`waitUntilHeard`) and done by the output thread.
    private var drainsAsked = 0
    private var drainsDone = 0
    private var thread: Thread?
    private let done = NSCondition()
    private var finished = false

    /// Opens ALSA device `device` for `format` (the device may take another rate or channel
    /// count: `format` then says which, and the decoder converts to it) and starts the output
    /// thread. `failWritesAfter` makes every write after that many fail (`FaultPlan.audioLostAt`).
    public convenience init(device name: String, format wanted: AudioFormat, maxQueuedSeconds: Double = 4,
                            failWritesAfter: Int? = nil, now: @escaping @Sendable () -> UInt64 = monotonicNanoseconds) throws {
        self.init(sink: try ALSADevice(name: name, format: wanted), maxQueuedSeconds: maxQueuedSeconds,
                  failWritesAfter: failWritesAfter, now: now)
    }

    /// Plays on `sink`, opened already (chunks are in its format), and starts the output thread;
    /// `now` is the clock the output stamps what it hears with. The output owns the sink from now
    /// on: only its thread uses it.
    public init(sink: any AudioSink, maxQueuedSeconds: Double = 4, failWritesAfter: Int? = nil,
                now: @escaping @Sendable () -> UInt64 = monotonicNanoseconds) {
        device = sink
        deviceName = sink.name
        format = sink.format
        slack = 2 * Double(sink.periodFrames) / Double(sink.format.sampleRate)
        self.maxQueuedSeconds = maxQueuedSeconds
        self.failWritesAfter = failWritesAfter
        self.now = now
        let t = Thread(named: "scanout-audio") { [self] in run() }
        thread = t
        t.start()
    }

    /// Stops the thread (what is queued is not played) and waits for it. The thread holds the
    /// output until then: its owner calls `close` when done with it (the device is closed when
    /// the last reference goes).
    public func close() {
        condition.withLock {
            closed = true
            condition.broadcast()
        }
        done.lock()
        while !finished { done.wait() }
        done.unlock()
    }

    deinit { close() }

    // MARK: The loop thread's side

    /// Queues a chunk; false when it was dropped (the queue is full, or the device is lost).
    @discardableResult
    public func enqueue(_ chunk: AudioChunk) -> Bool {
        condition.withLock {
            guard lost == nil, !closed else { return false }
            var chunk = chunk
            if let cut = discardBefore, let start = chunk.start {
                let skip = Int(((cut - start) / chunk.tempo * Double(format.sampleRate)).rounded()) * format.channels
                if skip >= chunk.samples.count { return true }
                if skip > 0 {
                    chunk.samples.removeFirst(skip)
                    chunk.start = start + Double(skip / format.channels) * chunk.tempo / Double(format.sampleRate)
                }
                discardBefore = nil
            }
            let frames = chunk.samples.count / format.channels
            guard Double(queuedFrames + frames) <= maxQueuedSeconds * Double(format.sampleRate) else {
                dropped += 1
                return false
            }
            queue.append(chunk)
            queuedFrames += frames
            condition.broadcast()
            return true
        }
    }

    /// Throws away what is queued and what the device holds (a seek, a new item that does not
    /// continue this one); chunks before `discardBefore` (stream seconds) are cut from the next ones.
    public func flush(discardBefore cut: Double? = nil) {
        condition.withLock {
            queue.removeAll()
            queuedFrames = 0
            generation += 1
            flushes += 1
            heard = nil
            discardBefore = cut
            startTime = nil
            condition.broadcast()
        }
    }

    /// The next chunk's first sample is to be heard at `time` (the output's clock): the output
    /// thread, about to write it, puts silence before it for as long as there is until then,
    /// less what the device still holds. Worked out at the write, not now, so that the thread's
    /// own delay in getting there does not count. A time already past changes nothing: no sample
    /// is cut. Ignored while paused; a flush forgets it.
    public func start(at time: UInt64) {
        condition.withLock {
            guard !paused else { return }
            startTime = time
        }
    }

    /// Paused: nothing is written, and the device pauses with what it holds kept
    /// (`snd_pcm_pause`), to be heard first on resume; a device that cannot pause drops it
    /// instead. The queue is kept, with the part of the chunk being written that was not written
    /// yet at its head. The clock says nothing while paused and goes on from where it stopped.
    public func setPaused(_ p: Bool) {
        condition.withLock {
            guard p != paused else { return }
            paused = p
            if p { startTime = nil }
            condition.broadcast()
        }
    }

    /// Volume 0...100 and mute, applied to the samples as they are written.
    public func setVolume(_ v: Int, muted m: Bool) {
        condition.withLock {
            volume = min(100, max(0, v))
            muted = m
        }
    }

    /// Why the device stopped, once it has.
    public var loss: AudioLoss? { condition.withLock { lost } }

    /// Figures: chunks dropped for a full queue, underruns recovered, frames written.
    public var counts: (dropped: Int, underruns: Int, framesPlayed: Int) {
        condition.withLock { (dropped, underruns, framesPlayed) }
    }

    /// The device's ring buffer and period, frames.
    public var deviceBuffer: (frames: Int, period: Int) { (device.bufferFrames, device.periodFrames) }

    /// Seconds of audio queued and not yet written.
    public var queuedSeconds: Double { condition.withLock { Double(queuedFrames) / Double(format.sampleRate) } }

    /// Plays out every chunk queued and what the device holds (`AudioSink.drain`: the end of
    /// the sound, as `aplay` ends), waiting at most `timeout` seconds; false when the time ran
    /// out first (the play-out goes on). True at once when paused, lost or closed: nothing more
    /// will be heard. Chunks queued later play as before.
    public func waitUntilHeard(timeout: Double) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        if drainsDone == drainsAsked { drainsAsked += 1 }
        let asked = drainsAsked
        condition.broadcast()
        let deadline = Date(timeIntervalSinceNow: max(timeout, 0))
        while drainsDone < asked, lost == nil, !closed, !paused {
            if !condition.wait(until: deadline) { return drainsDone >= asked }
        }
        return true
    }

    /// The stream time of item `epoch` heard at `t`. While another item is heard and `epoch`'s
    /// samples are queued behind it (a gapless move to the next item), the time it will be
    /// heard at: its first sample comes once the samples before it are played, so its picture
    /// follows its sound from its first frame on, not only once the output thread writes it.
    public func streamTime(at t: UInt64, epoch: Int) -> Double? {
        condition.withLock {
            guard let heard, lost == nil, !paused else { return nil }
            let elapsed = t >= stamp ? Double(t - stamp) / 1e9 : -Double(stamp - t) / 1e9
            let position = heard + elapsed * heardTempo
            // Past the last sample written the device falls silent: no clock to follow. A device
            // that reports no delay (a null or file device) is heard as it is written, so the
            // clock runs on for two periods, the time the thread takes to write the next one.
            // So does it while the thread stretches the next chunk: its samples are on their way.
            guard position < writtenEnd + slack * heardTempo || stretching else { return nil }
            if heardEpoch == epoch { return position }
            guard let i = queue.firstIndex(where: { $0.epoch == epoch }), let first = queue[i].start else {
                // None of it queued: its first samples are being written (and none is heard
                // yet), or are inside the stretcher with nothing out yet, behind what is being
                // written.
                let held = (writtenEnd - position) / heardTempo
                if let w = writingFirst, w.epoch == epoch { return w.start - held * w.tempo }
                if let s = stretcherFirst, s.epoch == epoch {
                    return s.start - (held + Double(writingLeft) / Double(format.sampleRate)) * s.tempo
                }
                return nil
            }
            // Seconds until its first sample: what the device holds, the rest of the chunk
            // being written, the chunks queued before it. What the device holds is negative
            // when the clock has run past the last write (a device that reports no delay,
            // between two writes): the two items' clocks then still move as one.
            let before = Double(writingLeft + stretcherPending) + queue[..<i].reduce(0) { $0 + Self.playedFrames($1, channels: format.channels) }
            let wait = (writtenEnd - position) / heardTempo + before / Double(format.sampleRate)
            return first - wait * Self.tempoHeard(queue[i])
        }
    }

    /// How many frames `chunk` plays for: stretched first when it is not yet (`AudioChunk.rate`).
    static func playedFrames(_ chunk: AudioChunk, channels: Int) -> Double {
        Double(chunk.samples.count / channels) / (chunk.tempo == 1 ? chunk.rate : 1)
    }

    /// Stream seconds a played second of `chunk` covers, once stretched.
    static func tempoHeard(_ chunk: AudioChunk) -> Double { chunk.tempo == 1 ? chunk.rate : chunk.tempo }

    // MARK: The output thread

    private func run() {
        defer {
            done.withLock {
                finished = true
                done.broadcast()
            }
        }
        var handled = condition.withLock { generation }
        // Whether the device is paused (or was dropped for a pause it could not keep), and
        // whether that pause kept its samples (`AudioSink.pause`).
        var devicePaused = false
        var pauseKept = false
        while true {
            condition.lock()
            while !closed, lost == nil, handled == generation, paused == devicePaused,
                  (queue.isEmpty && drainsDone == drainsAsked) || paused {
                condition.wait(until: Date(timeIntervalSinceNow: 0.05))
            }
            if closed || lost != nil { condition.unlock(); return }
            if handled != generation {
                handled = generation
                stretcherPending = 0
                stretcherFirst = nil
                writingFirst = nil
                condition.unlock()
                stretcher = nil
                device.discard()
                devicePaused = false
                pauseKept = false
                continue
            }
            if paused != devicePaused {
                let pausing = paused
                condition.unlock()
                devicePaused = pausing
                if pausing {
                    pauseKept = pauseDevice()
                } else {
                    if pauseKept { resumeDevice() }
                    pauseKept = false
                }
                continue
            }
            if queue.isEmpty {
                // Everything is written: the device plays what it holds to its end.
                let asked = drainsAsked
                condition.unlock()
                device.drain()
                condition.withLock {
                    drainsDone = asked
                    condition.broadcast()
                }
                continue
            }
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
            if pieces.isEmpty { continue }
            if let start { lineUp(at: start) }
            if !write(pieces, volume: v, muted: m, generation: handled, flushes: f) { return }
        }
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
    private func lineUp(at time: UInt64) {
        let rate = Double(format.sampleRate)
        let queued = Double(device.delay() ?? 0) / rate
        let t = now()
        guard time > t else { return }
        let frames = min(Int(((Double(time - t) / 1e9 - queued) * rate).rounded()), format.sampleRate)
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

    /// Writes chunks in order, each a period at a time, scaled by the volume, updating the clock
    /// after each period; false once the device is lost. A pause in the middle puts what is left
    /// (of the chunk being written, then the ones after it) back at the queue's head, unless a
    /// flush came since `flushes`, so that play goes on from the sample after the last one written.
    private func write(_ chunks: [AudioChunk], volume: Int, muted: Bool, generation: Int, flushes: Int) -> Bool {
        for (k, var chunk) in chunks.enumerated() {
            applyVolume(&chunk.samples, volume: volume, muted: muted)
            switch write(chunk, generation: generation, flushes: flushes, then: chunks[(k + 1)...]) {
            case .lost: return false
            case .stopped: return true
            case .written: continue
            }
        }
        return true
    }

    private enum WriteOutcome { case written, stopped, lost }

    /// Writes one chunk (see above); `later` are the chunks to write after it.
    private func write(_ chunk: AudioChunk, generation: Int, flushes: Int, then later: ArraySlice<AudioChunk>) -> WriteOutcome {
        let step = device.periodFrames * format.channels
        var offset = 0
        condition.withLock { writingFirst = chunk.start.map { (chunk.epoch, $0, chunk.tempo) } }
        while offset < chunk.samples.count {
            let stop = condition.withLock {
                guard self.generation != generation || closed || paused else { return false }
                writingLeft = 0
                if paused, !closed, self.flushes == flushes {
                    var rest = chunk
                    rest.samples.removeFirst(offset)
                    rest.start = chunk.start.map { $0 + Double(offset / format.channels) / Double(format.sampleRate) * chunk.tempo }
                    let back = [rest] + later
                    queue.insert(contentsOf: back, at: 0)
                    queuedFrames += back.reduce(0) { $0 + $1.samples.count } / format.channels
                }
                return true
            }
            if stop { return .stopped }
            let end = min(chunk.samples.count, offset + step)
            var n = chunk.samples.withUnsafeBufferPointer { all in
                failing() ? -Int(EIO) : device.write(UnsafeBufferPointer(rebasing: all[offset..<end]))
            }
            if n == -Int(EPIPE) || n == -Int(ESTRPIPE) {
                condition.withLock { underruns += 1 }
                if device.recover(n) {
                    n = chunk.samples.withUnsafeBufferPointer { device.write(UnsafeBufferPointer(rebasing: $0[offset..<end])) }
                }
            }
            if n < 0 {
                condition.withLock {
                    lost = AudioLoss(device: deviceName, reason: device.describe(error: n))
                    heard = nil
                    queue.removeAll()
                    queuedFrames = 0
                }
                return .lost
            }
            offset = end
            let delay = device.delay()
            let t = now()
            condition.withLock {
                writes += 1
                framesPlayed += n
                writingLeft = (chunk.samples.count - offset + later.reduce(0) { $0 + $1.samples.count }) / format.channels
                guard self.generation == generation, let start = chunk.start else { return }
                let rate = Double(format.sampleRate)
                writtenEnd = start + Double(offset / format.channels) / rate * chunk.tempo
                heard = writtenEnd - Double(delay ?? 0) / rate * chunk.tempo
                heardTempo = chunk.tempo
                heardEpoch = chunk.epoch
                stamp = t
            }
        }
        return .written
    }

    private func failing() -> Bool {
        condition.withLock { failWritesAfter.map { writes >= $0 } ?? false }
    }
}
