import Foundation
import ScanoutPlayer
import Synchronization

/// What one event stream has yet to write: the messages posted since its writer last took them,
/// in order, taken as one piece. A burst of events (an item change sends half a dozen at once)
/// costs each stream one write instead of one per event: with two thousand streams open, the
/// writes one by one held the event loops for hundreds of milliseconds and `/health` waited.
/// Thread-safe: the stream's producers post, its writer takes.
final class SSEOutbox: Sendable {
    private struct State {
        var pending = ""
        var signalled = false
    }
    private let state = Mutex(State())
    private let signals: AsyncStream<Void>
    private let signal: AsyncStream<Void>.Continuation

    init() {
        (signals, signal) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// Adds a message; wakes the writer unless it was woken already.
    func post(_ text: String) {
        let wake = state.withLock { s -> Bool in
            s.pending += text
            defer { s.signalled = true }
            return !s.signalled
        }
        if wake { signal.yield(()) }
    }

    /// No more messages: `batches` ends once what was posted is taken.
    func finish() { signal.finish() }

    /// Everything posted since the last call, "" when nothing was.
    private func take() -> String {
        state.withLock { s in
            defer { s.pending = ""; s.signalled = false }
            return s.pending
        }
    }

    /// Calls `write` with each batch of messages as they come, until `finish()`.
    func drain(_ write: (String) async throws -> Void) async throws {
        for await _ in signals {
            let text = take()
            if !text.isEmpty { try await write(text) }
        }
        let rest = take()
        if !rest.isEmpty { try await write(rest) }
    }
}

/// Each event's SSE message, encoded once for every stream that sends it (the newest
/// `capacity` events are kept). Thread-safe.
final class SSEMessageCache: Sendable {
    private let capacity: Int
    private let messages = Mutex([Int: String]())

    init(capacity: Int = 256) {
        self.capacity = capacity
    }

    /// The `event:`/`id:`/`data:` block of `n`.
    func message(for n: EventHub.Numbered) -> String {
        if let text = messages.withLock({ $0[n.sequence] }) { return text }
        // Encoded outside the lock: streams that race here encode it again, and agree.
        let text = Wire.sse(name: n.event.name, id: n.sequence, Wire.Event(n))
        messages.withLock { m in
            m[n.sequence] = text
            if m.count > capacity * 2 {
                let oldest = n.sequence - capacity
                m = m.filter { $0.key > oldest }
            }
        }
        return text
    }
}
