import Foundation
import HTTPTypes
import Logging
import ScanoutMQTT
import ScanoutOffline
import ScanoutPlayer
import Synchronization

/// This box as one of a fleet, through an MQTT broker (config `mqtt`). Topics, under
/// `PREFIX/ID` (`scanout/<clientId>`):
///
/// - `cmd` and `PREFIX/group/GROUP/cmd` (in, QoS 1): a command, `{"method", "path", "body", "id"}`,
///   answered by the HTTP API's own router (`InProcessRequests`) on `reply`
///   (`{"id", "status", "body"}`);
/// - `status` (retained): `online`, or `offline` (the will, when the box goes without a goodbye);
/// - `state` (retained): `GET /state`'s body, after every change;
/// - `events` (QoS 0): every event as `/events` has it (`position` left out);
/// - `proof-of-play` and `stats` (QoS 1): from the store's queue (`FleetQueue`), removed once the
///   broker has them; each carries an `id` a receiver drops duplicates by.
final class FleetLink: Sendable {
    let settings: FleetSettings
    let queue: FleetQueue
    private let client: MQTTClient
    private let relay: Relay
    private let logger: Logger

    /// Counts for `/stats` and the tests.
    struct Counts: Sendable, Equatable {
        var commands = 0, forwarded = 0, acknowledged = 0, connections = 0
    }

    /// What libmosquitto's callbacks reach: set once the link is whole.
    private final class Relay: Sendable {
        let link = Mutex<FleetLink?>(nil)
    }

    /// The sending side: QoS 1 messages out and not yet acknowledged, by message id, and the
    /// highest queue position sent on this connection.
    private struct Sending {
        var inflight: [Int32: Int64] = [:]
        var earlyAcks: Set<Int32> = []
        var sentUpTo: Int64 = 0
        var counts = Counts()
    }

    private let sending = Mutex(Sending())
    private let pumpSignal = Mutex<AsyncStream<Void>.Continuation?>(nil)
    private let commandQueue = Mutex<AsyncStream<MQTTMessage>.Continuation?>(nil)
    private let requests: InProcessRequests
    private let api: ControlAPI
    static let maxInflight = 20

    init(settings: FleetSettings, api: ControlAPI, queue: FleetQueue, logger: Logger) throws(MQTTError) {
        self.settings = settings
        self.queue = queue
        self.api = api
        self.logger = logger
        requests = InProcessRequests(router: api.router(), logger: logger)
        let relay = Relay()
        self.relay = relay
        var c = MQTTCallbacks()
        c.connected = { relay.link.withLock { $0 }?.connected() }
        c.disconnected = { why in relay.link.withLock { $0 }?.logger.warning("mqtt: \(why); trying again") }
        c.error = { text in relay.link.withLock { $0 }?.logger.warning("mqtt: \(text)") }
        c.message = { m in relay.link.withLock { $0 }?.received(m) }
        c.acknowledged = { mid in relay.link.withLock { $0 }?.acknowledged(mid) }
        client = try MQTTClient(settings: settings.client, callbacks: c)
        relay.link.withLock { $0 = self }
    }

    var counts: Counts { sending.withLock { $0.counts } }
    var isConnected: Bool { client.isConnected }

    /// Connects, and from then on sends the queue, the state and the events.
    func start(player: Player) throws(MQTTError) {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        pumpSignal.withLock { $0 = continuation }
        queue.onQueued { continuation.yield() }
        let (commands, commandsIn) = AsyncStream<MQTTMessage>.makeStream(bufferingPolicy: .bufferingOldest(1000))
        commandQueue.withLock { $0 = commandsIn }
        Task { [weak self] in await self?.answerCommands(commands) }
        Task { [weak self] in
            for await _ in stream { self?.pump() }
        }
        Task { [weak self] in
            // Stats records, and a resend of what a lost connection left unacknowledged.
            var lastStats = Date()
            while true {
                try? await Task.sleep(for: .seconds(1))
                guard let self, !self.closed.withLock({ $0 }) else { return }
                if Date().timeIntervalSince(lastStats) >= settings.statsInterval {
                    lastStats = Date()
                    queueStats()
                }
                continuation.yield()
            }
        }
        player.events.addListener { [weak self] n in self?.observe(n, player: player) }
        try client.start()
        logger.notice("mqtt: \(settings.url) as \(settings.clientId)\(settings.groups.isEmpty ? "" : ", groups \(settings.groups.joined(separator: ", "))")")
    }

    /// Says `offline` on the status topic (a goodbye sends no will), and disconnects.
    func close() {
        guard !closed.withLock({ c in defer { c = true }; return c }) else { return }
        pumpSignal.withLock { $0?.finish() }
        commandQueue.withLock { $0?.finish() }
        try? client.publish(settings.topic("status"), Array("offline".utf8), qos: 1, retain: true)
        relay.link.withLock { $0 = nil }
        client.close()
    }

    private let closed = Mutex(false)

    // MARK: The broker's side (libmosquitto's thread)

    private func connected() {
        sending.withLock { s in
            // What was in flight is sent again (the receiver drops duplicates by id).
            s.inflight = [:]
            s.earlyAcks = []
            s.sentUpTo = 0
            s.counts.connections += 1
        }
        do {
            try client.subscribe(settings.topic("cmd"), qos: 1)
            for g in settings.groups { try client.subscribe(settings.groupCommands(g), qos: 1) }
            try client.publish(settings.topic("status"), Array("online".utf8), qos: 1, retain: true)
            publishState(api.player.snapshot)
        } catch {
            logger.warning("mqtt: \(error)")
        }
        logger.notice("mqtt: connected to \(settings.url)")
        pumpSignal.withLock { $0 }?.yield()
    }

    /// Commands are carried out one after the other, in the order they arrived (as MQTT keeps
    /// them): a `load` then a `seek` is never a seek first.
    private func received(_ m: MQTTMessage) {
        sending.withLock { $0.counts.commands += 1 }
        commandQueue.withLock { $0 }?.yield(m)
    }

    private func answerCommands(_ stream: AsyncStream<MQTTMessage>) async {
        for await m in stream {
            let reply = await FleetCommand.answer(m.payload, requests: requests)
            do {
                try client.publish(settings.topic("reply"), reply, qos: 1)
            } catch {
                logger.warning("mqtt: the reply to a command on \(m.topic) was not sent: \(error)")
            }
        }
    }

    private func acknowledged(_ mid: Int32) {
        let seq: Int64? = sending.withLock { s in
            guard let seq = s.inflight.removeValue(forKey: mid) else {
                s.earlyAcks.insert(mid)
                return nil
            }
            s.counts.acknowledged += 1
            return seq
        }
        guard let seq else { return }
        queue.remove(seq)
        pumpSignal.withLock { $0 }?.yield()
    }

    // MARK: Sending

    /// Sends the queue's next messages, up to `maxInflight` unacknowledged.
    private func pump() {
        guard client.isConnected else { return }
        let (room, after) = sending.withLock { (Self.maxInflight - $0.inflight.count, $0.sentUpTo) }
        guard room > 0 else { return }
        for m in queue.pending(after: after, limit: room) {
            let mid: Int32
            do {
                mid = try client.publish(m.topic, m.payload, qos: 1)
            } catch {
                if error != .notConnected { logger.warning("mqtt: \(error)") }
                return
            }
            let early = sending.withLock { s -> Bool in
                s.sentUpTo = max(s.sentUpTo, m.seq)
                s.counts.forwarded += 1
                // Acknowledged before it was written down here (libmosquitto's thread is quick).
                if s.earlyAcks.remove(mid) != nil {
                    s.counts.acknowledged += 1
                    return true
                }
                s.inflight[mid] = m.seq
                return false
            }
            if early { queue.remove(m.seq) }
        }
    }

    private func observe(_ n: EventHub.Numbered, player: Player) {
        guard client.isConnected else { return }
        if case .position = n.event { return }
        try? client.publish(settings.topic("events"), Array(WireJSON.data(Wire.Event(n))), qos: 0)
        // The state of the main picture (of the whole screen without a layout), as `/state` says it.
        if n.zone == api.screen?.layout.mainZone { publishState(player.snapshot) }
    }

    private func publishState(_ s: PlayerSnapshot) {
        try? client.publish(settings.topic("state"), Array(WireJSON.data(Wire.State(s))), qos: 1, retain: true)
    }

    private func queueStats() {
        let record = FleetRecord(id: UUID().uuidString.lowercased(), device: settings.clientId, kind: "stats",
                                 time: ISOTime.format(Date()), stats: api.stats(), play: nil)
        queue.enqueue(OutboxMessage.Draft(topic: settings.topic("stats"), payload: Array(WireJSON.data(record))))
    }

    /// The message a play that ended is forwarded as.
    static func message(for play: PlayRecord, settings: FleetSettings) -> OutboxMessage.Draft {
        let record = FleetRecord(id: play.id, device: settings.clientId, kind: "play", time: ISOTime.format(Date(timeIntervalSince1970: play.end)),
                                 stats: nil, play: Wire.Play(play))
        return OutboxMessage.Draft(topic: settings.topic("proof-of-play"), payload: Array(WireJSON.data(record)), created: play.end)
    }
}

/// A record forwarded to the broker: its id (a receiver drops duplicates by it), the device,
/// what it is and when, and the record.
struct FleetRecord: Encodable, Sendable {
    var id: String
    var device: String
    var kind: String
    var time: String
    var stats: Wire.Stats?
    var play: Wire.Play?
}
