import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ScanoutPlayer

extension ControlAPI {
    /// `GET /events`: the event stream (Server-Sent Events), resumable with `Last-Event-ID`.
    func eventRoutes() -> RouteCollection<ServiceRequestContext> {
        let routes = RouteCollection(context: ServiceRequestContext.self)
        routes.get("/events") { [self] request, _ in events(lastEventID: request.headers[HTTPField.Name("Last-Event-ID")!]) }
        return routes
    }

    /// The event stream. It opens with `retry:` (how long a client waits before reconnecting)
    /// and then, for a new client, a `state` message whose id is the sequence number of the newest
    /// event (the state includes it); for a client that reconnects with `Last-Event-ID`, the events
    /// it missed from the hub's ring, or, when the ring no longer holds them (or the id is not
    /// this process's), a `gap` message naming the range lost followed by the `state`. Then every
    /// event as it happens, with a comment line every `keepAlive` so that proxies keep it open.
    func events(lastEventID: String?) -> Response {
        let after = lastEventID.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }.map { max(0, $0) }
        let resumed = player.events.subscribe(after: after)
        var opening = "retry: \(Self.retryMilliseconds)\n: scanout event stream\n\n"
        if let gap = resumed.gap {
            let reason = gap.upperBound > resumed.sequence ? "the event ids restarted (the service was restarted)"
                : "the events are no longer kept (the newest \(player.events.replayCapacity) are)"
            opening += Wire.sse(name: "gap", id: nil, Wire.Gap(from: gap.lowerBound, to: gap.upperBound, missed: gap.count, reason: reason))
        }
        if after == nil || resumed.gap != nil {
            opening += Wire.sse(name: "state", id: resumed.sequence, Wire.State(player.snapshot))
        } else {
            for n in resumed.replay { opening += Wire.sse(name: n.event.name, id: n.sequence, Wire.Event(n)) }
        }
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream"
        headers[.cacheControl] = "no-cache"
        let keepAlive = self.keepAlive
        let encoded = sseMessages
        let stream = resumed.stream
        let first = opening
        return Response(status: .ok, headers: headers, body: ResponseBody { writer in
            try await writer.write(ByteBuffer(string: first))
            // Events and keep-alive ticks merged in order; what queued up is written at once.
            let outbox = SSEOutbox()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await n in stream { outbox.post(encoded.message(for: n)) }
                    outbox.finish()
                }
                group.addTask {
                    while !Task.isCancelled {
                        try await Task.sleep(for: keepAlive)
                        outbox.post(": keep-alive\n\n")
                    }
                }
                try await outbox.drain { try await writer.write(ByteBuffer(string: $0)) }
                group.cancelAll()
            }
            try await writer.finish(nil)
        })
    }

    /// What `retry:` tells clients: wait this long before reconnecting.
    static let retryMilliseconds = 2000
}
