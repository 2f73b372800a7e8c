import Foundation
import ScanoutCore
import ScanoutDemux

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
/// Split by side, a file each: this one holds the state and the loop thread's side;
/// `+Clock` the master clock (`streamTime`); `+Thread` the output thread's loop, stretching,
/// lining up and pausing; `+Write` its writes. The fields the files share are internal to
/// ScanoutAudio rather than private, and each group says who may touch it: the ones under
/// "Guarded by `condition`" only with `condition` held (inside `condition.withLock`, or between
/// `condition.lock()` and `unlock()`); `device` and `stretcher` only on the output thread.
public final class AudioOutput: MediaClockSource, @unchecked Sendable {
    public let deviceName: String
    /// The format the device took; chunks must be in it.
    public let format: AudioFormat
    /// The most audio the queue holds, seconds (audio read ahead of the video by the container's
    /// interleaving fits easily).
    public let maxQueuedSeconds: Double

    /// The sink; the output thread's alone once `init` returns (but for its constant figures).
    let device: any AudioSink
    let now: @Sendable () -> ClockTime
    let condition = NSCondition()
    /// Two periods, seconds.
    let slack: Double

    // MARK: Guarded by `condition`

    var queue: [AudioChunk] = []
    var queuedFrames = 0
    var generation = 0
    /// Flushes so far: a chunk cut short by a pause goes back to the queue only if none came since.
    var flushes = 0
    var closed = false
    var paused = false
    var volume = 100
    var muted = false
    var failWritesAfter: Int?
    var writes = 0
    var lost: AudioLoss?
    private var dropped = 0
    var underruns = 0
    var framesPlayed = 0
    /// Chunks whose samples before this stream time are cut (a seek's target).
    private var discardBefore: Double?
    /// When the next chunk's first sample is to be heard (`start(at:)`).
    var startTime: ClockTime?
    /// The clock's reading: the stream time heard at `stamp`, how fast it moves, where it stops.
    var heard: Double?
    var stamp: ClockTime = .zero
    var heardTempo = 1.0
    var heardEpoch = 0
    var writtenEnd = 0.0
    /// Frames of the chunk being written that are not written yet.
    var writingLeft = 0
    /// The frames the output thread's stretcher holds.
    var stretcherPending = 0
    /// The output thread is stretching a chunk (`stretch`).
    var stretching = false
    /// Where the first samples of an item not heard yet are when none is queued (the next item's
    /// clock): its chunk being written, or its samples in the stretcher with nothing out yet.
    var writingFirst: (epoch: Int, start: Double, tempo: Double)?
    var stretcherFirst: (epoch: Int, start: Double, tempo: Double)?
    /// Play-outs asked for (`waitUntilHeard`) and done by the output thread.
    var drainsAsked = 0
    var drainsDone = 0
    /// What the output thread had done when it began to wait for work (`waitForWork`); nil
    /// while it does not wait.
    var parked: ThreadSide?

    // MARK: The output thread's alone

    /// The stretcher (`stretch`).
    var stretcher: AudioTempo?

    // MARK: The thread's end

    private var thread: Thread?
    let done = NSCondition()
    /// Guarded by `done`.
    var finished = false

    /// Opens ALSA device `device` for `format` (the device may take another rate or channel
    /// count: `format` then says which, and the decoder converts to it) and starts the output
    /// thread. `failWritesAfter` makes every write after that many fail (`FaultPlan.audioLostAt`).
    public convenience init(device name: String, format wanted: AudioFormat, maxQueuedSeconds: Double = 4,
                            failWritesAfter: Int? = nil, now: @escaping @Sendable () -> ClockTime = ClockTime.now) throws {
        self.init(sink: try ALSADevice(name: name, format: wanted), maxQueuedSeconds: maxQueuedSeconds,
                  failWritesAfter: failWritesAfter, now: now)
    }

    /// Plays on `sink`, opened already (chunks are in its format), and starts the output thread;
    /// `now` is the clock the output stamps what it hears with. The output owns the sink from now
    /// on: only its thread uses it.
    public init(sink: any AudioSink, maxQueuedSeconds: Double = 4, failWritesAfter: Int? = nil,
                now: @escaping @Sendable () -> ClockTime = ClockTime.now) {
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
    public func start(at time: ClockTime) {
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

    /// Whether the output thread waits for the loop thread: nothing queued and no play-out asked
    /// (or paused), no flush or pause to handle; or the output is closed or lost. What the sink
    /// gets next then depends on the loop thread alone. A test on a manual clock moves the clock
    /// only while this holds or the sink waits for the clock (`ScanoutTesting.AudioPacedClock`),
    /// so the output has written all it would by each instant, as it has with a card.
    public var isIdle: Bool {
        condition.withLock {
            if closed || lost != nil { return true }
            guard let parked else { return false }
            return hasNothingToDo(parked)
        }
    }

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
}
