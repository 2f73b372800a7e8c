import Foundation
import Logging
import ScanoutOffline
import Synchronization

/// The messages waiting for the fleet's broker (proof of play, stats): in the offline store's
/// outbox, where they outlive a broker that is away and a restart; without a state directory, in
/// memory (the newest 10,000, lost at a restart, as the log says at start).
final class FleetQueue: Sendable {
    let store: OfflineStore?
    private let memory = Mutex<(next: Int64, items: [OutboxMessage])>((1, []))
    private let logger: Logger
    /// Called when a message was queued (the link wakes its sender).
    private let wake = Mutex<(@Sendable () -> Void)?>(nil)
    static let memoryCapacity = 10_000

    init(store: OfflineStore?, logger: Logger) {
        self.store = store
        self.logger = logger
    }

    func onQueued(_ body: @escaping @Sendable () -> Void) { wake.withLock { $0 = body } }

    /// Queues `draft`.
    func enqueue(_ draft: OutboxMessage.Draft) {
        if let store {
            do {
                let dropped = try store.enqueue(draft)
                if dropped > 0 { logger.warning("mqtt: the outbox is full; the \(dropped) oldest messages were dropped") }
            } catch {
                logger.error("mqtt: \(error); the message is lost")
                return
            }
        } else {
            memory.withLock { m in
                m.items.append(OutboxMessage(seq: m.next, topic: draft.topic, payload: draft.payload, created: draft.created))
                m.next += 1
                if m.items.count > Self.memoryCapacity { m.items.removeFirst(m.items.count - Self.memoryCapacity) }
            }
        }
        stored()
    }

    /// A message was put in the store by someone else (with a play's record, in its transaction).
    func stored() { wake.withLock { $0 }?() }

    /// The oldest messages after `seq`.
    func pending(after seq: Int64, limit: Int) -> [OutboxMessage] {
        guard let store else { return memory.withLock { m in Array(m.items.lazy.filter { $0.seq > seq }.prefix(limit)) } }
        do {
            return try store.outbox(after: seq, limit: limit)
        } catch {
            logger.error("mqtt: \(error)")
            return []
        }
    }

    /// The broker has message `seq`.
    func remove(_ seq: Int64) {
        guard let store else {
            memory.withLock { m in m.items.removeAll { $0.seq == seq } }
            return
        }
        do { try store.removeFromOutbox(seq) } catch { logger.error("mqtt: \(error)") }
    }

    var count: Int {
        guard let store else { return memory.withLock { $0.items.count } }
        return (try? store.outboxCount()) ?? 0
    }
}
