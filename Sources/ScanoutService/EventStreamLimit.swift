import Foundation
import HTTPTypes
import Hummingbird
import Synchronization

/// Places for event streams open at once (`limits.eventStreams`), shared by every router made
/// (TCP and the Unix socket). Thread-safe.
final class StreamSlots: Sendable {
    let capacity: Int
    private let taken = Atomic<Int>(0)

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// A place, held until the returned slot is released or goes away; nil when all are taken.
    func take() -> StreamSlot? {
        guard taken.wrappingAdd(1, ordering: .relaxed).newValue <= capacity else {
            taken.wrappingSubtract(1, ordering: .relaxed)
            return nil
        }
        return StreamSlot(self)
    }

    var open: Int { taken.load(ordering: .relaxed) }

    fileprivate func give() { taken.wrappingSubtract(1, ordering: .relaxed) }
}

/// One stream's place: given back once, when its response body has been written (the stream
/// ended) or when the response is dropped without being written.
final class StreamSlot: Sendable {
    private let slots: StreamSlots
    private let held = Atomic<Bool>(true)
    fileprivate init(_ slots: StreamSlots) { self.slots = slots }
    func release() { if held.exchange(false, ordering: .relaxed) { slots.give() } }
    deinit { release() }
}

/// `GET /events` past `limits.eventStreams` streams open at once: 503 with `Retry-After`
/// (`field`: limits.eventStreams); the streams open go on. Runs after the request guard and the
/// token check, so that only a client allowed a stream learns of the bound.
struct EventStreamLimit: RouterMiddleware {
    typealias Context = ServiceRequestContext
    let slots: StreamSlots
    static let retryAfterSeconds = 5

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        // By its components, as the router matches it ("/events/" and "//events" are the same route).
        guard request.method == .get, request.uri.path.split(separator: "/") == ["events"] else { return try await next(request, context) }
        guard let slot = slots.take() else {
            var response = jsonResponse(Wire.Refusal(error: "eventStreams: \(slots.capacity) event streams are open, the most served at once (limits.eventStreams); retry in \(Self.retryAfterSeconds) s",
                                                     field: "limits.eventStreams"), status: .serviceUnavailable)
            response.headers[.retryAfter] = String(Self.retryAfterSeconds)
            return response
        }
        var response = try await next(request, context)
        let body = response.body
        response.body = ResponseBody(contentLength: body.contentLength) { writer in
            defer { slot.release() }
            try await body.write(writer)
        }
        return response
    }
}
