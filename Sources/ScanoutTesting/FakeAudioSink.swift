import Foundation
import ScanoutAudio
import ScanoutCore
#if canImport(Glibc)
import Glibc
#endif

/// An audio sink that plays at the pace of a `ManualClock`, as a sound card plays at the pace of
/// its own crystal: what it holds is heard at `format.sampleRate` frames per second of the clock,
/// from the first write on. A write blocks while the buffer is full until the clock moves on (the
/// output thread waits for the test, as it waits for a card); a buffer that runs dry while playing
/// is an underrun, and the next write fails with `-EPIPE` until `recover`, as ALSA's does.
///
/// It keeps every sample written (`samples`) and counts what was asked of it (`counts`). Faults:
/// `failNextWrite(with:)` (an underrun or a suspend on demand), `unplug(errno:)` (the device is
/// gone: a write blocked now and every later one fail).
///
/// `run(until:)` drives it: it moves the clock a step whenever the writer waits for it (a full
/// buffer, a drain) until the condition holds, so that a test plays seconds of audio in
/// milliseconds, every reading of the clock exact.
///
/// `@unchecked Sendable`: every mutable field is read and written under `condition`.
public final class FakeAudioSink: AudioSink, @unchecked Sendable {
    public let name: String
    public let format: AudioFormat
    public let periodFrames: Int
    public let bufferFrames: Int
    /// Whether `pause` keeps what the device holds (a device without it is dropped on a pause).
    public let canPause: Bool
    public let clock: ManualClock

    /// What was asked of the sink.
    public struct Counts: Sendable, Equatable {
        public var writes = 0
        public var underruns = 0
        public var recoveries = 0
        public var drains = 0
        public var discards = 0
        public var pauses = 0
        public var resumes = 0
    }

    private let condition = NSCondition()
    private var written: [Int16] = []
    private var counted = Counts()
    /// Frames written and not heard yet, as of `settled` on the clock.
    private var held = 0
    private var settled: UInt64
    /// Frames heard in all, and the fraction of a frame the clock has moved past the last one.
    private var heard = 0
    private var remainder: UInt64 = 0
    private var running = false
    private var paused = false
    /// Ran dry while playing: writes fail with -EPIPE until `recover`.
    private var xrun = false
    /// Playing what it holds to its end (`drain`): running dry then is the end, not an underrun.
    private var draining = false
    private var failures: [Int32] = []
    private var gone: Int32?
    /// The clock's reading when the writer started waiting for it to move (a write into a full
    /// buffer, a drain); nil while it does not wait.
    private var waitingSince: UInt64?

    /// A sink of `format` with `periodFrames` per period and `bufferFrames` in all (by default a
    /// period of 10 ms and a buffer of 100 ms, as ALSA sets a card up for the output), heard at
    /// the pace of `clock`.
    public init(name: String = "fake", format: AudioFormat, clock: ManualClock, periodFrames: Int? = nil,
                bufferFrames: Int? = nil, canPause: Bool = true) {
        self.name = name
        self.format = format
        self.clock = clock
        self.periodFrames = periodFrames ?? max(1, format.sampleRate / 100)
        self.bufferFrames = bufferFrames ?? max(1, format.sampleRate / 10)
        self.canPause = canPause
        settled = clock.now()
        clock.onChange { [weak self] in self?.clockMoved() }
    }

    // MARK: What a test reads and does

    /// Every sample written, in order (interleaved).
    public var samples: [Int16] { condition.withLock { written } }
    public var counts: Counts {
        condition.withLock {
            settle()
            return counted
        }
    }
    /// Frames heard so far (played out of the buffer at the clock's pace).
    public var framesHeard: Int { condition.withLock { settle(); return heard } }
    /// Frames written so far.
    public var framesWritten: Int { condition.withLock { written.count / format.channels } }
    /// Whether the writer waits for the clock to move on (a full buffer, a drain) and the clock
    /// has not moved since: nothing changes until it does.
    public var isWaitingForClock: Bool {
        condition.withLock { waitingSince != nil && waitingSince == clock.now() }
    }

    /// The next writes fail with these errnos, one each (`EPIPE`: an underrun, `ESTRPIPE`: a
    /// suspend), before anything of them is taken.
    public func failNextWrite(with errnos: Int32...) {
        condition.withLock { failures += errnos }
    }

    /// The device is gone (unplugged, its driver unloaded): the write waiting now, if any, and
    /// every later one fail with `-errno`; the delay is unknown and nothing recovers it.
    public func unplug(errno: Int32 = ENODEV) {
        condition.withLock {
            gone = errno
            condition.broadcast()
        }
    }

    /// Moves the clock on by `step` whenever a writer waits for it, until `done` holds; false when
    /// it did not within `timeout` seconds of real time (nothing more was written, say). Between
    /// two looks it waits for the sink to be written to or waited on, not for time to pass.
    @discardableResult
    public func run(step: UInt64 = 5_000_000, timeout: Double = 10, until done: () -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while !done() {
            if Date() > deadline { return false }
            if isWaitingForClock {
                clock.advance(by: step)
            } else {
                condition.withLock { _ = condition.wait(until: min(deadline, Date(timeIntervalSinceNow: 0.01))) }
            }
        }
        return true
    }

    // MARK: AudioSink

    public func write(_ samples: UnsafeBufferPointer<Int16>) -> Int {
        let channels = format.channels
        let frames = samples.count / channels
        condition.lock()
        defer {
            condition.broadcast()
            condition.unlock()
        }
        counted.writes += 1
        var done = 0
        while done < frames {
            settle()
            if let gone { return -Int(gone) }
            if let e = failures.first {
                failures.removeFirst()
                if e == EPIPE { counted.underruns += 1 }
                return -Int(e)
            }
            if xrun { return -Int(EPIPE) }
            if paused { return -Int(EBADFD) }
            let room = bufferFrames - held
            if room == 0 {
                waitForClock()
                continue
            }
            let n = min(room, frames - done)
            written += samples[(done * channels)..<((done + n) * channels)]
            held += n
            done += n
            if !running {
                running = true
                settled = clock.now()
                remainder = 0
            }
        }
        return done
    }

    public func delay() -> Int? {
        condition.withLock {
            settle()
            return gone == nil ? held : nil
        }
    }

    public func recover(_ error: Int) -> Bool {
        condition.withLock {
            guard gone == nil, error == -Int(EPIPE) || error == -Int(ESTRPIPE) else { return false }
            counted.recoveries += 1
            xrun = false
            running = false
            held = 0
            return true
        }
    }

    public func pause(_ on: Bool) -> Bool {
        condition.withLock {
            settle()
            guard canPause, gone == nil else { return false }
            if on {
                guard running, !paused else { return false }
                paused = true
                counted.pauses += 1
            } else {
                guard paused else { return false }
                paused = false
                settled = clock.now()
                counted.resumes += 1
            }
            return true
        }
    }

    public func drain() {
        condition.withLock {
            counted.drains += 1
            draining = true
            settle()
            while running, held > 0, gone == nil {
                waitForClock()
                settle()
            }
            draining = false
            running = false
            paused = false
            xrun = false
            held = 0
            condition.broadcast()
        }
    }

    public func discard() {
        condition.withLock {
            settle()
            counted.discards += 1
            running = false
            paused = false
            xrun = false
            held = 0
            condition.broadcast()
        }
    }

    public func describe(error: Int) -> String { String(cString: strerror(Int32(-error))) }

    // MARK: Playing

    /// Plays what the clock's move since `settled` covers; under `condition`.
    private func settle() {
        let now = clock.now()
        defer { settled = max(settled, now) }
        guard running, !paused, now > settled else { return }
        let rate = UInt64(format.sampleRate)
        let elapsed = (now - settled) * rate + remainder
        let frames = Int(elapsed / 1_000_000_000)
        remainder = elapsed % 1_000_000_000
        let played = min(frames, held)
        held -= played
        heard += played
        if !draining, frames > played || (held == 0 && played > 0) {
            // Dry: the card stops, as ALSA's does at an underrun, until recovered.
            counted.underruns += 1
            xrun = true
            running = false
            remainder = 0
        }
    }

    /// Waits, under `condition`, until the clock moves or the device goes.
    private func waitForClock() {
        let before = clock.now()
        waitingSince = before
        condition.broadcast()
        while clock.now() == before, gone == nil {
            condition.wait()
        }
        waitingSince = nil
    }

    private func clockMoved() {
        condition.withLock { condition.broadcast() }
    }
}
