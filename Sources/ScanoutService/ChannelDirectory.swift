import Foundation
import Logging
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ScanoutPlayer
import Synchronization

/// The service's channel list (`channels` in the config): the M3U playlist read at start, and the
/// SAP sessions heard since, merged (`ChannelList`). Changes reach the player's loop as events:
/// `channelsChanged` when channels come or go, and, when the channel that plays is withdrawn,
/// `channelInvalid` followed by a stop with the service down (`channelInvalid`).
///
/// The SAP listener's thread calls in with each message; the routes read and tune from request
/// tasks; the list is under a mutex, and the player is reached through its job queue.
public final class ChannelDirectory: Sendable {
    private struct State {
        var list: ChannelList
        /// The channel tuned last (`POST /channel`, next, previous).
        var tuned: String?
    }
    private let state: Mutex<State>
    private let player: Player
    private let logger: Logger
    private let listener = Mutex<SAPListener?>(nil)

    /// Reads the M3U playlist and starts the SAP listener that `config` names. A source that
    /// cannot be used is logged (and reported as a `warning` event) and left out: the service
    /// runs with the rest.
    public init(config: ChannelsConfig, player: Player, logger: Logger, timeout: Double) {
        self.player = player
        self.logger = logger
        var playlist: [Channel] = []
        if let m3u = config.m3u {
            do {
                playlist = try M3UPlaylist.load(m3u, timeout: timeout)
                logger.info("channel list \(m3u): \(playlist.count) channels")
            } catch {
                let message = "\(error)"
                logger.error("\(message); no channel from it is listed")
                player.submit { $0.reportWarning(message) }
            }
        }
        state = Mutex(State(list: ChannelList(playlist: playlist, sapTimeout: config.sap?.timeout)))
        if let sap = config.sap {
            do {
                let l = try SAPListener(options: sap, onMessage: { [weak self] in self?.received($0) },
                                        onIdle: { [weak self] in self?.expire() })
                listener.withLock { $0 = l }
                logger.info("listening for SAP announcements on \(sap.url)\(sap.interface.map { " (interface \($0))" } ?? "")")
            } catch {
                let message = "SAP announcements on \(sap.url): \(error); channels are not announced"
                logger.error("\(message)")
                player.submit { $0.reportWarning(message) }
            }
        }
    }

    deinit { listener.withLock { $0?.stop() } }

    /// Reads the M3U playlist of `config` again (a reload): channels that left it go as SAP
    /// withdrawals do (`channelInvalid` and a stop when it is the one playing), new ones are
    /// added. A playlist that cannot be read now keeps the channels read before.
    public func reloadPlaylist(_ config: ChannelsConfig, timeout: Double) {
        var playlist: [Channel] = []
        if let m3u = config.m3u {
            do {
                playlist = try M3UPlaylist.load(m3u, timeout: timeout)
            } catch {
                logger.error("reload: \(error); the channels read before are kept")
                return
            }
        }
        let changes = state.withLock { $0.list.replacePlaylist(playlist) }
        logger.notice("channel list reloaded: \(channels.count) channels, \(changes.added.count) added, \(changes.removed.count) removed")
        publish(changes)
    }

    public var channels: [Channel] { state.withLock { $0.list.channels } }
    public var tuned: String? { state.withLock { $0.tuned } }

    public func channel(id: String) -> Channel? { state.withLock { $0.list.channel(id: id) } }

    /// The channel `step` places after the tuned one (wrapping), nil when the list is empty.
    public func channel(step: Int) -> Channel? { state.withLock { $0.list.channel(after: $0.tuned, step: step) } }

    /// Records `channel` as the one tuned (before it is loaded).
    func tune(_ channel: Channel) { state.withLock { $0.tuned = channel.id } }

    private func received(_ r: Result<SAPMessage, SAPError>) {
        switch r {
        case .success(let m):
            let changes = state.withLock { $0.list.apply(m, at: ClockTime.now()) }
            publish(changes)
        case .failure(let e):
            logger.debug("SAP: \(e); ignored")
        }
    }

    private func expire() {
        publish(state.withLock { $0.list.expire(at: ClockTime.now()) })
    }

    /// Hands the changes to the player's loop: the withdrawn channel that plays is stopped there,
    /// then the list's change is announced.
    private func publish(_ changes: ChannelList.Changes) {
        guard !changes.isEmpty else { return }
        let (count, tuned) = state.withLock { ($0.list.channels.count, $0.tuned) }
        let invalid = changes.removed.first { $0.channel.id == tuned }
        logChanges(changes)
        let added = changes.added.map(\.id), removed = changes.removed.map(\.channel.id)
        player.submit { engine in
            if let invalid, ChannelDirectory.plays(invalid.channel, on: engine) {
                engine.stop(reporting: .channelInvalid(id: invalid.channel.id, reason: invalid.reason), reason: .channelInvalid)
            }
            engine.report(.channelsChanged(count: count, added: added, removed: removed))
        }
    }

    /// How many channels a change names one line each; past it, one line sums it up.
    static let channelsLoggedOneByOne = 5

    /// One line per channel that came or went, or (a reload of a long list) one line that counts
    /// them and names the first few: a 100,000-channel list costs a line, not 100,000.
    private func logChanges(_ changes: ChannelList.Changes) {
        let limit = Self.channelsLoggedOneByOne
        if changes.removed.count <= limit {
            for r in changes.removed { logger.notice("channel \(r.channel.id) (\(r.channel.name)) left the list: \(r.reason)") }
        } else {
            let reasons = Set(changes.removed.map(\.reason)).sorted()
            let named = Self.summary(changes.removed.map(\.channel), limit: limit)
            logger.notice("\(changes.removed.count) channels left the list (\(reasons.prefix(3).joined(separator: "; "))): \(named)")
        }
        if changes.added.count <= limit {
            for c in changes.added { logger.info("channel \(c.id) (\(c.name)) announced: \(c.url)") }
        } else {
            logger.info("\(changes.added.count) channels added: \(Self.summary(changes.added, limit: limit))")
        }
    }

    /// `id (name), ...` of the first `limit` channels, and how many more.
    static func summary(_ channels: [Channel], limit: Int) -> String {
        let named = channels.prefix(limit).map { "\($0.id) (\($0.name))" }.joined(separator: ", ")
        return channels.count > limit ? named + " and \(channels.count - limit) more" : named
    }

    /// Whether `engine`'s current item is `channel`'s stream, loaded and not stopped or ended.
    static func plays(_ channel: Channel, on engine: PlayerEngine) -> Bool {
        let s = engine.snapshot()
        guard let i = s.index, s.playlist.indices.contains(i), s.playlist[i].source == channel.url else { return false }
        return ![.idle, .stopped, .ended, .error].contains(s.state)
    }
}
