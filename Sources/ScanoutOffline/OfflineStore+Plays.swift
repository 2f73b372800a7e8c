import Foundation
import GRDB

/// One play of an item, as proof of play records it: what played (playlist position, source,
/// zone), from when to when (seconds since 1970), how long it was on screen, how it ended, and
/// its frames. `id` is made when the play starts, so that a receiver can drop a record it had.
public struct PlayRecord: Codable, FetchableRecord, PersistableRecord, Sendable, Equatable {
    public static let databaseTableName = "play"

    /// How a play ended.
    public enum Outcome: String, Codable, Sendable, CaseIterable {
        /// Played to its end.
        case completed
        /// Left before its end (a command, another item, a schedule, a stop).
        case skipped
        /// Failed mid-way (a read or decode failure).
        case failed
        /// Shown censored by its content policy on an output at some time.
        case censored
    }

    public var id: String
    public var item: Int
    public var source: String
    public var zone: String?
    public var start: Double
    public var end: Double
    public var seconds: Double
    public var outcome: Outcome
    public var framesShown: Int
    public var framesDropped: Int

    public init(id: String = UUID().uuidString.lowercased(), item: Int, source: String, zone: String? = nil, start: Double, end: Double,
                seconds: Double, outcome: Outcome, framesShown: Int, framesDropped: Int) {
        self.id = id; self.item = item; self.source = source; self.zone = zone; self.start = start; self.end = end
        self.seconds = seconds; self.outcome = outcome; self.framesShown = framesShown; self.framesDropped = framesDropped
    }
}

extension OfflineStore {
    /// Writes `play`, in place of the record with its id when there is one (a play recorded as it
    /// starts, and again as it goes on and ends). A play that ends (`closed`) may take a message
    /// for the fleet's broker with it, in the same transaction: it is in the outbox if and only
    /// if the record is written.
    public func record(_ play: PlayRecord, closed: Bool = true, forward: OutboxMessage.Draft? = nil) throws(OfflineError) {
        do {
            try db.write { db in
                try play.insert(db, onConflict: .replace)
                try db.execute(sql: "UPDATE play SET closed = ? WHERE id = ?", arguments: [closed, play.id])
                if let forward { try forward.insert(db) }
            }
        } catch {
            throw .store("recording a play: \(error)")
        }
    }

    /// The plays recorded as going on: at a start, those a crash cut off.
    public func openPlays() throws(OfflineError) -> [PlayRecord] {
        do {
            return try db.read { db in try PlayRecord.filter(sql: "closed = 0").order(Column("start")).fetchAll(db) }
        } catch {
            throw .store("reading open plays: \(error)")
        }
    }

    /// The plays that started from `from` (inclusive) to `to` (exclusive), oldest first.
    public func plays(from: Double? = nil, to: Double? = nil, limit: Int = 100_000) throws(OfflineError) -> [PlayRecord] {
        do {
            return try db.read { db in
                var q = PlayRecord.all()
                if let from { q = q.filter(Column("start") >= from) }
                if let to { q = q.filter(Column("start") < to) }
                return try q.order(Column("start"), Column("id")).limit(limit).fetchAll(db)
            }
        } catch {
            throw .store("reading plays: \(error)")
        }
    }

    /// Removes the plays that started before `before`; returns how many.
    @discardableResult
    public func prunePlays(before: Double) throws(OfflineError) -> Int {
        do {
            return try db.write { db in try PlayRecord.filter(Column("start") < before).deleteAll(db) }
        } catch {
            throw .store("pruning plays: \(error)")
        }
    }
}
