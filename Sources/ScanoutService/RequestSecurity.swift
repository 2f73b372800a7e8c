import Foundation
import ScanoutCore
import HTTPTypes
import Hummingbird
import NIOCore
import NIOHTTPTypes
import Synchronization

/// What a request must be before anything else looks at it, so that no web page can drive the
/// player (a page in the kiosk's own browser, or DNS rebinding) and no client can flood it:
///
/// 1. **Rate**: a token bucket per client address (all Unix-socket clients share one): over the
///    limit, 429 with `Retry-After`.
/// 2. **Host**: exactly one (HTTP/1.1 answers two with 400, `Host`, whatever their order: a proxy
///    and this service could each read a different one); the name the client used must be the
///    machine's own: a loopback name or address, the address it connected to, the configured
///    listening host, or one of `allowedHosts`; the Unix socket, which no browser reaches, is
///    exempt. Otherwise 403 (`Host`).
/// 3. **Origin**, when sent (browsers send it on every cross-origin request): its host must pass
///    the same rule; `null` never does. Otherwise 403 (`Origin`).
/// 4. **Body**: a request with a body must say `Content-Type: application/json` (so that a
///    browser cannot send one without a CORS preflight, which the API never grants): 415
///    (`Content-Type`); a declared length over the limit: 413 (`body`).
struct RequestGuard: RouterMiddleware {
    typealias Context = ServiceRequestContext
    let hosts: HostAllowList
    let limiter: RateLimiter?
    let maxBodyBytes: Int
    /// HTTP/1 servers turn `Host` into the request's authority; a header of that name is what a
    /// client that bypasses the codec (an in-process test) carries.
    static let hostField = HTTPField.Name("Host")!

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let limiter {
            let client = context.remoteAddress.flatMap { $0.ipAddress } ?? "local"
            if case .refused(let wait) = limiter.take(client) {
                var response = jsonResponse(Wire.Refusal(error: "rate: more than \(limiter.describe) from \(client); retry in \(wait) s", field: "rate"),
                                            status: .tooManyRequests)
                response.headers[.retryAfter] = String(wait)
                return response
            }
        }
        let hostFields = request.headers[values: Self.hostField]
        if hostFields.count > 1 {
            throw APIError(.badRequest, "Host: the request carries \(hostFields.count) Host fields (\(hostFields.joined(separator: ", "))); send exactly one", field: "Host")
        }
        let viaSocket: Bool
        if case .unixDomainSocket = context.remoteAddress { viaSocket = true } else { viaSocket = false }
        if !viaSocket, let host = request.headers[Self.hostField] ?? request.head.authority {
            guard hosts.allows(authority: host, localAddress: context.localAddress) else {
                throw APIError(.forbidden, "Host: \(host) is not this machine's name (add it to allowedHosts in the config to allow it)", field: "Host")
            }
        }
        if let origin = request.headers[.origin] {
            guard let authority = HostAllowList.authority(ofOrigin: origin), hosts.allows(authority: authority, localAddress: context.localAddress) else {
                throw APIError(.forbidden, "Origin: requests from pages of \(origin) are refused (add its host to allowedHosts in the config to allow it)", field: "Origin")
            }
        }
        if request.method == .post || request.method == .put || request.method == .patch {
            let length = request.headers[.contentLength].flatMap { Int($0) }
            let hasBody = (length ?? 0) > 0 || request.headers[.transferEncoding] != nil
            if let type = request.headers[.contentType] {
                let media = type.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
                guard media == "application/json" else {
                    throw APIError(.unsupportedMediaType, "Content-Type: \(type) is not accepted; send the body as application/json", field: "Content-Type")
                }
            } else if hasBody {
                throw APIError(.unsupportedMediaType, "Content-Type: application/json is required for a request body", field: "Content-Type")
            }
            if let length, length > maxBodyBytes {
                throw APIError(.contentTooLarge, "body: \(length) bytes is larger than \(maxBodyBytes) bytes", field: "body")
            }
        }
        return try await next(request, context)
    }
}

/// The names a request may address this machine by (`Host`, and the host of `Origin`).
struct HostAllowList: Sendable {
    /// Lowercased names and address literals from the config (`allowedHosts`), and the listening
    /// host when it is a specific address; "*" allows any.
    let names: Set<String>

    init(allowed: [String], listeningHost: String) {
        var n = Set(allowed.map { $0.lowercased() })
        if !["0.0.0.0", "::", "[::]", ""].contains(listeningHost) { n.insert(listeningHost.lowercased()) }
        names = n
    }

    /// Whether `authority` ("host", "host:port", "[v6]:port") names this machine.
    func allows(authority: String, localAddress: SocketAddress?) -> Bool {
        if names.contains("*") { return true }
        let host = Self.host(ofAuthority: authority).lowercased()
        if host == "localhost" || host.hasSuffix(".localhost") || host == "::1" || Self.isLoopbackIPv4(host) { return true }
        if names.contains(host) { return true }
        // The literal address the client connected to: a name that resolved there is not needed.
        if let ip = localAddress?.ipAddress, ip.lowercased() == host || ip == "::ffff:" + host { return true }
        return false
    }

    static func isLoopbackIPv4(_ host: String) -> Bool {
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    /// The host of an authority, without port or IPv6 brackets.
    static func host(ofAuthority a: String) -> String {
        if a.hasPrefix("["), let close = a.firstIndex(of: "]") { return String(a[a.index(after: a.startIndex)..<close]) }
        let colons = a.filter { $0 == ":" }.count
        if colons == 1, let colon = a.firstIndex(of: ":") { return String(a[..<colon]) }
        return a
    }

    /// "host:port" of an Origin ("scheme://host[:port]"); nil for "null" or anything else.
    static func authority(ofOrigin origin: String) -> String? {
        guard let r = origin.range(of: "://") else { return nil }
        let rest = origin[r.upperBound...]
        let authority = rest.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        return authority.isEmpty ? nil : authority
    }
}

/// A token bucket per client: `burst` requests at once, refilled at `perSecond`.
final class RateLimiter: Sendable {
    enum Verdict: Equatable { case allowed, refused(retryAfterSeconds: Int) }
    let perSecond: Double
    let burst: Double
    private struct Bucket { var tokens: Double; var at: ClockTime }
    private let buckets = Mutex([String: Bucket]())
    /// Clients remembered at most; beyond it, buckets that have refilled are forgotten.
    private let maxClients = 4096

    init(perSecond: Double, burst: Int) {
        self.perSecond = perSecond
        self.burst = Double(max(1, burst))
    }

    var describe: String { "\(RequestDecoder.format(perSecond)) requests a second (bursts of \(Int(burst)))" }

    func take(_ client: String, now: ClockTime = .now()) -> Verdict {
        buckets.withLock { all in
            var b = all[client] ?? Bucket(tokens: burst, at: now)
            let elapsed = (now - b.at).secondsValue
            b.tokens = min(burst, b.tokens + elapsed * perSecond)
            b.at = now
            defer {
                if all.count >= maxClients, all[client] == nil {
                    all = all.filter { ($0.value.tokens + (now - $0.value.at).secondsValue * perSecond) < burst }
                }
                all[client] = b
            }
            guard b.tokens >= 1 else {
                let wait = perSecond > 0 ? Int(((1 - b.tokens) / perSecond).rounded(.up)) : 3600
                return .refused(retryAfterSeconds: max(1, wait))
            }
            b.tokens -= 1
            return .allowed
        }
    }
}

/// Keeps every `Host` field of a request in sight of `RequestGuard`. The HTTP/1 codec makes the
/// first `Host` the request's authority and leaves any other among the header fields, where the
/// guard would read the last one only: a foreign name first and a loopback one after passed.
/// When a request has more, this puts the first back in front of them, so that the guard sees
/// them all and answers 400. Sits after the codec; runs on its channel's event loop only.
final class HostFieldsKept: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = unwrapInboundIn(data), let authority = head.authority,
              head.headerFields.contains(RequestGuard.hostField) else { return context.fireChannelRead(data) }
        head.headerFields.insert(HTTPField(name: RequestGuard.hostField, value: authority), at: 0)
        context.fireChannelRead(wrapInboundOut(.head(head)))
    }
}

@available(*, unavailable)
extension HostFieldsKept: Sendable {}
