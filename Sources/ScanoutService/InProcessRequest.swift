import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Synchronization

/// A request made inside the service (a command that came through the fleet's broker), answered
/// by the same router as HTTP, middlewares included: every route, its checks and its refusals,
/// and nothing else. It counts as a local client (the broker's own authentication and access
/// rules are what admit a command).
struct InProcessRequests: Sendable {
    private let responder: RouterResponder<ServiceRequestContext>
    private let logger: Logger

    init(router: Router<ServiceRequestContext>, logger: Logger) {
        responder = router.buildResponder()
        self.logger = logger
    }

    struct Answer: Sendable {
        var status: Int
        var contentType: String?
        var body: [UInt8]
    }

    /// `method path` with `body` (JSON), answered.
    func send(_ method: HTTPRequest.Method, _ path: String, body: [UInt8]) async -> Answer {
        var head = HTTPRequest(method: method, scheme: nil, authority: nil, path: path)
        if !body.isEmpty {
            head.headerFields[.contentType] = "application/json"
            head.headerFields[.contentLength] = String(body.count)
        }
        let request = Request(head: head, body: Hummingbird.RequestBody(buffer: ByteBuffer(bytes: body)))
        let context = ServiceRequestContext(inProcess: logger)
        let response: Response
        do {
            response = try await responder.respond(to: request, context: context)
        } catch let error as any HTTPResponseError {
            guard let r = try? error.response(from: request, context: context) else {
                return Answer(status: Int(error.status.code), contentType: nil, body: [])
            }
            response = r
        } catch {
            return Answer(status: 500, contentType: "application/json",
                          body: Array(WireJSON.data(Wire.Refusal(error: "internal: \(error)", field: nil))))
        }
        let collector = Collector()
        do {
            try await response.body.write(collector)
        } catch {
            logger.warning("mqtt: the answer to \(method) \(path) was cut short: \(error)")
        }
        return Answer(status: Int(response.status.code), contentType: response.headers[.contentType], body: collector.bytes)
    }

    /// Gathers a response's body.
    private struct Collector: ResponseBodyWriter {
        final class Bytes: Sendable { let value = Mutex<[UInt8]>([]) }
        let store = Bytes()
        var bytes: [UInt8] { store.value.withLock { $0 } }
        mutating func write(_ buffer: ByteBuffer) async throws { store.value.withLock { $0 += buffer.readableBytesView } }
        consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
    }
}

extension ServiceRequestContext {
    /// A request with no connection behind it (`InProcessRequests`).
    init(inProcess logger: Logger) {
        struct Source: RequestContextSource { let logger: Logger }
        coreContext = CoreRequestContextStorage(source: Source(logger: logger))
        remoteAddress = nil
        localAddress = nil
    }
}
