import Foundation
import Synchronization
import ScanoutDisplay
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio

/// Fans player events out to any number of subscribers, from any thread. Each event carries a
/// sequence number (1, 2, ...), so a client can tell whether it missed some.
public final class EventHub: Sendable {
    public struct Numbered: Sendable {
        public var sequence: Int
        public var event: PlayerEvent
        /// The zone of a composed screen whose player it comes from; nil on a screen of one picture.
        public var zone: String?
    }
    private struct Subscribers {
        var next = 1
        var streams: [Int: AsyncStream<Numbered>.Continuation] = [:]
        var listeners: [@Sendable (Numbered) -> Void] = []
        var sequence = 0
        var finished = false
        /// The newest `replayCapacity` events, for clients that reconnect: a ring whose oldest
        /// entry is at `recentStart`.
        var recent: [Numbered] = []
        var recentStart = 0
        var recentInOrder: [Numbered] { Array(recent[recentStart...] + recent[..<recentStart]) }
    }
    private let subscribers = Mutex(Subscribers())
    /// The zone this hub's own events are tagged with (`publish(_:)`); nil: none.
    private let ownZone = Mutex<String?>(nil)
    /// How many of the newest events are kept for `subscribe(after:)`.
    public let replayCapacity: Int

    public init(replayCapacity: Int = 1024) {
        self.replayCapacity = max(0, replayCapacity)
    }

    /// What a subscriber that last saw event `after` gets: the events it missed that are still
    /// kept (in order), or the range it missed beyond them, and the stream of the events after
    /// `sequence` (the newest event at the moment of subscribing).
    public struct Resumption: Sendable {
        /// The sequence number of the newest event when the stream began; everything the stream
        /// yields comes after it.
        public var sequence: Int
        /// Events after the one named, up to `sequence`, that the ring still holds.
        public var replay: [Numbered]
        /// Sequence numbers missed and no longer held (the ring moved past them, or the client
        /// names an event this hub never published: the service restarted); nil: nothing lost.
        public var gap: ClosedRange<Int>?
        public var stream: AsyncStream<Numbered>
    }

    /// Subscribes (as `subscribe(buffer:)`), and atomically with it takes the sequence number of
    /// the newest event and, when `after` names the last event a client saw, what it missed.
    public func subscribe(after: Int?, buffer: Int = 1024) -> Resumption {
        var result: (sequence: Int, replay: [Numbered], gap: ClosedRange<Int>?) = (0, [], nil)
        let stream = subscribe(buffer: buffer) { s in
            result.sequence = s.sequence
            guard let after, after != s.sequence else { return }
            if after > s.sequence {
                // Not one of ours: the numbering restarted with this process.
                result.gap = (s.sequence + 1)...after
                return
            }
            let kept = s.recentInOrder
            let oldest = kept.first?.sequence ?? s.sequence + 1
            if after + 1 < oldest { result.gap = (after + 1)...(oldest - 1) }
            result.replay = kept.filter { $0.sequence > after }
        }
        return Resumption(sequence: result.sequence, replay: result.replay, gap: result.gap, stream: stream)
    }

    /// A stream of the events from now on; the newest `buffer` are kept for a slow reader.
    public func subscribe(buffer: Int = 1024) -> AsyncStream<Numbered> {
        subscribe(buffer: buffer) { _ in }
    }

    /// Subscribes, calling `atomically` under the same lock (it sees no event the stream misses,
    /// and the stream yields none it saw).
    private func subscribe(buffer: Int, _ atomically: (inout Subscribers) -> Void) -> AsyncStream<Numbered> {
        let (stream, continuation) = AsyncStream<Numbered>.makeStream(bufferingPolicy: .bufferingNewest(buffer))
        let id: Int? = subscribers.withLock { s in
            atomically(&s)
            guard !s.finished else { return nil }
            let id = s.next
            s.next += 1
            s.streams[id] = continuation
            return id
        }
        guard let id else {
            // Shutting down: the stream ends at once.
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.streams.removeValue(forKey: id) }
        }
        return stream
    }

    /// Calls `body` with every event, on the publishing thread (keep it short: metrics, logs).
    public func addListener(_ body: @escaping @Sendable (Numbered) -> Void) {
        subscribers.withLock { $0.listeners.append(body) }
    }

    /// Tags the events published from now on with `zone` (the player plays a zone of a screen).
    public func tag(zone: String?) { ownZone.withLock { $0 = zone } }

    /// The zone this hub's own events are tagged with.
    public var zone: String? { ownZone.withLock { $0 } }

    /// Publishes `event`, tagged with this hub's zone.
    public func publish(_ event: PlayerEvent) {
        publish(event, zone: zone)
    }

    /// Publishes `event` as one of `zone`'s (a screen's hub carrying its zones' events).
    public func publish(_ event: PlayerEvent, zone: String?) {
        let (numbered, streams, listeners) = subscribers.withLock { s in
            s.sequence += 1
            let n = Numbered(sequence: s.sequence, event: event, zone: zone)
            if replayCapacity > 0 {
                if s.recent.count < replayCapacity {
                    s.recent.append(n)
                } else {
                    // Full: the newest overwrites the oldest.
                    s.recent[s.recentStart] = n
                    s.recentStart = (s.recentStart + 1) % replayCapacity
                }
            }
            return (n, Array(s.streams.values), s.listeners)
        }
        for l in listeners { l(numbered) }
        for c in streams { c.yield(numbered) }
    }

    /// Ends every subscriber's stream, and those of later subscribers at once.
    public func finish() {
        let streams = subscribers.withLock { s in
            s.finished = true
            defer { s.streams = [:] }
            return Array(s.streams.values)
        }
        for c in streams { c.finish() }
    }
}

/// A player on a thread of its own: the thread owns a `PlayerEngine` and with it the display,
/// every reader and decoder; commands reach it as jobs through a queue, and come back with their
/// result. Between jobs the thread shows frames (`PlayerEngine.tick`), so a command waits at most
/// one frame interval. Events go to `events`; `snapshot` is a copy refreshed after every job,
/// four times a second while playing, and before each event goes out, readable at once from any
/// thread.
///
/// Why a thread and not an actor: the loop blocks (libav reads, `clock_nanosleep` until a frame's
/// time) and must not hold a cooperative-pool thread for the whole playback.
public final class Player: @unchecked Sendable {
    // @unchecked Sendable: `queue`, `stopping` and `latest` are only touched under `condition`;
    // the engine lives in the loop thread's closure and is never reachable from another thread.
    private let condition = NSCondition()
    private var queue: [Job] = []

    private struct Job {
        var run: (PlayerEngine) -> Void
        var cancel: () -> Void
    }
    private var stopping = false
    private var latest = PlayerSnapshot()
    private var thread: Thread?
    private let finished = DispatchSemaphore(value: 0)
    public let events = EventHub()

    /// Starts the loop thread; `makeDisplay` runs on it (the display's owner), as does everything
    /// the engine does.
    public init(configuration: PlayerConfiguration = PlayerConfiguration(),
                makeDisplay: @escaping @Sendable () -> any Display) {
        let t = Thread(named: "scanout-player") { [self] in loop(configuration: configuration, makeDisplay: makeDisplay) }
        thread = t
        t.start()
    }

    private func loop(configuration: PlayerConfiguration, makeDisplay: () -> any Display) {
        // The engine and its display are released here, on their own thread, before anyone waiting
        // for the end is told: a KMS display puts the screen back and its GL objects are freed
        // while the process is still whole (not during exit, beside the libraries' own teardown).
        runLoop(configuration: configuration, makeDisplay: makeDisplay)
        finished.signal()
    }

    private func runLoop(configuration: PlayerConfiguration, makeDisplay: () -> any Display) {
        let clock = MonotonicClock()
        // Each event goes out once the copy `snapshot` returns is refreshed: a client that hears
        // of a change (`ended`, a state) and asks for the state or the figures at once gets them
        // as of that change or later, never the copy from before it.
        final class Emitter { weak var engine: PlayerEngine? }
        let emitter = Emitter()
        let engine = PlayerEngine(display: makeDisplay(), clock: clock, configuration: configuration,
                                  backgroundPreparation: true, emit: { [unowned self] event in
                                      if let engine = emitter.engine { self.publishSnapshot(engine) }
                                      self.events.publish(event)
                                  })
        emitter.engine = engine
        engine.announceOutput()
        // A read that blocks stops the loop: the state it announced from inside the read is
        // published from there (the engine is only reached from this thread).
        engine.onBufferingInsideRead = { [unowned self, unowned engine] in self.publishSnapshot(engine) }
        publishSnapshot(engine)
        var lastSnapshot = ClockTime.zero
        while true {
            condition.lock()
            while queue.isEmpty && !stopping && !engine.isRunning {
                if let wake = engine.nextWakeup {
                    let now = clock.now()
                    if wake <= now { break }
                    _ = condition.wait(until: Date(timeIntervalSinceNow: (wake - now).secondsValue))
                    if clock.now() >= wake { break }
                } else {
                    condition.wait()
                }
            }
            if stopping {
                condition.unlock()
                break
            }
            let jobs = queue
            queue = []
            condition.unlock()
            for job in jobs { job.run(engine) }
            engine.tick()
            if let n = configuration.decoder.environment.faults.hangLoopAt,
               configuration.decoder.environment.faults.loopHangs(framesPresented: engine.session.currentStats().framesPresented) {
                // Injected fault: the loop stops turning for good, as if wedged in a driver call.
                events.publish(.warning("fault hang-loop@\(n): the player loop stops here"))
                while true { sleep(3600) }
            }
            // While playing, the copy is refreshed four times a second; after a command, at once.
            let now = clock.now()
            if !jobs.isEmpty || !engine.isRunning || now - lastSnapshot >= .milliseconds(250) {
                lastSnapshot = now
                publishSnapshot(engine)
            }
        }
        engine.stop()
        publishSnapshot(engine)
    }

    private func publishSnapshot(_ engine: PlayerEngine) {
        let s = engine.snapshot()
        condition.lock()
        latest = s
        condition.unlock()
    }

    /// Where the player stands (a copy at most a quarter of a second old while playing).
    public var snapshot: PlayerSnapshot {
        condition.lock()
        defer { condition.unlock() }
        return latest
    }

    /// Runs `body` on the loop thread with the engine and returns its result.
    public func perform<T: Sendable>(_ body: @escaping @Sendable (PlayerEngine) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<T, any Error>) in
            condition.lock()
            if stopping {
                condition.unlock()
                c.resume(throwing: PlayerError.invalidState(command: "run a command", state: .stopped))
                return
            }
            queue.append(Job(run: { [unowned self] engine in
                                 let result = Result { try body(engine) }
                                 // The copy `snapshot` returns shows the command's effect before its
                                 // caller hears back (an event stream opened at once starts from it).
                                 self.publishSnapshot(engine)
                                 c.resume(with: result)
                             },
                             cancel: { c.resume(throwing: PlayerError.invalidState(command: "run a command", state: .stopped)) }))
            condition.signal()
            condition.unlock()
        }
    }

    /// Queues `body` to run on the loop thread, in order with the commands queued before and
    /// after it, without waiting for it: for callers on a thread of their own (the SAP listener).
    /// Dropped when the player is stopping.
    public func submit(_ body: @escaping @Sendable (PlayerEngine) -> Void) {
        condition.lock()
        defer { condition.unlock() }
        guard !stopping else { return }
        queue.append(Job(run: { [unowned self] engine in
                             body(engine)
                             self.publishSnapshot(engine)
                         },
                         cancel: {}))
        condition.signal()
    }

    /// Stops playback and ends the loop thread (waits for it).
    public func shutdown() {
        condition.lock()
        let already = stopping
        stopping = true
        let pending = queue
        queue = []
        condition.signal()
        condition.unlock()
        for job in pending { job.cancel() }
        guard !already else { return }
        finished.wait()
        events.finish()
    }
}
