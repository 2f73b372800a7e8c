import Foundation
import ScanoutCore
import Logging
import NIOCore
import Synchronization

/// The connections open at once, over every listener of the service (TCP and the Unix socket),
/// against `limits.connections`. Past the bound the newest connections are refused, never the
/// ones already served, and never the player's own descriptors (`ServiceLimits.resolved`).
///
/// Thread-safe: the listeners' event loops call it concurrently.
final class ConnectionBudget: Sendable {
    /// Connections served at once.
    let capacity: Int
    private let open = Atomic<Int>(0)
    /// Connections past `capacity` held for a moment to read their request line (`/health` is
    /// answered, anything else 503): at most `ConnectionGate.overflowCapacity`.
    private let screening = Atomic<Int>(0)
    private let refusals = Atomic<Int>(0)
    private let lastReport = Mutex<ClockTime?>(nil)
    private let logger: Logger

    init(capacity: Int, logger: Logger) {
        self.capacity = max(1, capacity)
        self.logger = logger
    }

    enum Admission { case served, screened, closed }

    /// Takes a place for a new connection: served within the bound, screened past it while
    /// screening places are left, else closed at once.
    func admit() -> Admission {
        let n = open.wrappingAdd(1, ordering: .relaxed).newValue
        if n <= capacity { return .served }
        open.wrappingSubtract(1, ordering: .relaxed)
        if screening.wrappingAdd(1, ordering: .relaxed).newValue <= ConnectionGate.overflowCapacity { return .screened }
        screening.wrappingSubtract(1, ordering: .relaxed)
        refused()
        return .closed
    }

    func release(_ admission: Admission) {
        switch admission {
        case .served: open.wrappingSubtract(1, ordering: .relaxed)
        case .screened: screening.wrappingSubtract(1, ordering: .relaxed)
        case .closed: break
        }
    }

    var openCount: Int { open.load(ordering: .relaxed) }
    var refusedCount: Int { refusals.load(ordering: .relaxed) }

    /// Counts a refusal; says so in the log at most once every 10 s (a flood writes no flood of lines).
    func refused() {
        let total = refusals.wrappingAdd(1, ordering: .relaxed).newValue
        let now = ClockTime.now()
        let report = lastReport.withLock { last -> Bool in
            if let last, now - last < .seconds(10) { return false }
            last = now
            return true
        }
        if report {
            logger.warning("connections: \(capacity) are open, the most served at once (limits.connections); refusing new ones (\(total) refused so far)")
        }
    }
}

/// The first handler of every connection: takes its place in the `ConnectionBudget`, and past
/// the bound refuses it. A refused connection is read for up to `screeningTime` until its request
/// line is known: `GET /health` (or `HEAD`) is let through and the connection closed after the
/// answer, so that a monitor still hears whether the player plays; anything else gets a 503 with
/// `Retry-After` and is closed. Past `overflowCapacity` connections being screened, a new one is
/// closed unread. Also tells `ConnectionTimeouts`, further up, when request bytes arrive.
///
/// Runs on its channel's event loop only.
final class ConnectionGate: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// Connections screened at once past the bound.
    static let overflowCapacity = 32
    /// The longest a refused connection is read for its request line.
    static let screeningTime = TimeAmount.seconds(2)
    /// The most bytes read of a refused connection's request.
    static let screeningBytes = 4096
    /// Seconds a refused client is told to wait.
    static let retryAfterSeconds = 5

    private let budget: ConnectionBudget
    private var admission: ConnectionBudget.Admission?
    private enum Mode { case serving, screening(ByteBuffer), refused }
    private var mode = Mode.serving
    private var screeningTimer: Scheduled<Void>?

    init(budget: ConnectionBudget) {
        self.budget = budget
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { admit(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        admit(context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        leave()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        leave()
    }

    private func admit(_ context: ChannelHandlerContext) {
        guard admission == nil else { return }
        let a = budget.admit()
        admission = a
        switch a {
        case .served: break
        case .screened:
            mode = .screening(context.channel.allocator.buffer(capacity: 256))
            let loop = context.eventLoop.assumeIsolated()
            screeningTimer = loop.scheduleTask(in: Self.screeningTime) { [self] in refuse(context) }
        case .closed:
            mode = .refused
            context.close(promise: nil)
        }
    }

    private func leave() {
        screeningTimer?.cancel()
        screeningTimer = nil
        if let admission { budget.release(admission) }
        admission = .closed
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch mode {
        case .serving:
            context.fireUserInboundEventTriggered(RequestBytesArrived())
            context.fireChannelRead(data)
        case .refused:
            break
        case .screening(var held):
            var bytes = unwrapInboundIn(data)
            held.writeBuffer(&bytes)
            mode = .screening(held)
            screen(context, held)
        }
    }

    /// Decides on a screened connection once its request line is in (or too much came without one).
    private func screen(_ context: ChannelHandlerContext, _ held: ByteBuffer) {
        let view = held.readableBytesView
        guard let end = view.firstIndex(of: UInt8(ascii: "\n")) else {
            if held.readableBytes >= Self.screeningBytes { refuse(context) }
            return
        }
        let line = String(decoding: view[view.startIndex..<end], as: UTF8.self)
        guard Self.isHealthCheck(line) else { return refuse(context) }
        screeningTimer?.cancel()
        screeningTimer = nil
        mode = .serving
        context.fireUserInboundEventTriggered(CloseAfterResponse())
        context.fireUserInboundEventTriggered(RequestBytesArrived())
        context.fireChannelRead(wrapInboundOut(held))
    }

    /// `GET /health` or `HEAD /health` (a query allowed), in any HTTP/1 version.
    static func isHealthCheck(_ requestLine: String) -> Bool {
        let parts = requestLine.split(separator: " ")
        guard parts.count == 3, parts[0] == "GET" || parts[0] == "HEAD" else { return false }
        return parts[1] == "/health" || parts[1].hasPrefix("/health?")
    }

    /// Answers 503 with `Retry-After` and closes once it is written.
    private func refuse(_ context: ChannelHandlerContext) {
        guard case .screening = mode else { return }
        mode = .refused
        screeningTimer?.cancel()
        screeningTimer = nil
        budget.refused()
        let body = #"{"error":"connections: \#(budget.capacity) are open, the most served at once (limits.connections); retry in \#(Self.retryAfterSeconds) s","field":"limits.connections"}"#
        let head = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n"
            + "Retry-After: \(Self.retryAfterSeconds)\r\nConnection: close\r\n\r\n"
        let bytes = context.channel.allocator.buffer(string: head + body)
        context.writeAndFlush(wrapOutboundOut(bytes)).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }
}

/// Request bytes reached the connection (`ConnectionGate` → `ConnectionTimeouts`).
struct RequestBytesArrived {}
/// The connection was let past the bound for one answer (`ConnectionGate` → `ConnectionTimeouts`).
struct CloseAfterResponse {}

@available(*, unavailable)
extension ConnectionGate: Sendable {}
