import Foundation
import Hummingbird
import Prometheus
import ScanoutCore
import ScanoutPlayer
import ScanoutSync

/// This service as a member of a sync group (config `sync`): the member on the network
/// (`SyncService`), joined to the player (`GroupPlayback`), and its metrics.
public final class SyncMembership: Sendable {
    public let service: SyncService
    let frameError: ValueHistogram
    let corrections: Counter
    let locked: Gauge

    /// Opens the group's socket and starts the member's thread.
    init(settings: SyncSettings, metrics: PlayerMetrics) throws {
        service = try SyncService(settings: settings)
        let r = metrics.registry
        frameError = r.makeValueHistogram(
            descriptor: MetricNameDescriptor(namespace: "scanout", metricName: "sync_frame_error", unitName: "seconds",
                                             helpText: "Each frame shown while following the sync group: when it reached the screen less when the group's timeline reached it (seconds)."),
            buckets: [-0.05, -0.0167, -0.0084, -0.004, -0.002, -0.001, 0, 0.001, 0.002, 0.004, 0.0084, 0.0167, 0.05])
        corrections = r.makeCounter(descriptor: MetricNameDescriptor(namespace: "scanout", metricName: "sync_corrections", unitName: "total",
                                                                     helpText: "Frames skipped, seeks and item changes made to follow the sync group (count)."))
        locked = r.makeGauge(descriptor: MetricNameDescriptor(namespace: "scanout", metricName: "sync_locked", unitName: "",
                                                              helpText: "1 while this member has the sync group's clock (or leads it), else 0 (boolean)."))
        service.start()
    }

    /// The player's share, made for its engine (on the player's thread).
    func playback() -> GroupPlayback {
        let g = GroupPlayback(group: service)
        g.onFrame = { [frameError] e in frameError.record(e) }
        g.onCorrection = { [corrections] n in corrections.increment(by: Int64(n)) }
        return g
    }

    func observe(_ event: PlayerEvent) {
        switch event {
        case .syncLocked: locked.set(to: 1)
        case .syncLost: locked.set(to: 0)
        default: break
        }
    }

    func stop() { service.stop() }
}

extension ControlAPI {
    /// `GET /sync`: the group, this member's role and lock, the clock's offset and drift, the
    /// timeline, and what the player did to follow it.
    func syncRoutes() -> RouteCollection<ServiceRequestContext> {
        let routes = RouteCollection(context: ServiceRequestContext.self)
        routes.get("/sync") { [self] _, _ in
            guard let sync else {
                throw APIError(.notFound, "this service is in no sync group (config `sync`)", field: "sync")
            }
            let follow = try await player.perform { $0.sync?.stats ?? GroupFollowStats() }
            return jsonResponse(Wire.Sync(sync.service, follow: follow))
        }
        return routes
    }
}

extension Wire {
    /// `GET /sync`.
    struct Sync: Encodable, Sendable {
        struct Timeline: Encodable, Sendable {
            var term: UInt64, index: Int32, item: String, mediaTime: Double, groupTime: Double, rate: Double, paused: Bool
        }
        struct Frames: Encodable, Sendable {
            var onTime: Int, early: Int, late: Int, skipped: Int
            var lastErrorMs: Double?
        }
        struct Sound: Encodable, Sendable {
            var errorMs: Double?
            var stretchPpm: Int
        }
        struct Messages: Encodable, Sendable {
            var sent: Int, received: Int, refused: Int, otherGroup: Int, sendFailures: Int
        }
        var group: String
        var id: String
        var role: String
        var clock: String
        var leading: Bool
        var leader: String?
        var term: UInt64
        var locked: Bool
        /// The group's clock less this member's (ms); null while leading on its own clock.
        var offsetMs: Double?
        var driftPpm: Double?
        var exchanges: Int
        var leaderChanges: Int
        var timeline: Timeline?
        var frames: Frames
        var seeks: Int
        var itemChanges: Int
        var timelinesPublished: Int
        var sound: Sound
        var messages: Messages

        init(_ s: SyncService, follow f: GroupFollowStats) {
            let (node, timeline, counters, changes) = s.status()
            group = s.settings.group.redacted
            id = SyncGroupState.name(of: s.id)
            role = s.settings.role.rawValue
            clock = s.settings.clock.rawValue
            leading = node.leading
            leader = node.leader.map(SyncGroupState.name)
            term = node.term
            locked = node.locked
            offsetMs = node.offset.map { $0 / 1e6 }
            driftPpm = node.driftPPM
            exchanges = node.exchanges
            leaderChanges = changes
            self.timeline = timeline.map {
                Timeline(term: $0.term, index: $0.index, item: $0.item.redacted, mediaTime: Double($0.mediaTime) / 1e9,
                         groupTime: Double($0.groupTime) / 1e9, rate: $0.rate, paused: $0.paused)
            }
            frames = Frames(onTime: f.framesOnTime, early: f.framesEarly, late: f.framesLate, skipped: f.framesSkipped,
                            lastErrorMs: f.lastError.map { $0 * 1000 })
            seeks = f.seeks
            itemChanges = f.itemChanges
            timelinesPublished = f.timelinesPublished
            sound = Sound(errorMs: f.soundError.map { $0 * 1000 }, stretchPpm: f.soundStretchPPM)
            messages = Messages(sent: counters.sent, received: counters.received, refused: counters.refused,
                                otherGroup: counters.otherGroup, sendFailures: counters.sendFailures)
        }
    }
}
