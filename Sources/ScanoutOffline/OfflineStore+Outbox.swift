import Foundation
import GRDB

/// A message waiting in the store for the fleet's broker: written before it is sent, removed
/// once the broker has acknowledged it, so that neither a broker away for hours nor a restart
/// of the box loses it (the receiver drops the duplicates a resend after a crash makes, by the
/// id in the payload).
public struct OutboxMessage: Sendable, Equatable {
    public var seq: Int64
    public var topic: String
    public var payload: [UInt8]
    public var created: Double

    public init(seq: Int64, topic: String, payload: [UInt8], created: Double) {
        self.seq = seq; self.topic = topic; self.payload = payload; self.created = created
    }

    /// A message not yet in the store.
    public struct Draft: Sendable, Equatable {
        public var topic: String
        public var payload: [UInt8]
        public var created: Double

        public init(topic: String, payload: [UInt8], created: Double = Date().timeIntervalSince1970) {
            self.topic = topic; self.payload = payload; self.created = created
        }

        func insert(_ db: Database) throws {
            try db.execute(sql: "INSERT INTO outbox (topic, payload, created) VALUES (?, ?, ?)", arguments: [topic, Data(payload), created])
        }
    }
}

extension OfflineStore {
    /// Puts `message` at the end of the outbox; then keeps only the newest `capacity` (a broker
    /// away for weeks costs the oldest, not the disk). Returns how many were dropped.
    @discardableResult
    public func enqueue(_ message: OutboxMessage.Draft, capacity: Int = 100_000) throws(OfflineError) -> Int {
        do {
            return try db.write { db in
                try message.insert(db)
                let count = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM outbox") ?? 0
                guard count > capacity else { return 0 }
                try db.execute(sql: "DELETE FROM outbox WHERE seq IN (SELECT seq FROM outbox ORDER BY seq LIMIT ?)", arguments: [count - capacity])
                return count - capacity
            }
        } catch {
            throw .store("queueing a message for the broker: \(error)")
        }
    }

    /// The oldest messages after `seq`, at most `limit`.
    public func outbox(after seq: Int64 = 0, limit: Int = 100) throws(OfflineError) -> [OutboxMessage] {
        do {
            return try db.read { db in
                try Row.fetchAll(db, sql: "SELECT seq, topic, payload, created FROM outbox WHERE seq > ? ORDER BY seq LIMIT ?", arguments: [seq, limit])
                    .map { OutboxMessage(seq: $0["seq"], topic: $0["topic"], payload: [UInt8]($0["payload"] as Data), created: $0["created"]) }
            }
        } catch {
            throw .store("reading the outbox: \(error)")
        }
    }

    /// Removes the message the broker acknowledged.
    public func removeFromOutbox(_ seq: Int64) throws(OfflineError) {
        do {
            try db.write { db in try db.execute(sql: "DELETE FROM outbox WHERE seq = ?", arguments: [seq]) }
        } catch {
            throw .store("removing message \(seq) from the outbox: \(error)")
        }
    }

    /// How many messages wait.
    public func outboxCount() throws(OfflineError) -> Int {
        do {
            return try db.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM outbox") ?? 0 }
        } catch {
            throw .store("counting the outbox: \(error)")
        }
    }
}
