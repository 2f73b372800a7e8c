import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore

/// Hummingbird's HTTP/1 child channel with the service's guards in every connection's pipeline:
/// `ConnectionGate` first (the connection bound, ahead of the HTTP decoder), then after the codec
/// `HostFieldsKept` (every `Host` field in sight of `RequestGuard`) and `ConnectionTimeouts`
/// (header and idle timeouts).
struct GuardedHTTP1Channel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value
    let http: HTTP1Channel
    let budget: ConnectionBudget

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        do {
            try channel.pipeline.syncOperations.addHandler(ConnectionGate(budget: budget))
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        return http.setup(channel: channel, logger: logger)
    }

    func handle(value: Value, logger: Logger) async {
        await http.handle(value: value, logger: logger)
    }
}

extension HTTPServerBuilder {
    /// HTTP/1 with the connection bound of `budget` and the timeouts of `limits`.
    static func guarded(budget: ConnectionBudget, limits: ServiceLimits, logger: Logger) -> HTTPServerBuilder {
        let header = TimeAmount.nanoseconds(Int64(limits.headerTimeout * 1e9))
        let idle = TimeAmount.nanoseconds(Int64(limits.idleTimeout * 1e9))
        let configuration = HTTP1Channel.Configuration(additionalChannelHandlers: [
            HostFieldsKept(), ConnectionTimeouts(header: header, idle: idle, logger: logger),
        ])
        return HTTPServerBuilder { responder in
            GuardedHTTP1Channel(http: HTTP1Channel(responder: responder, configuration: configuration), budget: budget)
        }
    }
}
