import CFFmpeg
import Foundation
import ScanoutCore

/// What a `PacketReadAhead` shares with its filling thread: the packets held, the commands
/// (seek, route) the thread carries out between two reads, and the figures of its level.
///
/// `@unchecked Sendable`: every stored property that changes is read and written under
/// `condition`; a packet held is touched by the filling thread until it is stored and by the
/// reader once taken, never by both; the demuxer is used by the filling thread alone (the
/// reader's seeks and routes are commands that thread runs).
final class ReadAheadState: @unchecked Sendable {
    enum Taken {
        case video(Packet)
        case track(Packet)
        case end
    }

    private struct Entry {
        let packet: Packet
        let isVideo: Bool
        let size: Int
    }

    /// A change of the demuxer asked by the reader, carried out by the filling thread.
    private final class Command {
        let body: (Demuxer) throws -> Void
        /// Whether what is held goes with it (a seek: the packets after it come from elsewhere).
        let clearing: Bool
        var done = false
        var error: (any Error)?
        init(body: @escaping (Demuxer) throws -> Void, clearing: Bool) {
            self.body = body
            self.clearing = clearing
        }
    }

    let options: ReadAheadOptions
    let timeBase: Rational

    private let condition = NSCondition()
    /// Entries from `head` on are held; the ones before it were taken (nil, compacted now and then).
    private var entries: [Entry?] = []
    private var head = 0
    private var bytes = 0
    private var videoPackets = 0
    /// The decoding time (else presentation time) and duration of the newest video packet held.
    private var newestTime: Int64?
    private var newestDuration: Int64 = 0
    private var ended = false
    private var failure: (any Error)?
    private var closed = false
    private var commands: [Command] = []
    /// Bytes read since `windowStart` (the input's rate), and the rate of the last full window.
    private var windowStart = ClockTime.zero
    private var windowBytes = 0
    private var lastRate: Double?
    /// Bytes read since the last clear, and the media time they span (the media's own rate).
    private var bytesSinceClear = 0
    private var firstTimeSinceClear: Int64?
    private var adaptive: AdaptiveReading?
    private var waitCount = 0
    private var waited = Duration.zero

    init(options: ReadAheadOptions, timeBase: Rational) {
        self.options = options
        self.timeBase = timeBase
    }

    // MARK: The filling thread

    /// Starts the thread that reads `demuxer` from now on.
    func start(demuxer: Demuxer) {
        let handOff = ReadAheadHandOff(demuxer: demuxer)
        // An adaptive stream's choice of variant weighs what is held here (asked from inside the
        // filling thread's reads, without the lock held there).
        demuxer.bufferedSeconds = { [weak self] in self?.condition.withLock { self?.heldSeconds } ?? 0 }
        condition.withLock {
            windowStart = ClockTime.now()
            adaptive = demuxer.adaptiveReading
        }
        Thread(named: "scanout-readahead") { [self] in fill(handOff.demuxer) }.start()
    }

    private func fill(_ demuxer: Demuxer) {
        let packet = Packet()
        while true {
            condition.lock()
            while !closed, commands.isEmpty, isFull || ended || failure != nil { condition.wait() }
            if closed {
                condition.unlock()
                return
            }
            if !commands.isEmpty {
                let command = commands.removeFirst()
                condition.unlock()
                do { try command.body(demuxer) } catch { command.error = error }
                condition.withLock {
                    if command.clearing { clear() }
                    command.done = true
                    condition.broadcast()
                }
                continue
            }
            condition.unlock()
            do {
                if try demuxer.read(into: packet) {
                    append(video: packet.clone(), adaptive: demuxer.adaptiveReading)
                } else {
                    finish(nil)
                }
            } catch {
                finish(error)
            }
        }
    }

    private var isFull: Bool { heldSeconds >= options.seconds || bytes >= options.maxBytes }

    private var heldSeconds: Double {
        guard videoPackets > 0, let newest = newestTime,
              let oldest = entries[head...].lazy.compactMap({ $0 }).first(where: \.isVideo).flatMap({ $0.packet.dts ?? $0.packet.pts })
        else { return 0 }
        return Double(newest - oldest + newestDuration) * timeBase.doubleValue
    }

    private func append(video packet: Packet, adaptive reading: AdaptiveReading?) {
        condition.withLock {
            if let reading { adaptive = reading }
            store(Entry(packet: packet, isVideo: true, size: packet.size))
            videoPackets += 1
            if let t = packet.dts ?? packet.pts {
                newestTime = max(newestTime ?? t, t)
                newestDuration = packet.duration
                firstTimeSinceClear = firstTimeSinceClear ?? t
            }
        }
    }

    /// Holds a packet of a routed track (called inside the demuxer's read, on the filling thread).
    func append(track packet: Packet) {
        condition.withLock { store(Entry(packet: packet, isVideo: false, size: packet.size)) }
    }

    /// Under `condition`.
    private func store(_ entry: Entry) {
        entries.append(entry)
        bytes += entry.size
        bytesSinceClear += entry.size
        windowBytes += entry.size
        let now = ClockTime.now()
        if now - windowStart >= .seconds(1) {
            lastRate = Double(windowBytes) / (now - windowStart).secondsValue
            windowStart = now
            windowBytes = 0
        }
        condition.broadcast()
    }

    private func finish(_ error: (any Error)?) {
        condition.withLock {
            if let error { failure = error } else { ended = true }
            condition.broadcast()
        }
    }

    /// Drops what is held (under `condition`, on the filling thread, after a seek).
    private func clear() {
        entries.removeAll()
        head = 0
        bytes = 0
        videoPackets = 0
        newestTime = nil
        newestDuration = 0
        ended = false
        failure = nil
        bytesSinceClear = 0
        firstTimeSinceClear = nil
    }

    // MARK: The reader

    /// The next packet held, waiting for one while none is (and calling `onStall` once, without
    /// the lock, when the wait passes `stallAfter`; zero: never).
    func take(stallAfter: Duration, onStall: ((Double) -> Void)?) throws -> Taken {
        condition.lock()
        defer { condition.unlock() }
        var waitingSince: ClockTime?
        var reported = false
        while true {
            if head < entries.count, let e = entries[head] {
                entries[head] = nil
                head += 1
                bytes -= e.size
                if e.isVideo { videoPackets -= 1 }
                if head > 256, head * 2 > entries.count {
                    entries.removeFirst(head)
                    head = 0
                }
                if let since = waitingSince {
                    waitCount += 1
                    waited += ClockTime.now() - since
                }
                condition.broadcast()
                return e.isVideo ? .video(e.packet) : .track(e.packet)
            }
            if let failure { throw failure }
            if ended { return .end }
            let now = ClockTime.now()
            let since = waitingSince ?? now
            waitingSince = since
            if stallAfter > .zero, !reported, now - since >= stallAfter, let onStall {
                reported = true
                condition.unlock()
                onStall((now - since).secondsValue)
                condition.lock()
                continue
            }
            condition.wait(until: Date(timeIntervalSinceNow: 0.1))
        }
    }

    /// Has the filling thread run `body` between two reads and waits for it; with `clearing`
    /// what was held is dropped in the same turn, so that no packet read before it is taken after.
    func perform(clearing: Bool, _ body: @escaping (Demuxer) throws -> Void) throws {
        let command = Command(body: body, clearing: clearing)
        condition.lock()
        commands.append(command)
        condition.broadcast()
        while !command.done { condition.wait() }
        condition.unlock()
        if let e = command.error { throw e }
    }

    func level() -> BufferLevel {
        condition.withLock {
            var l = BufferLevel()
            l.seconds = heldSeconds
            l.bytes = bytes
            l.packets = videoPackets
            l.ended = ended || failure != nil
            l.full = isFull
            let elapsed = (ClockTime.now() - windowStart).secondsValue
            l.inputBytesPerSecond = elapsed >= 1 ? Double(windowBytes) / elapsed : lastRate
            if let first = firstTimeSinceClear, let newest = newestTime, newest > first {
                l.mediaBytesPerSecond = Double(bytesSinceClear) / (Double(newest - first) * timeBase.doubleValue)
            }
            return l
        }
    }

    func adaptiveReading() -> AdaptiveReading? { condition.withLock { adaptive } }

    func waitTotals() -> (count: Int, time: Duration) { condition.withLock { (waitCount, waited) } }

    func waitForData(within span: Duration) {
        condition.withLock {
            if !ended, failure == nil, !isFull {
                // NSCondition takes a `Date`; the wait is relative, so the wall clock's steps do not matter.
                _ = condition.wait(until: Date(timeIntervalSinceNow: span.secondsValue))
            }
        }
    }

    func close() {
        condition.withLock {
            closed = true
            condition.broadcast()
        }
    }
}

/// The demuxer crossing to the filling thread. `@unchecked Sendable`: after the hand-off only
/// that thread reads, seeks and routes the demuxer; the reader keeps what was fixed at open.
private final class ReadAheadHandOff: @unchecked Sendable {
    let demuxer: Demuxer
    init(demuxer: Demuxer) { self.demuxer = demuxer }
}
