import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import ScanoutDisplay
import ScanoutOffline
import ScanoutPipeline
import ScanoutPlayer
import ScanoutPolicy
import ServiceLifecycle

/// The daemon: a Player on its own thread, the control API on TCP (127.0.0.1:PORT by default) and
/// on a Unix socket, all run by a swift-service-lifecycle ServiceGroup that shuts down gracefully
/// on SIGTERM/SIGINT: the event streams are closed first, then the listeners drain, then playback
/// stops and the player's thread ends.
///
/// Under systemd (`Type=notify`): `READY=1` once the listeners are up and the first item is on
/// screen (or the slate is up), `WATCHDOG=1` fed by the player's loop, `RELOADING=1` around a
/// SIGHUP reload of the config file, `STOPPING=1` when shutdown begins.
public struct ScanoutServer: Sendable {
    public let config: ServiceConfig
    public let logger: Logger
    public let logLevel: LogLevelControl
    let makePipeline: @Sendable () -> PlaybackPipeline
    /// Opens the output a screen of zones (config `layout`) is composed onto.
    let makeScreenOutput: @Sendable (ScreenLayout) throws -> LayoutOutput

    /// `makePipeline` opens the output; it is called on the player's thread, which owns the
    /// pipeline from then on. With a `layout`, `makeScreenOutput` opens the output instead, on
    /// the screen's compositor thread (default: the CPU compositor into memory,
    /// `LayoutOutput.open` headless).
    public init(config: ServiceConfig, logLevel: LogLevelControl, logger: Logger, makePipeline: @escaping @Sendable () -> PlaybackPipeline,
                makeScreenOutput: (@Sendable (ScreenLayout) throws -> LayoutOutput)? = nil) {
        self.config = config
        self.logLevel = logLevel
        self.logger = logger
        self.makePipeline = makePipeline
        let (w, h) = (config.outputWidth, config.outputHeight)
        self.makeScreenOutput = makeScreenOutput ?? { layout in
            try LayoutOutput.open(OutputSettings(kind: .headless, headlessWidth: w, headlessHeight: h), layout: layout, gl: false) { _ in }
        }
    }

    /// The player behind its pipeline, the metrics and the control API, wired and with the
    /// configured playlist loaded; nothing listens yet. What `run` serves, and what in-process
    /// tests drive. Throws when the key file cannot be used.
    public func assemble() async throws -> (player: Player, api: ControlAPI) {
        try await assemble(readiness: nil)
    }

    /// `readiness` hears when playback starts (or cannot), for systemd's `READY=1`.
    func assemble(readiness: Readiness?) async throws -> (player: Player, api: ControlAPI) {
        let authorizer = try ContentAuthorizer(keysFile: config.keys)
        let slot = PipelineSlot()
        let make = makePipeline
        let screen = try config.layout.map { try openScreen($0, authorizer: authorizer) }
        let player = screen.flatMap { $0.player(zone: $0.layout.mainZone ?? "") } ?? Player(configuration: config.playerConfiguration) {
            let pipeline = make()
            slot.pipeline = pipeline
            return pipeline.display
        }
        let metrics = PlayerMetrics()
        let sync = try config.syncSettings().map { try SyncMembership(settings: $0, metrics: metrics) }
        if let sync {
            player.events.addListener { n in sync.observe(n.event) }
            logger.notice("sync: group \(sync.service.settings.group), \(sync.service.settings.role.rawValue), on \(sync.service.description)")
        }
        listen(to: player, metrics: metrics, readiness: readiness, mainZone: screen?.layout.mainZone)
        let log = logger
        let store = resumeStore(player: player)
        let (offline, offlineOff) = offlineManager(player: player, authorizer: authorizer)
        if let offline {
            // A stop with nothing after it releases the decrypting playlist of the item it stopped.
            player.events.addListener { n in if case .stop = n.event { offline.played(source: "") } }
        }
        _ = try await player.perform { engine in
            engine.session.observer = metrics
            let pipeline = slot.take()
            pipeline?.serve(engine, authorizer: authorizer)
            if let path = config.presentLog {
                do { engine.presentLog = try PresentLog(path: path, kms: pipeline?.kms) } catch { log.error("\(error); frames are not logged") }
            }
            if let store { Self.keepPosition(of: engine, in: store) }
            if let offline { Self.keepOffline(engine, offline) }
            if let sync { engine.attach(sync.playback()) }
            engine.screenPower = config.cec.switches(logger: log)
            return 0
        }
        offline?.resumeInterrupted()
        // Ends when the manager goes (it holds the manager weakly).
        _ = offline?.keepClock()
        let queue = config.mqtt.map { _ in FleetQueue(store: offline?.store, logger: logger) }
        if config.mqtt != nil && offline == nil { logger.notice("mqtt: proof of play and stats wait for the broker in memory: \(offlineOff)") }
        var forwarding: ProofOfPlay.Forwarding?
        if let settings = config.mqtt, let queue {
            forwarding = ProofOfPlay.Forwarding(queue: queue) { FleetLink.message(for: $0, settings: settings) }
        }
        let proof = ProofOfPlay(store: offline?.store, days: config.proofOfPlayDays, logger: logger, forwarding: forwarding)
        proof.closeInterrupted()
        player.events.addListener { n in
            // Each zone's plays with that zone's own figures (its player's copy, refreshed before
            // the event went out).
            let source = n.zone.flatMap { screen?.player(zone: $0) } ?? player
            proof.observe(n.event, zone: n.zone, snapshot: source.snapshot)
        }
        let api = ControlAPI(player: player, metrics: metrics, config: config, authorizer: authorizer, logLevel: logLevel, logger: logger,
                             offline: offline, offlineOff: offlineOff, screen: screen, sync: sync, proofOfPlay: proof)
        if let settings = config.mqtt, let queue {
            let link = try FleetLink(settings: settings, api: api, queue: queue, logger: logger)
            try link.start(player: player)
            api.fleet.withLock { $0 = link }
        }
        if let screen { await startZones(of: screen, api: api) }
        await start(player, api: api, store: store, readiness: readiness)
        return (player, api)
    }

    /// Counts every event of the main zone (of the whole screen, without a layout) into
    /// `metrics`, logs every event (with its zone), and tells `readiness` when playback starts.
    private func listen(to player: Player, metrics: PlayerMetrics, readiness: Readiness?, mainZone: String?) {
        let log = logger
        player.events.addListener { n in
            var log = log
            if let zone = n.zone { log[metadataKey: "zone"] = "\(zone)" }
            if n.zone == mainZone {
                metrics.observe(n.event)
                if let readiness, Readiness.startsPlayback(n.event) { readiness.playbackStarted() }
            }
            switch n.event {
            case .position: log.trace("event", metadata: ["type": "\(n.event.name)"])
            case .error(let m, let item, let skipped):
                log.error("\(m)", metadata: ["item": "\(item.map(String.init) ?? "-")", "skipped": "\(skipped)"])
            case .warning(let m): log.warning("\(m)")
            case .serviceState(let up, let reasons):
                log.notice("service \(up ? "up" : "down")", metadata: ["reasons": "\(reasons.names)"])
            default: log.debug("event \(n.event.name)")
            }
        }
    }

    /// What plays at start in the main zone: its own playlist when the layout gives it one, else
    /// the config's playlist (from the item played last), else a channel list's channel (the
    /// one tuned last).
    private func start(_ player: Player, api: ControlAPI, store: ResumeStore?, readiness: Readiness?) async {
        // The screen's layout, its channels tuned (`startZones`).
        let zone = api.screen.flatMap { s in s.layout.mainZone.flatMap(s.layout.zone) }
        let (playlist, field) = zone.map { !$0.playlist.isEmpty ? ($0.playlist, "layout.zones.\($0.id).playlist") : (config.playlist, "playlist") }
            ?? (config.playlist, "playlist")
        if let schedule = config.schedule, zone == nil {
            // The schedule says what plays, from now on.
            do {
                let refused: (String, any Error) -> Void = { field, error in logger.error("schedule.\(field): \(error); the item is left out") }
                let checked = try await api.authorize(schedule, onRefused: refused)
                api.scheduler.replace(checked, fallback: try await api.authorize(playlist, field: "playlist", onRefused: refused))
                await api.scheduler.turn()
                api.startSchedule()
            } catch {
                logger.error("schedule: \(error)")
                readiness?.playbackStarted()
            }
        } else if !playlist.isEmpty {
            let repeatMode = zone.map { !$0.playlist.isEmpty ? $0.repeatMode : config.repeatMode } ?? config.repeatMode
            // In a sync group the group starts together, once it has a leader (`GroupPlayback`).
            let grouped = api.sync != nil
            let autoplay = config.autoplay && !grouped
            let groupAutoplay = config.autoplay && grouped
            do {
                // Items whose token does not verify are left out (and named in the log).
                let items = try await api.authorize(playlist, field: field) { field, error in
                    logger.error("\(field): \(error); the item is left out")
                }
                api.keepOffline(items)
                let start = resumeIndex(in: items, store: store)
                _ = try await player.perform { e in
                    e.setRepeat(repeatMode)
                    try e.load(items, start: start, autoplay: autoplay)
                    e.sync?.pendingAutoplay = groupAutoplay
                    return 0
                }
            } catch {
                logger.error("initial playlist: \(error)")
                readiness?.playbackStarted()
            }
        } else {
            // No playlist: a channel list starts on a channel (the one tuned last), not idle.
            await api.tuneAtStart(autoplay: config.autoplay)
        }
    }

    /// The state directory's store, or nil (and a log line saying why resume is off).
    private func resumeStore(player: Player) -> ResumeStore? {
        let (dir, why) = config.stateDirectory(environment: ProcessInfo.processInfo.environment)
        guard let dir else {
            logger.notice("resume is off: \(why)")
            return nil
        }
        do {
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        } catch {
            logger.warning("resume is off: the state directory \(dir) cannot be made (\(error))")
            return nil
        }
        return ResumeStore(directory: dir) { error in
            // A full disk or a read-only directory costs the resume point, never playback. As a
            // `warning` event, logged by the events' listener.
            let message = "state: the playlist position was not saved: \(error)"
            Task { _ = try? await player.perform { $0.reportWarning(message); return 0 } }
        }
    }

    /// The offline store in the state directory, its events published as the player's; nil and
    /// why when there is none.
    private func offlineManager(player: Player, authorizer: ContentAuthorizer) -> (OfflineManager?, String) {
        let (dir, why) = config.stateDirectory(environment: ProcessInfo.processInfo.environment)
        guard let dir else {
            logger.notice("offline store is off: \(why)")
            return (nil, why)
        }
        do {
            let store = try OfflineStore(directory: dir, logger: logger)
            let ownLicence = config.offline.licenceKeys.map { LicenceKeys(file: $0, authorizer: authorizer).lookup }
            let manager = OfflineManager(store: store, settings: config.offline, logger: logger, onEvent: { event in
                switch event {
                case .progress(let id, let bytes, let total, let percent, let rate, let eta):
                    player.events.publish(.downloadProgress(id: id, bytes: bytes, total: total, percent: percent, rate: rate, eta: eta))
                case .state(let id, let state, let reason):
                    player.events.publish(.downloadState(id: id, state: state.rawValue, reason: reason))
                }
            }, ownLicence: ownLicence)
            return (manager, "")
        } catch {
            logger.error("offline store is off: \(error)")
            return (nil, "\(error)")
        }
    }

    /// Items open from the offline store (licences checked there); an item that starts playing
    /// starts its rental's play window.
    private static func keepOffline(_ engine: PlayerEngine, _ offline: OfflineManager) {
        engine.localInput = { offline.localInput(for: $0) }
        let previous = engine.onItemChanged
        engine.onItemChanged = { item in
            previous?(item)
            offline.played(source: item.source)
        }
    }

    /// Saves the position whenever the engine's current item changes.
    private static func keepPosition(of engine: PlayerEngine, in store: ResumeStore) {
        let previous = engine.onItemChanged
        engine.onItemChanged = { [unowned engine] item in
            previous?(item)
            guard let i = engine.index else { return }
            store.record(ResumePoint(index: i, source: item.source, playlist: ResumePoint.identity(of: engine.playlist)))
        }
    }

    /// Where the configured playlist starts: the saved item when the playlist is the same, else 0
    /// (the reason logged). A state file that cannot be used is ignored with a warning.
    private func resumeIndex(in items: [PlaylistItem], store: ResumeStore?) -> Int {
        guard let store, !items.isEmpty else { return 0 }
        do {
            guard let point = try store.read() else {
                logger.notice("resume: no saved position in \(store.directory); starting at item 0")
                return 0
            }
            let (start, reason) = point.start(in: items)
            if let reason {
                logger.notice("resume: starting at item 0: \(reason)")
            } else {
                logger.notice("resumed at item \(start) (\(items[start].source))")
            }
            return start
        } catch {
            logger.warning("resume: \(error); ignored, starting at item 0")
            return 0
        }
    }

    public func run() async throws {
        let log = logger
        var notifier: SystemdNotifier?
        do { notifier = try SystemdNotifier.fromEnvironment() } catch { logger.warning("systemd: \(error)") }
        let readiness = Readiness(waitsForPlayback: !config.playlist.isEmpty && config.autoplay) { [notifier] in
            do { try notifier?.notify("READY=1\nSTATUS=serving on \(config.host):\(config.port)") } catch { log.warning("\(error)") }
        }
        let limits = raiseFileLimit()
        let (player, api) = try await assemble(readiness: readiness)
        var services: [any Service] = [PlayerService(player: player, screen: api.screen, logger: logger)]
        let budget = ConnectionBudget(capacity: limits.connections, logger: logger)
        let server = HTTPServerBuilder.guarded(budget: budget, limits: config.limits, logger: logger)
        let tcp = Application(
            router: api.router(),
            server: server,
            configuration: ApplicationConfiguration(address: .hostname(config.host, port: config.port), serverName: "scanout"),
            onServerRunning: { channel in
                log.notice("listening on http://\(config.host):\(channel.localAddress?.port ?? config.port)")
                readiness.listening()
            },
            logger: logger)
        services.append(tcp)
        if let path = config.unixSocket {
            try prepareSocketPath(path)
            let unix = Application(
                router: api.router(),
                server: server,
                configuration: ApplicationConfiguration(address: .unixDomainSocket(path: path), serverName: "scanout"),
                onServerRunning: { _ in log.notice("listening on unix:\(path)") },
                logger: logger)
            services.append(unix)
        }
        services.append(ReloadService(reloader: ConfigReloader(api: api, logLevel: logLevel, logger: logger),
                                      notifier: notifier, logger: logger))
        if let notifier, let interval = notifier.watchdogInterval {
            services.append(WatchdogService(player: player, notifier: notifier, interval: interval, logger: logger))
        }
        // Shut down first (services stop in reverse order): ends the event streams, which would
        // otherwise keep their connections, and the listeners' graceful shutdown, open.
        services.append(EventStreamCloser(player: player, api: api))
        if let notifier { services.append(StoppingNotice(notifier: notifier, logger: logger)) }
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(
            services: services.map { ServiceGroupConfiguration.ServiceConfiguration(service: $0) },
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger))
        try await group.run()
        if let path = config.unixSocket { unlink(path) }
        logger.notice("stopped")
    }

    /// Raises the soft file limit to the hard one (systemd's soft 1024 would run out under a
    /// thousand connections) and says in the log what the limits and the bounds are.
    private func raiseFileLimit() -> ServiceLimits.Resolved {
        do {
            let (before, after) = try FileDescriptorLimit.raiseToHard()
            let r = config.limits.resolved(fileLimit: after.usable)
            let raised = before.soft == after.soft ? "" : " (raised from \(before.soft))"
            logger.notice("file limit \(after)\(raised): up to \(r.connections) connections and \(r.eventStreams) event streams, \(r.reserve) descriptors kept for media, downloads and the store")
            return r
        } catch {
            let r = config.limits.resolved()
            logger.warning("\(error); up to \(r.connections) connections and \(r.eventStreams) event streams")
            return r
        }
    }

    /// Removes a stale socket left by an earlier run, and makes its directory.
    private func prepareSocketPath(_ path: String) throws {
        let dir = (path as NSString).deletingLastPathComponent
        if !dir.isEmpty { try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true) }
        var st = stat()
        if lstat(path, &st) == 0 {
            guard (st.st_mode & S_IFMT) == S_IFSOCK else {
                throw ConfigFileError(file: path, message: "exists and is not a socket; refusing to replace it (unixSocket)")
            }
            unlink(path)
        }
    }
}

/// The pipeline, from the player's thread where it is made to the first job on the same thread,
/// which hands it to the engine. `@unchecked Sendable`: both touch it on the player's thread only,
/// the job after the display was made.
private final class PipelineSlot: @unchecked Sendable {
    var pipeline: PlaybackPipeline?
    func take() -> PlaybackPipeline? {
        defer { pipeline = nil }
        return pipeline
    }
}

/// Keeps the player (and the screen of zones, with a layout) for the service group's lifetime
/// and stops it on shutdown.
struct PlayerService: Service {
    let player: Player
    let screen: ScreenPlayer?
    let logger: Logger
    func run() async throws {
        try? await gracefulShutdown()
        logger.info("stopping playback")
        screen?.shutdown()
        player.shutdown()
    }
}

/// Ends every event stream when shutdown begins, and says goodbye to the fleet's broker.
struct EventStreamCloser: Service {
    let player: Player
    let api: ControlAPI
    func run() async throws {
        try? await gracefulShutdown()
        api.fleet.withLock { $0 }?.close()
        player.events.finish()
    }
}
