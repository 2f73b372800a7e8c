import Foundation
import Logging
import ScanoutPlayer
import ServiceLifecycle
import Synchronization
import UnixSignals

/// Says `READY=1` once, when both halves of start-up are done: the listeners are up, and the
/// first item is on screen (the service state went up), or nothing can be played and the slate is
/// up (the player is in `error`), or there was nothing to start (no playlist, or `autoplay` off:
/// the first frame is decoded and waiting).
final class Readiness: Sendable {
    private struct State {
        var listening = false
        var playback = false
        var announced = false
    }
    private let state: Mutex<State>
    private let announce: @Sendable () -> Void

    init(waitsForPlayback: Bool, announce: @escaping @Sendable () -> Void) {
        state = Mutex(State(playback: !waitsForPlayback))
        self.announce = announce
    }

    func listening() { update { $0.listening = true } }
    func playbackStarted() { update { $0.playback = true } }

    /// Whether `event` is the one start-up waits for.
    static func startsPlayback(_ event: PlayerEvent) -> Bool {
        switch event {
        case .serviceState(let up, _): return up
        case .stateChanged(_, let to): return to == .error
        default: return false
        }
    }

    private func update(_ change: (inout State) -> Void) {
        let now = state.withLock { s -> Bool in
            change(&s)
            guard s.listening && s.playback && !s.announced else { return false }
            s.announced = true
            return true
        }
        if now { announce() }
    }
}

/// Feeds systemd's watchdog from the player's loop: every half interval a no-op job goes through
/// the loop's queue, and `WATCHDOG=1` is sent only once the loop has run it. The loop runs jobs
/// between two frames (or at once when idle), so a loop that stops turning stops the feeding and
/// systemd restarts the service, even though the HTTP listeners still answer.
struct WatchdogService: Service {
    let player: Player
    let notifier: SystemdNotifier
    let interval: Duration
    let logger: Logger

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    _ = try await player.perform { _ in 0 }
                } catch {
                    return   // the player is stopping
                }
                do {
                    try notifier.notify("WATCHDOG=1")
                } catch {
                    logger.warning("watchdog: \(error)")
                }
                try await Task.sleep(for: interval / 2)
            }
        }
    }
}

/// `STOPPING=1` as soon as a graceful shutdown begins (listed last, so it is told first).
struct StoppingNotice: Service {
    let notifier: SystemdNotifier
    let logger: Logger

    func run() async throws {
        try? await gracefulShutdown()
        do { try notifier.notify("STOPPING=1") } catch { logger.warning("\(error)") }
    }
}

/// SIGHUP (`systemctl reload`): the config file is read again and what can change at run time is
/// applied to the running player, without stopping playback. A file that cannot be used is
/// reported and the running configuration kept.
struct ReloadService: Service {
    let reloader: ConfigReloader
    let notifier: SystemdNotifier?
    let logger: Logger

    func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sighup)
        await cancelWhenGracefulShutdown {
            for await _ in signals {
                do { try notifier?.reloading() } catch { logger.warning("\(error)") }
                await reloader.reload()
                do { try notifier?.notify("READY=1\nSTATUS=playing; configuration reloaded") } catch { logger.warning("\(error)") }
            }
        }
    }
}

/// Re-reads the config file and applies it to the player: the runtime fields (scaling, slate,
/// intervals, log level, repeat) and the playlist when it changed (the picture on screen stays
/// until the new playlist's first item is ready). Fields that need a restart and changed in the
/// file since it was last read are named in a warning.
final class ConfigReloader: Sendable {
    /// The file's own settings as last read (options may override the file, so a restart field
    /// counts as changed when the file changed it). The running settings are the control API's.
    private let lastRead: Mutex<ServiceConfig?>
    private let api: ControlAPI
    private let logLevel: LogLevelControl
    private let logger: Logger

    init(api: ControlAPI, logLevel: LogLevelControl, logger: Logger) {
        lastRead = Mutex(api.currentConfig.file.flatMap { try? ServiceConfig.load(file: $0) })
        self.api = api
        self.logLevel = logLevel
        self.logger = logger
    }

    /// The fields that take a restart and differ between `old` and `new`, named as `GET /config`
    /// shows them.
    static func restartChanges(from old: ServiceConfig, to new: ServiceConfig) -> [String] {
        let differs: KeyValuePairs<String, Bool> = [
            "host": old.host != new.host, "port": old.port != new.port, "unixSocket": old.unixSocket != new.unixSocket,
            "tokenSet": (old.token != nil) != (new.token != nil), "output": old.output != new.output,
            "outputSize": old.outputWidth != new.outputWidth || old.outputHeight != new.outputHeight,
            "threads": old.threads != new.threads, "timeout": old.timeout != new.timeout,
            "playerType": old.playerType != new.playerType, "hwBackend": old.hwBackend != new.hwBackend,
            "outputRefresh": old.outputRefresh != new.outputRefresh, "sync": old.sync != new.sync,
            "mqtt": old.mqtt != new.mqtt, "cec": old.cec != new.cec,
        ]
        return differs.filter(\.value).map(\.key)
    }

    func reload() async {
        let current = api.currentConfig, lastRead = self.lastRead.withLock { $0 }
        guard let file = current.file else {
            logger.warning("SIGHUP: no config file to read again (started without one); nothing changed")
            return
        }
        let fresh: ServiceConfig
        do {
            fresh = try ServiceConfig.load(file: file)
        } catch {
            logger.error("reload refused, the running configuration is kept: \(error)")
            return
        }
        var next = current
        next.scaling = fresh.scaling
        next.imageDuration = fresh.imageDuration
        next.slate = fresh.slate
        next.subtitles = fresh.subtitles
        next.positionInterval = fresh.positionInterval
        next.retryInterval = fresh.retryInterval
        next.logLevel = fresh.logLevel
        next.repeatMode = fresh.repeatMode
        next.autoplay = fresh.autoplay
        next.playlist = fresh.playlist
        var needRestart = Self.restartChanges(from: lastRead ?? current, to: fresh)
        // The channel playlist is read again (its file or URL may have changed, or only its
        // content); where SAP is listened to needs a restart.
        if fresh.channels.sap != (lastRead ?? current).channels.sap { needRestart.append("channels.sap") }
        // The listeners were built with the connection bound and timeouts.
        if fresh.limits != (lastRead ?? current).limits { needRestart.append("limits") }
        // A screen of zones takes a new layout as PUT /layout does; one picture becoming zones
        // (or the reverse) takes a restart.
        if fresh.layout != (lastRead ?? current).layout {
            if api.screen != nil, let layout = fresh.layout {
                await api.reload(layout: layout)
                next.layout = api.currentConfig.layout
            } else {
                needRestart.append("layout")
            }
        }
        next.channels.m3u = fresh.channels.m3u
        api.channels.reloadPlaylist(next.channels, timeout: current.timeout)
        // A schedule says what plays: the file's replaces the running one (its playlists checked
        // as at start), and the playlist is then its default's; without one any more, the
        // playlist plays again.
        let scheduled = fresh.schedule != nil
        if fresh.schedule != current.schedule || (scheduled && fresh.playlist != current.playlist) {
            next.schedule = fresh.schedule
            do {
                let refused: (String, any Error) -> Void = { [logger] field, error in logger.error("reload: schedule.\(field): \(error); the item is left out") }
                let checked = try await fresh.schedule.asyncMap { try await api.authorize($0, onRefused: refused) }
                let fallback = try await api.authorize(fresh.playlist, field: "playlist", onRefused: refused)
                api.scheduler.replace(checked, fallback: fallback)
                if checked != nil {
                    await api.scheduler.turn()
                    api.startSchedule()
                }
            } catch {
                logger.error("reload: schedule: \(error); the running schedule is kept")
            }
        }
        let newPlaylist = scheduled ? false : (fresh.playlist != current.playlist || current.schedule != nil) && !fresh.playlist.isEmpty
        let updated = next
        do {
            // The new playlist's content tokens are verified as the kiosk config's are at start:
            // an item whose token does not verify is left out and named.
            let items = newPlaylist ? try await api.authorize(updated.playlist, field: "playlist") { [logger] field, error in
                logger.error("reload: \(field): \(error); the item is left out")
            } : []
            _ = try await api.player.perform { e in
                e.adoptRuntimeSettings(of: updated)
                e.setRepeat(updated.repeatMode)
                if !items.isEmpty { try e.load(items, autoplay: updated.autoplay) }
                return 0
            }
        } catch {
            logger.error("reload: \(error); the settings were applied, the playlist was not")
        }
        self.lastRead.withLock { $0 = fresh }
        api.adopt(reloaded: updated)
        logLevel.current = updated.logLevel
        logger.notice("configuration reloaded from \(file)", metadata: ["playlist": "\(newPlaylist ? "replaced" : "unchanged")"])
        if !needRestart.isEmpty {
            logger.warning("reload: \(needRestart.joined(separator: ", ")) changed in \(file) and take effect at the next restart")
        }
    }
}
