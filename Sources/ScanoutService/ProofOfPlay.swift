import Foundation
import Logging
import ScanoutCore
import ScanoutOffline
import ScanoutPlayer
import Synchronization

/// Proof of play: every play of an item (per zone on a screen of zones) recorded in the offline
/// store as it starts, every 10 s while it plays and when it ends, so that a restart, even a
/// SIGKILL, loses at most the last 10 s of one: what played, from when to when, the seconds it
/// was on screen (paused time left out), how it ended, its frames. Kept `days` days. Without a
/// state directory the records are kept in memory (the newest 10,000), and say so. With a
/// fleet's broker (`forward`), each play that ends is queued for it with its record, in the same
/// transaction; a play a crash cut off is closed and queued at the next start.
public final class ProofOfPlay: Sendable {
    /// Where ended plays go on to, and as what message.
    struct Forwarding: Sendable {
        let queue: FleetQueue
        let message: @Sendable (PlayRecord) -> OutboxMessage.Draft
    }

    struct Open: Sendable {
        var record: PlayRecord
        var framesShownBefore: Int
        var framesDroppedBefore: Int
        /// Since when it plays (nil: paused), and the seconds shown before.
        var playingSince: Date?
        var shown: Double
        var censored = false
        var lastWrite: Date
    }

    private let open = Mutex<[String: Open]>([:])
    private let memory = Mutex<[PlayRecord]>([])
    private let lastPrune = Mutex<Date?>(nil)
    let store: OfflineStore?
    let days: Int
    private let now: @Sendable () -> Date
    private let logger: Logger
    let forwarding: Forwarding?

    init(store: OfflineStore?, days: Int, logger: Logger, forwarding: Forwarding? = nil, now: @escaping @Sendable () -> Date = { Date() }) {
        self.store = store
        self.days = days
        self.logger = logger
        self.forwarding = forwarding
        self.now = now
    }

    /// Closes the plays a crash left open (as recorded last, at most 10 s short), and queues them.
    func closeInterrupted() {
        guard let store else { return }
        do {
            for r in try store.openPlays() { write(r, closed: true) }
        } catch {
            logger.error("proof of play: \(error)")
        }
    }

    /// Takes an event of zone `zone`'s player (nil: the main picture) whose figures are `s`.
    func observe(_ event: PlayerEvent, zone: String?, snapshot s: PlayerSnapshot) {
        let key = zone ?? ""
        let t = now()
        switch event {
        case .firstFrame(let item, let source, let sinceRequest, _):
            // A gapless transition follows an item played to its end; a command left the last one.
            // The figures already count this item's first frame.
            var before = s
            before.framesPresented = max(0, s.framesPresented - 1)
            close(key, outcome: sinceRequest == nil ? .completed : .skipped, at: t, snapshot: before)
            let record = PlayRecord(item: item, source: URLRedaction.redact(source), zone: zone, start: t.timeIntervalSince1970,
                                    end: t.timeIntervalSince1970, seconds: 0, outcome: .skipped, framesShown: 1, framesDropped: 0)
            let o = Open(record: record, framesShownBefore: max(0, s.framesPresented - 1), framesDroppedBefore: s.framesDropped,
                         playingSince: t, shown: 0, lastWrite: t)
            open.withLock { $0[key] = o }
            write(o.record, closed: false)
        case .ended, .stop:
            close(key, outcome: event == .ended ? .completed : .skipped, at: t, snapshot: s)
        case .error(_, .some, true):
            close(key, outcome: .failed, at: t, snapshot: s)
        case .outputCensored(_, .some):
            open.withLock { $0[key]?.censored = true }
        case .stateChanged(_, let to):
            open.withLock { all in
                guard var o = all[key] else { return }
                if to == .playing { o.playingSince = o.playingSince ?? t } else if let since = o.playingSince {
                    o.shown += t.timeIntervalSince(since)
                    o.playingSince = nil
                }
                all[key] = o
            }
        case .position:
            // Kept up to date every 10 s while it plays.
            let due: PlayRecord? = open.withLock { all in
                guard var o = all[key], t.timeIntervalSince(o.lastWrite) >= 10 else { return nil }
                o.lastWrite = t
                all[key] = o
                return Self.finished(o, outcome: .skipped, at: t, snapshot: s)
            }
            if let due { write(due, closed: false) }
        default:
            break
        }
    }

    /// The record of `o` as of `t`.
    static func finished(_ o: Open, outcome: PlayRecord.Outcome, at t: Date, snapshot s: PlayerSnapshot) -> PlayRecord {
        var r = o.record
        r.end = t.timeIntervalSince1970
        r.seconds = o.shown + (o.playingSince.map { t.timeIntervalSince($0) } ?? 0)
        r.outcome = o.censored ? .censored : outcome
        r.framesShown = max(0, s.framesPresented - o.framesShownBefore)
        r.framesDropped = max(0, s.framesDropped - o.framesDroppedBefore)
        return r
    }

    private func close(_ key: String, outcome: PlayRecord.Outcome, at t: Date, snapshot s: PlayerSnapshot) {
        guard let o = open.withLock({ $0.removeValue(forKey: key) }) else { return }
        write(Self.finished(o, outcome: outcome, at: t, snapshot: s), closed: true)
    }

    /// Writes `r`; an ended play (`closed`) goes on to the fleet's queue with it.
    private func write(_ r: PlayRecord, closed: Bool) {
        let forward = closed ? forwarding.map { $0.message(r) } : nil
        guard let store else {
            memory.withLock { m in
                if let i = m.lastIndex(where: { $0.id == r.id }) { m[i] = r } else { m.append(r) }
                if m.count > 10_000 { m.removeFirst(m.count - 10_000) }
            }
            if let forward { forwarding?.queue.enqueue(forward) }
            return
        }
        do {
            try store.record(r, closed: closed, forward: forward)
            if forward != nil { forwarding?.queue.stored() }
            prune()
        } catch {
            logger.error("proof of play: \(error)")
        }
    }

    /// Drops the plays older than `days`, at most once an hour.
    private func prune() {
        let t = now()
        let due = lastPrune.withLock { last in
            guard last.map({ t.timeIntervalSince($0) >= 3600 }) ?? true else { return false }
            last = t
            return true
        }
        if due, let store { _ = try? store.prunePlays(before: t.timeIntervalSince1970 - Double(days) * 86_400) }
    }

    /// The plays that started from `from` to `to` (seconds since 1970), oldest first.
    func plays(from: Double?, to: Double?) throws -> [PlayRecord] {
        if let store { return try store.plays(from: from, to: to) }
        return memory.withLock { $0 }.filter { r in from.map { r.start >= $0 } ?? true && to.map { r.start < $0 } ?? true }
    }
}
