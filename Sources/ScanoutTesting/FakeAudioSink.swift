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
    private var settled: ClockTime
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
    private var waitingSince: ClockTime?

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
    /// it did not within `timeout` of real time (nothing more was written, say). Between two looks
    /// it waits for the sink to be written to or waited on, not for time to pass.
    @discardableResult
    public func run(step: Duration = .milliseconds(5), timeout: Duration = .seconds(10), until done: () -> Bool) -> Bool {
        let deadline = ClockTime.now() + timeout
        while !done() {
            if ClockTime.now() > deadline { return false }
            if isWaitingForClock {
                clock.advance(by: step)
            } else {
                condition.withLock { _ = condition.wait(until: Self.wakeUp(within: .milliseconds(10), before: deadline)) }
            }
        }
        return true
    }

    /// The `Date` `NSCondition.wait(until:)` takes for a wait of at most `most`, and no later than
    /// `deadline` on the monotonic clock: the only use of `Date` here, as that call needs one.
    static func wakeUp(within most: Duration, before deadline: ClockTime) -> Date {
        Date(timeIntervalSinceNow: max(min(most, deadline - ClockTime.now()), .zero).secondsValue)
    }

    /// Waits until the writer waits for the clock, or until `idle` holds (asked at each change of
    /// the sink and every millisecond between, with the sink's lock held: `idle` must not call
    /// into the sink), at most `timeout` of real time; false when that passed first.
    func waitUntilWaitingForClock(or idle: () -> Bool, timeout: Duration) -> Bool {
        let deadline = ClockTime.now() + timeout
        condition.lock()
        defer { condition.unlock() }
        while true {
            if waitingSince != nil && waitingSince == clock.now() { return true }
            if idle() { return true }
            if ClockTime.now() >= deadline { return false }
            _ = condition.wait(until: Self.wakeUp(within: .milliseconds(1), before: deadline))
        }
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
        let elapsed = UInt64((now - settled).nanosecondCount) * rate + remainder
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

/// The fake sinks a player under test opens through its settings (`AudioSettings.sinks =
/// fakes.factory`): each a `FakeAudioSink` named and formatted as the player asks, heard at the
/// pace of `clock`, kept in the order opened (the player closes one output before it opens the
/// next, so the last is the one playing).
///
/// `@unchecked Sendable`: `all` is read and written under `lock`.
public final class FakeAudioSinks: @unchecked Sendable {
    public let clock: ManualClock
    /// Whether the sinks keep what they hold on a pause (`FakeAudioSink.canPause`).
    public let canPause: Bool
    private let lock = NSLock()
    private var all: [FakeAudioSink] = []

    public init(clock: ManualClock, canPause: Bool = true) {
        self.clock = clock
        self.canPause = canPause
    }

    /// Every sink opened so far, in order.
    public var opened: [FakeAudioSink] { lock.withLock { all } }
    /// The sink opened last: the one playing.
    public var last: FakeAudioSink? { lock.withLock { all.last } }

    /// What the player's settings take: opens a sink for the device name and format asked, heard
    /// on `clock`. Equal to no other set's factory (its id names this set).
    public var factory: AudioSinkFactory {
        AudioSinkFactory(id: "fake-\(ObjectIdentifier(self).hashValue)", now: { [clock] in clock.now() }) { [self] device, format in
            let sink = FakeAudioSink(name: device, format: format, clock: clock, canPause: canPause)
            lock.withLock { all.append(sink) }
            return sink
        }
    }

    /// Unplugs every sink (`FakeAudioSink.unplug`): a write waiting for the clock returns, so the
    /// output on it can close. What a test does before its player goes, since closing an output
    /// waits for its thread, and that thread may wait for a clock nothing moves any more.
    public func unplugAll() {
        for sink in opened { sink.unplug() }
    }
}

/// The clock of a player under test whose sound goes to `FakeAudioSinks`: it reads their manual
/// clock, and `sleep(until:)` moves that clock in steps of at most `step`, each once the audio
/// output has done all it can at this instant: its sink waits for the clock (a full buffer, a
/// play-out) or the output waits for the player (`AudioOutput.isIdle`). So while the player
/// waits for a frame's time the sound plays as a card plays it in that time, whatever the
/// output thread's own pace: every sample and every reading of the audio clock is where a card
/// that never stalls puts it. With no output (`output` answers nil) it does not wait.
///
/// The player's thread sleeps on it; `output` is set before the player plays, and it and
/// `stalls` are read and written on that thread only (hence `@unchecked Sendable`).
public final class AudioPacedClock: PlaybackClock, @unchecked Sendable {
    public let sinks: FakeAudioSinks
    /// The most the clock moves at once.
    public let step: Duration
    /// Real time to wait for the output at one instant before the clock moves anyway: an
    /// output that never settles fails its test instead of hanging it.
    public let patience: Duration
    /// The output to wait for: the player's (`{ engine.audio.output }`).
    public var output: () -> AudioOutput? = { nil }
    /// Times the clock moved because `patience` ran out, not because the output had settled:
    /// a test expects none.
    public private(set) var stalls = 0

    public init(sinks: FakeAudioSinks, step: Duration = .milliseconds(2), patience: Duration = .seconds(5)) {
        self.sinks = sinks
        self.step = step
        self.patience = patience
    }

    public func now() -> ClockTime { sinks.clock.now() }

    public func sleep(until deadline: ClockTime) {
        while true {
            let t = now()
            guard t < deadline else { return }
            settle()
            sinks.clock.advance(by: min(step, deadline - t))
        }
    }

    /// Waits until the output has done all it can before the clock moves (or `patience` ran out).
    public func settle() {
        guard let output = output(), let sink = sinks.last else { return }
        if !sink.waitUntilWaitingForClock(or: { output.isIdle }, timeout: patience) { stalls += 1 }
    }
}
