import Foundation
import ScanoutCore

/// Where a member of a sync group listens and what it says about itself.
public struct SyncSettings: Sendable, Equatable {
    public var group: String
    public var role: SyncNode.Role
    public var priority: UInt32
    /// The IPv4 multicast group and port the members share.
    public var address: String
    public var port: UInt16
    /// The interface to join on (a name or an IPv4 address); nil: the route's.
    public var interface: String?
    /// The group's shared secret (at least 16 bytes).
    public var key: [UInt8]

    public init(group: String, role: SyncNode.Role, priority: UInt32 = 100, address: String = "239.255.42.42", port: UInt16 = 5398,
                interface: String? = nil, key: [UInt8]) {
        self.group = group; self.role = role; self.priority = priority; self.address = address
        self.port = port; self.interface = interface; self.key = key
    }
}

/// A member of a sync group on the network: a `SyncNode` driven on a thread of its own by the
/// monotonic clock and the datagrams of a `MulticastSocket`, through the group's codec. Reads
/// (`status`, `groupTime`) and the leader's `publish` may come from any thread.
///
/// `@unchecked Sendable`: the node and the counters are read and written under `lock`; the socket
/// and codec are used by the member's thread only, and `stopped` under `lock`.
public final class SyncService: @unchecked Sendable {
    public struct Counters: Equatable, Sendable {
        public var sent = 0
        public var received = 0
        /// Datagrams whose tag did not match the key, or that were not sync messages at all.
        public var refused = 0
        /// Another group's traffic on the same address.
        public var otherGroup = 0
        public var sendFailures = 0
    }

    public let settings: SyncSettings
    public let id: UInt64
    let lock = NSLock()
    var node: SyncNode
    private var counters = Counters()
    private var stopped = false
    private let socket: MulticastSocket
    private let codec: SyncCodec
    private let clock: any PlaybackClock
    private var thread: Thread?

    public init(settings: SyncSettings, id: UInt64 = UInt64.random(in: 1...UInt64.max), clock: any PlaybackClock = MonotonicClock()) throws {
        self.settings = settings
        self.id = id
        self.clock = clock
        codec = try SyncCodec(group: settings.group, key: settings.key)
        socket = try MulticastSocket(group: settings.address, port: settings.port, interface: settings.interface)
        node = SyncNode(id: id, configuration: .init(role: settings.role, priority: settings.priority))
    }

    deinit { stop() }

    /// This member's clock (ns), the scale every local time here is on.
    public func localNow() -> Int64 { Int64(clamping: clock.now().nanoseconds) }

    public func start() {
        let t = Thread(named: "scanout-sync") { [self] in run() }
        thread = t
        t.start()
    }

    /// Ends the member's thread (within about 10 ms).
    public func stop() { lock.withLock { stopped = true } }

    public func status() -> (node: SyncNode.Status, timeline: Timeline?, counters: Counters, changes: Int) {
        let now = localNow()
        return lock.withLock { (node.status(atLocal: now), node.timeline, counters, node.leaderChanges) }
    }

    /// The group's time now; nil before this member knows it.
    public func groupTime() -> Int64? { groupTime(atLocal: localNow()) }

    /// The leader's timeline, sent out at once (ignored by a member that does not lead).
    public func publish(_ t: Timeline) { lock.withLock { node.publish(t) } }

    private func run() {
        while !lock.withLock({ stopped }) {
            if let datagram = socket.receive(within: 10) { take(datagram) }
            let now = localNow()
            send(lock.withLock { node.tick(atLocal: now) })
        }
    }

    private func take(_ datagram: [UInt8]) {
        let now = localNow()
        let message: SyncMessage
        do {
            message = try codec.decode(datagram)
        } catch SyncCodecError.otherGroup {
            lock.withLock { counters.otherGroup += 1 }
            return
        } catch {
            lock.withLock { counters.refused += 1 }
            return
        }
        guard message.sender != id else { return }   // our own, looped back
        let answer = lock.withLock {
            counters.received += 1
            return node.receive(message, atLocal: now)
        }
        send(answer)
    }

    private func send(_ messages: [SyncMessage]) {
        for m in messages {
            do {
                try socket.send(try codec.encode(m))
                lock.withLock { counters.sent += 1 }
            } catch {
                lock.withLock { counters.sendFailures += 1 }
            }
        }
    }
}
