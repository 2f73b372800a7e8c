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
/// the Unix socket do not. With no token configured, only local requests are served. A GET of
/// one of `publicPaths` (the management page's static files, which hold no data) needs none:
/// the page asks for the token when its first API call is refused.
struct AuthMiddleware: RouterMiddleware {
    typealias Context = ServiceRequestContext
    let token: String?
    var publicPaths: Set<String> = []

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if Self.isLocal(context.remoteAddress) { return try await next(request, context) }
        if request.method == .get, publicPaths.contains(request.uri.path) { return try await next(request, context) }
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
    let table: RouteTable

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        if let allowed = table.methods[path], !allowed.contains(request.method.rawValue) {
            var response = jsonResponse(Wire.Refusal(error: "method: \(request.method.rawValue) is not allowed on \(path) (allowed: \(allowed.joined(separator: ", ")))",
                                                     field: "method"), status: .methodNotAllowed)
            response.headers[.allow] = allowed.joined(separator: ", ")
            return response
        }
        return try await next(request, context)
    }
}

/// Method and path of every route, read from the route collections as a router holds them: the
/// 405 answers and their `Allow` come from the one place routes are declared.
struct RouteTable: Sendable {
    /// Every route; a path with parameters reads `/downloads/{id}`.
    let routes: [(method: String, path: String)]
    /// The methods of each path, in alphabetical order.
    let methods: [String: [String]]

    init(_ collections: [RouteCollection<ServiceRequestContext>]) {
        let router = Router(context: ServiceRequestContext.self)
        for c in collections { router.addRoutes(c) }
        routes = router.routes.map { ($0.method.rawValue, $0.path.description) }
        methods = Dictionary(grouping: routes, by: \.path).mapValues { $0.map(\.method).sorted() }
    }
}

/// The HTTP/JSON control API over a `Player`. Its routes are declared per resource, each group a
/// `RouteCollection` in a file of its own (`routeCollections()`), and documented in
/// docs/openapi.json (a test checks the two agree).
public final class ControlAPI: Sendable {
    /// The player of the whole screen, or of the main zone of a screen of zones.
    public let player: Player
    /// The screen of zones (config `layout`); nil: one picture, `player`'s.
    public let screen: ScreenPlayer?
    /// The sync group this service plays in lockstep with (config `sync`); nil: none.
    public let sync: SyncMembership?
    /// What plays when (config `schedule`, `PUT /schedule`), and whether its loop runs.
    let scheduler: ScheduleRunner
    let scheduleTask = Mutex(false)
    /// Two snapshots a second, four at once at most (the requests' own bucket, one client).
    let snapshotLimit = RateLimiter(perSecond: 2, burst: 4)
    /// Every play recorded (`ProofOfPlay`).
    let proofOfPlay: ProofOfPlay
    /// The fleet's broker (config `mqtt`), once connected from `ScanoutServer`.
    let fleet = Mutex<FleetLink?>(nil)
    public let metrics: PlayerMetrics
    /// The channel list (`/channels`, `/channel`).
    public let channels: ChannelDirectory
    public let logLevel: LogLevelControl
    /// The offline store's downloads (`/downloads`); nil when the store is off (`offlineOff` says why).
    public let offline: OfflineManager?
    let offlineOff: String
    let logger: Logger
    /// The running settings (`currentConfig`); `PUT /config` and reloads change them.
    let config: Mutex<ServiceConfig>
    /// Verifies items' content tokens before they are loaded.
    public let authorizer: ContentAuthorizer
    /// Time between two keep-alive comments on an idle event stream.
    let keepAlive: Duration
    /// One limiter for every router made (TCP and Unix socket share the budget); nil: no limit.
    private let rateLimiter: RateLimiter?
    /// Event streams open at once, over every router made (`limits.eventStreams`).
    let eventStreams: StreamSlots
    /// Each event's SSE message, encoded once for all the streams.
    let sseMessages = SSEMessageCache()
    /// The largest request body accepted.
    static let maxBodyBytes = 1 << 20

    public init(player: Player, metrics: PlayerMetrics, config: ServiceConfig, authorizer: ContentAuthorizer = ContentAuthorizer(),
                logLevel: LogLevelControl, logger: Logger, keepAlive: Duration = .seconds(15),
                offline: OfflineManager? = nil, offlineOff: String = "no state directory", screen: ScreenPlayer? = nil,
                sync: SyncMembership? = nil, proofOfPlay: ProofOfPlay? = nil) {
        self.proofOfPlay = proofOfPlay ?? ProofOfPlay(store: nil, days: config.proofOfPlayDays, logger: logger)
        self.screen = screen
        self.sync = sync
        scheduler = ScheduleRunner(schedule: nil, player: player, fallback: config.playlist, repeatMode: config.repeatMode)
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

    /// Every route, one collection per resource (each in its own file). The route table (405
    /// answers and their `Allow`, `routes`) is read from these: routes are declared nowhere else.
    func routeCollections() -> [RouteCollection<ServiceRequestContext>] {
        [statusRoutes(), eventRoutes(), playbackRoutes(), playlistRoutes(), subtitleRoutes(), channelRoutes(),
         downloadRoutes(), assetRoutes(), licenceRoutes(), configRoutes(), zoneRoutes(), syncRoutes(), scheduleRoutes(), snapshotRoutes(), displayRoutes(), proofOfPlayRoutes(),
         pageRoutes()]
    }

    /// Method and path of every route (paths with parameters as `/downloads/{id}`).
    public var routes: [(method: String, path: String)] { RouteTable(routeCollections()).routes }

    public func router() -> Router<ServiceRequestContext> {
        let groups = routeCollections()
        let router = Router(context: ServiceRequestContext.self)
        let settings = config.withLock { $0 }
        router.add(middleware: RequestGuard(hosts: HostAllowList(allowed: settings.allowedHosts, listeningHost: settings.host),
                                            limiter: rateLimiter, maxBodyBytes: Self.maxBodyBytes))
        router.add(middleware: AuthMiddleware(token: settings.token, publicPaths: ManagementPage.publicPaths))
        router.add(middleware: MethodMiddleware(table: RouteTable(groups)))
        router.add(middleware: EventStreamLimit(slots: eventStreams))
        for group in groups { router.addRoutes(group) }
        return router
    }

    /// The request's body (413 past the context's upload limit).
    func bodyData(_ request: Request, _ context: ServiceRequestContext) async throws -> Data {
        var request = request
        do {
            return Data(try await request.collectBody(upTo: context.maxUploadSize).readableBytesView)
        } catch {
            throw APIError(.contentTooLarge, "body: larger than \(context.maxUploadSize) bytes", field: "body")
        }
    }

    /// The request's body read into `T` (`RequestDecoder.decodeBody`): its fields other than `T`'s
    /// are refused first, then each as `T` reads it, the refusal naming the field.
    func body<T: RequestBody>(_ request: Request, _ context: ServiceRequestContext, as type: T.Type) async throws -> T {
        try RequestDecoder.decodeBody(T.self, from: await bodyData(request, context))
    }

    /// Commands without parameters accept an empty body or `{}` only.
    func empty(_ request: Request, _ context: ServiceRequestContext) async throws {
        try RequestDecoder.checkEmptyBody(await bodyData(request, context))
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
        try await perform(on: player, body)
    }

    /// Runs a command on `target` (a zone's player); its refusals become 4xx answers naming the field.
    func perform<T: Sendable>(on target: Player, _ body: @escaping @Sendable (PlayerEngine) throws -> T) async throws -> T {
        do {
            return try await target.perform(body)
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
