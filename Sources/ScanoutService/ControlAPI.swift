import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ScanoutOffline
import ScanoutPipeline
import ScanoutPlayer
import ScanoutPolicy
import ScanoutRender
import Synchronization

/// The request context of the control API: Hummingbird's, plus the peer's address for the
/// local-or-token rule.
public struct ServiceRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public let remoteAddress: SocketAddress?
    /// The address the client connected to (for the Host check).
    public let localAddress: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        coreContext = CoreRequestContextStorage(source: source)
        remoteAddress = source.channel.remoteAddress
        localAddress = source.channel.localAddress
    }

    public var maxUploadSize: Int { ControlAPI.maxBodyBytes }
}

/// Requests from other machines need `Authorization: Bearer <token>`; requests over loopback or
/// the Unix socket do not. With no token configured, only local requests are served.
struct AuthMiddleware: RouterMiddleware {
    typealias Context = ServiceRequestContext
    let token: String?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if Self.isLocal(context.remoteAddress) { return try await next(request, context) }
        let who = context.remoteAddress?.ipAddress ?? "a remote address"
        guard let token else {
            throw APIError(.forbidden, "Authorization: requests from \(who) are refused (no token is configured; only local clients are served)", field: "Authorization")
        }
        guard let header = request.headers[.authorization], Self.constantTimeEqual(header, "Bearer \(token)") else {
            throw APIError(.unauthorized, "Authorization: a valid bearer token is required for requests from \(who)", field: "Authorization")
        }
        return try await next(request, context)
    }

    /// Loopback (127.0.0.0/8, ::1, IPv4-mapped loopback) and Unix sockets are local.
    static func isLocal(_ address: SocketAddress?) -> Bool {
        guard let address else { return true }
        switch address {
        case .unixDomainSocket: return true
        case .v4: return address.ipAddress?.hasPrefix("127.") ?? false
        case .v6:
            guard let ip = address.ipAddress else { return false }
            return ip == "::1" || ip.hasPrefix("::ffff:127.")
        }
    }

    /// Whether `given` equals `expected`, in a time that depends on `expected`'s length only:
    /// every byte of it is compared, whatever `given` holds (a wrong length included).
    static func constantTimeEqual(_ given: String, _ expected: String) -> Bool {
        let x = Array(given.utf8), y = Array(expected.utf8)
        var d = x.count ^ y.count
        for i in y.indices { d |= Int((i < x.count ? x[i] : 0) ^ y[i]) }
        return d == 0
    }
}

/// A known path asked with a method it does not have: 405 with the methods it has (`Allow`).
struct MethodMiddleware: RouterMiddleware {
    typealias Context = ServiceRequestContext
    static let methods: [String: [String]] = Dictionary(grouping: ControlAPI.routes, by: \.path).mapValues { $0.map(\.method) }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        if let allowed = Self.methods[path], !allowed.contains(request.method.rawValue) {
            var response = jsonResponse(["error": "method: \(request.method.rawValue) is not allowed on \(path) (allowed: \(allowed.joined(separator: ", ")))",
                                         "field": "method"], status: .methodNotAllowed)
            response.headers[.allow] = allowed.joined(separator: ", ")
            return response
        }
        return try await next(request, context)
    }
}

/// The HTTP/JSON control API over a `Player`. Every route is listed in `routes` (and documented
/// in docs/openapi.json; a test checks the two agree).
public final class ControlAPI: Sendable {
    public let player: Player
    public let metrics: PlayerMetrics
    /// The channel list (`/channels`, `/channel`).
    public let channels: ChannelDirectory
    public let logLevel: LogLevelControl
    /// The offline store's downloads (`/downloads`); nil when the store is off (`offlineOff` says why).
    public let offline: OfflineManager?
    let offlineOff: String
    let logger: Logger
    private let config: Mutex<ServiceConfig>
    /// Verifies items' content tokens before they are loaded.
    public let authorizer: ContentAuthorizer
    /// Time between two keep-alive comments on an idle event stream.
    let keepAlive: Duration
    /// One limiter for every router made (TCP and Unix socket share the budget); nil: no limit.
    private let rateLimiter: RateLimiter?
    /// Event streams open at once, over every router made (`limits.eventStreams`).
    let eventStreams: StreamSlots
    /// Each event's SSE message, encoded once for all the streams.
    private let sseMessages = SSEMessageCache()
    /// The largest request body accepted.
    static let maxBodyBytes = 1 << 20

    public init(player: Player, metrics: PlayerMetrics, config: ServiceConfig, authorizer: ContentAuthorizer = ContentAuthorizer(),
                logLevel: LogLevelControl, logger: Logger, keepAlive: Duration = .seconds(15),
                offline: OfflineManager? = nil, offlineOff: String = "no state directory") {
        self.offline = offline
        self.offlineOff = offlineOff
        self.keepAlive = keepAlive
        rateLimiter = config.rateLimit.map { RateLimiter(perSecond: $0.perSecond, burst: $0.burst) }
        eventStreams = StreamSlots(capacity: config.limits.resolved().eventStreams)
        self.player = player
        self.metrics = metrics
        channels = ChannelDirectory(config: config.channels, player: player, logger: logger, timeout: config.timeout)
        self.authorizer = authorizer
        self.config = Mutex(config)
        self.logLevel = logLevel
        self.logger = logger
    }

    /// Method and path of every route.
    public static let routes: [(method: String, path: String)] = [
        ("GET", "/version"), ("GET", "/health"), ("GET", "/state"), ("GET", "/stats"), ("GET", "/metrics"), ("GET", "/events"),
        ("POST", "/load"), ("POST", "/play"), ("POST", "/pause"), ("POST", "/stop"), ("POST", "/seek"), ("PUT", "/rate"), ("POST", "/volume"),
        ("GET", "/playlist"), ("PUT", "/playlist"), ("POST", "/playlist/next"), ("POST", "/playlist/previous"),
        ("POST", "/playlist/jump"), ("PUT", "/repeat"), ("GET", "/config"), ("PUT", "/config"),
        ("GET", "/log-level"), ("PUT", "/log-level"),
        ("POST", "/timeshift/seek"), ("POST", "/timeshift/live"),
        ("GET", "/channels"), ("POST", "/channel"), ("POST", "/channel/next"), ("POST", "/channel/previous"),
        ("POST", "/subtitles"),
    ] + offlineRoutes

    public func router() -> Router<ServiceRequestContext> {
        let router = Router(context: ServiceRequestContext.self)
        let settings = config.withLock { $0 }
        router.add(middleware: RequestGuard(hosts: HostAllowList(allowed: settings.allowedHosts, listeningHost: settings.host),
                                            limiter: rateLimiter, maxBodyBytes: Self.maxBodyBytes))
        router.add(middleware: AuthMiddleware(token: settings.token))
        router.add(middleware: MethodMiddleware())
        router.add(middleware: EventStreamLimit(slots: eventStreams))
        router.get("/version") { _, _ in jsonResponse(["name": "scanout", "version": ScanoutVersion.string]) }
        router.get("/health") { [self] _, _ in
            let s = player.snapshot
            return jsonResponse(["up": s.reasons.isEmpty, "reasons": s.reasons.names, "state": s.state.rawValue],
                                status: s.reasons.isEmpty ? .ok : .serviceUnavailable)
        }
        router.get("/state") { [self] _, _ in jsonResponse(WireFormat.state(player.snapshot)) }
        router.get("/stats") { [self] _, _ in jsonResponse(WireFormat.stats(player.snapshot)) }
        router.get("/metrics") { [self] _, _ in
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; version=0.0.4"
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: metrics.render(player.snapshot))))
        }
        router.get("/events") { [self] request, _ in events(lastEventID: request.headers[HTTPField.Name("Last-Event-ID")!]) }

        router.post("/load") { [self] request, context in
            var o = try await body(request, context, fields: ["source", "token", "playerType", "scaling", "rotation", "overlay", "playlist", "start", "autoplay", "repeat", "alang", "aid"] + SubtitleFields.names)
            var items: [PlaylistItem]
            var field = "playlist"
            if o.has("source") || o.has("token") {
                guard !o.has("playlist") else { throw APIError.badRequest("playlist", "give either source (or token) or playlist, not both") }
                items = [try parseItem(&o)]
                field = ""
            } else if let list = try o.array("playlist") {
                items = try parsePlaylist(list, field: "playlist")
                guard !items.isEmpty else { throw APIError.badRequest("playlist", "must not be empty") }
            } else {
                throw APIError.badRequest("source", "is required (or token, or playlist)")
            }
            let start = try o.int("start", range: 0...Int.max) ?? 0
            guard start < items.count else { throw APIError(.notFound, "start: item \(start) does not exist (the playlist has \(items.count))", field: "start") }
            let autoplay = try o.bool("autoplay") ?? true
            let repeatMode = try o.string("repeat", allowed: RepeatMode.allCases.map(\.rawValue)).flatMap(RepeatMode.init(rawValue:))
            try o.rejectUnknown()
            let playlist = try await authorize(items, field: field)
            keepOffline(playlist)
            let snapshot = try await perform { e in
                if let repeatMode { e.setRepeat(repeatMode) }
                try e.load(playlist, start: start, autoplay: autoplay)
                return e.snapshot()
            }
            return jsonResponse(WireFormat.state(snapshot))
        }
        router.post("/play") { [self] request, context in
            try await empty(request, context)
            return jsonResponse(WireFormat.state(try await perform { e in try e.play(); return e.snapshot() }))
        }
        router.post("/pause") { [self] request, context in
            try await empty(request, context)
            return jsonResponse(WireFormat.state(try await perform { e in try e.pause(); return e.snapshot() }))
        }
        router.post("/stop") { [self] request, context in
            try await empty(request, context)
            return jsonResponse(WireFormat.state(try await perform { e in e.stop(); return e.snapshot() }))
        }
        router.post("/seek") { [self] request, context in
            var o = try await body(request, context, fields: ["position", "exact"])
            let position = try o.double("position", required: true, range: 0...1e9)!
            let exact = try o.bool("exact") ?? true
            try o.rejectUnknown()
            return jsonResponse(WireFormat.state(try await perform { e in try e.seek(to: position, exact: exact); return e.snapshot() }))
        }
        router.post("/timeshift/seek") { [self] request, context in
            var o = try await body(request, context, fields: ["relative", "absolute"])
            let relative = try o.double("relative", range: -86400...86400)
            let absolute = try o.double("absolute", range: 0...1e12)
            try o.rejectUnknown()
            guard (relative == nil) != (absolute == nil) else {
                throw APIError(.badRequest, "body: give exactly one of relative (seconds from the frame on screen) and absolute (stream time, seconds)", field: "body")
            }
            return jsonResponse(WireFormat.state(try await perform { e in
                if let relative { try e.seekTimeshift(relative: relative) } else { try e.seekTimeshift(to: absolute!) }
                return e.snapshot()
            }))
        }
        router.post("/timeshift/live") { [self] request, context in
            try await empty(request, context)
            return jsonResponse(WireFormat.state(try await perform { e in try e.playLive(); return e.snapshot() }))
        }
        router.post("/subtitles") { [self] request, context in
            var o = try await body(request, context, fields: ["enabled", "delay", "track"])
            return jsonResponse(try await subtitles(&o))
        }
        router.put("/rate") { [self] request, context in
            var o = try await body(request, context, fields: ["rate"])
            let rate = try o.double("rate", required: true, range: 0.25...4)!
            try o.rejectUnknown()
            if rate > 2 { logger.warning("rate \(rate)x is above 2x: frames may be dropped") }
            var json = WireFormat.state(try await perform { e in try e.setRate(rate); return e.snapshot() })
            if rate > 2 { json["warning"] = "rate above 2x: frames may be dropped on this machine" }
            return jsonResponse(json)
        }
        router.post("/volume") { [self] request, context in
            var o = try await body(request, context, fields: ["volume", "mute"])
            let volume = try o.int("volume", range: 0...100)
            let mute = try o.bool("mute")
            try o.rejectUnknown()
            guard volume != nil || mute != nil else { throw APIError.badRequest("volume", "give volume (0...100), mute (true/false) or both") }
            let audio = try await perform { e in
                e.setVolume(volume ?? e.configuration.audio.volume, muted: mute ?? e.configuration.audio.muted)
                return e.configuration.audio
            }
            config.withLock { $0.audio.volume = audio.volume; $0.audio.muted = audio.muted }
            return jsonResponse(["volume": audio.volume, "mute": audio.muted])
        }
        router.get("/playlist") { [self] _, _ in
            let s = player.snapshot
            return jsonResponse(["items": s.playlist.map(itemJSON), "item": s.index ?? NSNull(), "repeat": s.repeatMode.rawValue])
        }
        router.put("/playlist") { [self] request, context in
            var o = try await body(request, context, fields: ["items", "start", "autoplay"])
            let parsed = try parsePlaylist(try o.array("items", required: true)!, field: "items")
            guard !parsed.isEmpty else { throw APIError.badRequest("items", "must not be empty") }
            let start = try o.int("start", range: 0...Int.max) ?? 0
            guard start < parsed.count else { throw APIError(.notFound, "start: item \(start) does not exist (the playlist has \(parsed.count))", field: "start") }
            let autoplay = try o.bool("autoplay") ?? true
            try o.rejectUnknown()
            let items = try await authorize(parsed, field: "items")
            keepOffline(items)
            let s = try await perform { e in try e.load(items, start: start, autoplay: autoplay); return e.snapshot() }
            return jsonResponse(["items": s.playlist.map(itemJSON), "item": s.index ?? NSNull(), "repeat": s.repeatMode.rawValue])
        }
        router.post("/playlist/next") { [self] request, context in
            try await empty(request, context)
            return jsonResponse(WireFormat.state(try await perform { e in try e.next(); return e.snapshot() }))
        }
        router.post("/playlist/previous") { [self] request, context in
            try await empty(request, context)
            return jsonResponse(WireFormat.state(try await perform { e in try e.previous(); return e.snapshot() }))
        }
        router.post("/playlist/jump") { [self] request, context in
            var o = try await body(request, context, fields: ["index"])
            let index = try o.int("index", required: true, range: 0...1_000_000)!
            try o.rejectUnknown()
            return jsonResponse(WireFormat.state(try await perform { e in try e.jump(to: index); return e.snapshot() }))
        }
        router.put("/repeat") { [self] request, context in
            var o = try await body(request, context, fields: ["repeat"])
            let mode = RepeatMode(rawValue: try o.string("repeat", required: true, allowed: RepeatMode.allCases.map(\.rawValue))!)!
            try o.rejectUnknown()
            return jsonResponse(WireFormat.state(try await perform { e in e.setRepeat(mode); return e.snapshot() }))
        }
        router.get("/config") { [self] _, _ in jsonResponse(config.withLock { $0.json }) }
        router.put("/config") { [self] request, context in
            var o = try await body(request, context, fields: Array(ServiceConfig.allKeys))
            var c = config.withLock { $0 }
            try c.apply(&o, runtimeOnly: true)
            try o.rejectUnknown()
            let updated = c
            let repeatGiven = o.has("repeat")
            config.withLock { $0 = updated }
            logLevel.current = updated.logLevel
            _ = try await perform { e in
                e.adoptRuntimeSettings(of: updated)
                if repeatGiven { e.setRepeat(updated.repeatMode) }
                return 0
            }
            logger.info("configuration changed", metadata: ["fields": "\(o.values.keys.sorted())"])
            return jsonResponse(updated.json)
        }
        router.get("/log-level") { [self] _, _ in jsonResponse(["level": logLevel.current.rawValue]) }
        router.put("/log-level") { [self] request, context in
            var o = try await body(request, context, fields: ["level"])
            let level = Logger.Level(rawValue: try o.string("level", required: true, allowed: Logger.Level.allCases.map(\.rawValue))!)!
            try o.rejectUnknown()
            logLevel.current = level
            config.withLock { $0.logLevel = level }
            return jsonResponse(["level": level.rawValue])
        }
        addChannelRoutes(to: router)
        addOfflineRoutes(to: router)
        return router
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
            opening += WireFormat.sse(name: "gap", id: nil, json: ["type": "gap", "from": gap.lowerBound, "to": gap.upperBound,
                                                                   "missed": gap.count, "reason": reason])
        }
        if after == nil || resumed.gap != nil {
            opening += WireFormat.sse(name: "state", id: resumed.sequence, json: WireFormat.state(player.snapshot))
        } else {
            for n in resumed.replay { opening += WireFormat.sse(name: n.event.name, id: n.sequence, json: WireFormat.event(n)) }
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

    /// The request's JSON object; fields other than `fields` are refused before anything else is
    /// checked, so that a misspelt field is named as such.
    func body(_ request: Request, _ context: ServiceRequestContext, fields: [String]) async throws -> JSONObject {
        var request = request
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: context.maxUploadSize)
        } catch {
            throw APIError(.contentTooLarge, "body: larger than \(context.maxUploadSize) bytes", field: "body")
        }
        let data = Data(buffer.readableBytesView)
        if !fields.isEmpty, data.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            throw APIError(.badRequest, "body: a JSON object is required", field: "body")
        }
        let o = try JSONObject.parse(data)
        if let extra = o.values.keys.sorted().first(where: { !fields.contains($0) }) {
            throw APIError.badRequest(extra, "unknown field")
        }
        return o
    }

    /// Commands without parameters accept an empty body or `{}` only.
    func empty(_ request: Request, _ context: ServiceRequestContext) async throws {
        _ = try await body(request, context, fields: [])
    }

    /// `items` with their content tokens verified: each source becomes the authorised input (the
    /// token's `url` when the item names none) and the token's `playerType` claim its content
    /// hint. A token that does not verify, or whose policy forbids what the output does, refuses
    /// the whole request (403, the item's `token` field named); with `onRefused`, that item is
    /// left out instead and reported.
    func authorize(_ items: [PlaylistItem], field: String,
                   onRefused: ((String, any Error) -> Void)? = nil) async throws -> [PlaylistItem] {
        var out: [PlaylistItem] = []
        for (i, item) in items.enumerated() {
            let name = field.isEmpty ? "token" : "\(field)[\(i)].token"
            do {
                // Frames captured through writeback are frames copied: a policy that denies
                // capture refuses the item while the service captures.
                let capturing = config.withLock { $0.capture != nil }
                let a = try await authorizer.authorize(input: item.source.isEmpty ? nil : item.source, token: item.token,
                                                       capture: capturing ? .writeback : nil)
                var authorised = item
                authorised.source = a.input
                authorised.contentHint = a.contentHint
                out.append(authorised)
            } catch {
                let refusal = Self.refusal(error, field: name, source: field.isEmpty ? "source" : "\(field)[\(i)].source")
                guard let onRefused else { throw refusal }
                onRefused(refusal.field ?? name, error)
            }
        }
        return out
    }

    /// A content-authorisation failure as an answer: 400 when the item names no input, 403 when
    /// the token or its policy refuses it, the token's field and what is wrong named.
    static func refusal(_ error: any Error, field: String, source: String) -> APIError {
        if case AuthorizationError.noInput = error {
            return APIError(.badRequest, "\(source): \(AuthorizationError.noInput)", field: source)
        }
        return APIError(.forbidden, "\(field): \(error)", field: field)
    }

    /// Runs a command on the player; its refusals become 4xx answers naming the field.
    func perform<T: Sendable>(_ body: @escaping @Sendable (PlayerEngine) throws -> T) async throws -> T {
        do {
            return try await player.perform(body)
        } catch let e as PlayerError {
            throw Self.apiError(e)
        }
    }

    static func apiError(_ e: PlayerError) -> APIError {
        switch e {
        case .emptyPlaylist: return APIError(.badRequest, "playlist: \(e.description)", field: "playlist")
        case .itemOutOfRange: return APIError(.notFound, "index: \(e.description)", field: "index")
        case .invalidState: return APIError(.conflict, "state: \(e.description)", field: "state")
        case .rateOutOfRange: return APIError(.badRequest, "rate: \(e.description)", field: "rate")
        case .rotationInvalid: return APIError(.badRequest, "rotation: \(e.description)", field: "rotation")
        case .seekOutOfRange: return APIError(.badRequest, "position: \(e.description)", field: "position")
        case .seekOnLive: return APIError(.conflict, "state: \(e.description)", field: "state")
        case .notLive: return APIError(.conflict, "state: \(e.description)", field: "state")
        case .timeshiftOutOfRange: return APIError(.badRequest, "position: \(e.description)", field: "position")
        case .noNextItem, .noPreviousItem: return APIError(.conflict, "index: \(e.description)", field: "index")
        case .noPlayableItem: return APIError(.unprocessableContent, "playlist: \(e.description)", field: "playlist")
        case .media(let i, let m): return APIError(.unprocessableContent, "playlist[\(i)]: \(m.description)", field: "playlist[\(i)]")
        case .output: return APIError(.serviceUnavailable, "output: \(e.description)", field: "output")
        case .subtitleTrackInvalid: return APIError(.badRequest, "track: \(e.description)", field: "track")
        }
    }
}

/// Scaling mode names for request validation.
enum ScalingModeNames {
    static let all = ["fit", "fill", "stretch", "none"]
    static func mode(_ s: String) -> ScalingMode? { ScalingMode(rawValue: s) }
}

extension ControlAPI {
    /// The running settings: the start-up ones as `PUT /config` and reloads changed them.
    var currentConfig: ServiceConfig { config.withLock { $0 } }

    /// The settings a reload of the config file put in place, from then on those `GET /config`
    /// shows and `PUT /config` changes.
    func adopt(reloaded c: ServiceConfig) { config.withLock { $0 = c } }
}

extension PlayerEngine {
    /// Takes the settings of `config` that may change while the service runs (`PUT /config`, a
    /// SIGHUP reload). The decoder settings stay the output's (native planes, GPU frames, the
    /// screen's buffers): they are not runtime fields.
    func adoptRuntimeSettings(of config: ServiceConfig) {
        var player = config.playerConfiguration
        player.decoder = configuration.decoder
        configuration = player
    }
}
