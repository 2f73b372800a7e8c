import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOHTTPTypes

/// Closes a connection that holds a descriptor without using it:
///
/// - **header timeout**: a request head not complete within `header` of the connection's start,
///   or of the first byte of a request after an idle time (a client sending its head a byte at a
///   time, slowloris, is closed however steadily it sends);
/// - **idle timeout**: no request in flight for `idle` (after the last answer, or between two
///   parts of a request body). A response being written, an event stream among them, is never
///   idle: its end starts the count.
///
/// Sits after the HTTP codec, so it sees request and response parts; `ConnectionGate` at the
/// front of the pipeline tells it when bytes arrive. Runs on its channel's event loop only.
final class ConnectionTimeouts: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let header: TimeAmount
    private let idle: TimeAmount
    private let logger: Logger

    private enum Wait: String { case head = "a request head", body = "the request body", idle = "a request" }
    /// What the connection waits for, and until when; nil: for an answer (no deadline).
    private var waiting: (what: Wait, until: NIODeadline)?
    /// Requests whose head was read and whose answer has not ended.
    private var inFlight = 0
    private var readingBody = false
    private var closeAfterResponse = false
    private var timer: (at: NIODeadline, task: Scheduled<Void>)?

    init(header: TimeAmount, idle: TimeAmount, logger: Logger) {
        self.header = header
        self.idle = idle
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { wait(.head, header, context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        if waiting == nil, inFlight == 0 { wait(.head, header, context) }
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.task.cancel()
        timer = nil
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case is RequestBytesArrived:
            // The first byte of the next request: its head is due within `header`, counted from
            // now, and not pushed back by the bytes that follow.
            if inFlight == 0, waiting?.what == .idle { wait(.head, header, context) }
        case is CloseAfterResponse:
            closeAfterResponse = true
        default:
            context.fireUserInboundEventTriggered(event)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            inFlight += 1
            readingBody = true
            wait(.body, idle, context)
        case .body:
            wait(.body, idle, context)
        case .end:
            readingBody = false
            waiting = nil
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .end = unwrapOutboundIn(data) else { return context.write(data, promise: promise) }
        inFlight = max(0, inFlight - 1)
        if closeAfterResponse, inFlight == 0 {
            context.writeAndFlush(data, promise: promise)
            context.close(promise: nil)
            return
        }
        if inFlight == 0, !readingBody { wait(.idle, idle, context) }
        context.write(data, promise: promise)
    }

    private func wait(_ what: Wait, _ limit: TimeAmount, _ context: ChannelHandlerContext) {
        let until = NIODeadline.now() + limit
        waiting = (what, until)
        if let timer, timer.at <= until { return }
        timer?.task.cancel()
        schedule(until, context)
    }

    private func schedule(_ at: NIODeadline, _ context: ChannelHandlerContext) {
        let task = context.eventLoop.assumeIsolated().scheduleTask(deadline: at) { [self] in expired(context) }
        timer = (at, task)
    }

    /// The timer rang: closes the connection when what it waits for is overdue, else waits on.
    private func expired(_ context: ChannelHandlerContext) {
        timer = nil
        guard let waiting else { return }
        guard waiting.until <= .now() else { return schedule(waiting.until, context) }
        let peer = context.channel.remoteAddress.map { "\($0)" } ?? "a client"
        let limit = waiting.what == .head ? "limits.headerTimeout" : "limits.idleTimeout"
        logger.debug("connection from \(peer) closed: no \(waiting.what.rawValue) in time (\(limit))")
        self.waiting = nil
        context.close(promise: nil)
    }
}

@available(*, unavailable)
extension ConnectionTimeouts: Sendable {}
