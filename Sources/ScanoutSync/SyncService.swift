import Foundation
#if canImport(Glibc)
import Glibc
#endif
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
    /// Where this member's datagrams go when not to the group itself: a relay, or a network that
    /// does not route multicast (an IPv4 address and port); nil: the group.
    public var sendTo: (host: String, port: UInt16)?
    /// Whose clock is the group's: the leader's, estimated by exchanges (`group`), or the system
    /// clock (`CLOCK_REALTIME`) where chrony, ptp4l or a PTP hardware clock already disciplines
    /// every member's (`system`).
    public var clock: ClockSource = .group
    /// A test seam: this member's clock as if it were off and drifting (`SCANOUT_SYNC_CLOCK_SKEW`).
    public var skew = ClockSkew()

    public enum ClockSource: String, Sendable, Equatable, CaseIterable { case group, system }

    public init(group: String, role: SyncNode.Role, priority: UInt32 = 100, address: String = "239.255.42.42", port: UInt16 = 5398,
                interface: String? = nil, key: [UInt8]) {
        self.group = group; self.role = role; self.priority = priority; self.address = address
        self.port = port; self.interface = interface; self.key = key
    }

    public static func == (a: SyncSettings, b: SyncSettings) -> Bool {
        a.group == b.group && a.role == b.role && a.priority == b.priority && a.address == b.address && a.port == b.port
            && a.interface == b.interface && a.key == b.key && a.sendTo?.host == b.sendTo?.host && a.sendTo?.port == b.sendTo?.port
            && a.clock == b.clock && a.skew == b.skew
    }
}

/// A clock made to read `offset` ns off and to run `ppm` parts per million fast: what a member's
/// clock is taken to be in the sync benchmark and its test (`SCANOUT_SYNC_CLOCK_SKEW`), so that
/// devices whose clocks are seconds apart and drift can run on one machine.
public struct ClockSkew: Sendable, Equatable {
    public var offset: Int64 = 0
    public var ppm: Double = 0
    public init(offset: Int64 = 0, ppm: Double = 0) { self.offset = offset; self.ppm = ppm }

    /// The skewed reading of a clock that reads `ns`.
    public func reading(_ ns: Int64) -> Int64 { ns &+ offset &+ Int64((Double(ns) * ppm / 1e6).rounded()) }

    /// `SECONDS:PPM` (e.g. `-3.2:85`); nil for anything else.
    public init?(parsing s: String) {
        let parts = s.split(separator: ":")
        guard parts.count == 2, let seconds = Double(parts[0]), let ppm = Double(parts[1]), seconds.isFinite, abs(seconds) < 1e6,
              ppm.isFinite, abs(ppm) <= 1000 else { return nil }
        self.init(offset: Int64((seconds * 1e9).rounded()), ppm: ppm)
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
    /// Where it listens and sends, for the log.
    public var description: String { socket.description }
    let lock = NSLock()
    var node: SyncNode
    private var counters = Counters()
    private var stopped = false
    private let socket: MulticastSocket
    private let codec: SyncCodec
    private let clock: any PlaybackClock
    private var thread: Thread?

    /// `clock`: the player's clock (the monotonic one), which `groupTime(at:)` is asked on.
    public init(settings: SyncSettings, id: UInt64 = UInt64.random(in: 1...UInt64.max), clock: any PlaybackClock = MonotonicClock()) throws {
        self.settings = settings
        self.id = id
        self.clock = clock
        codec = try SyncCodec(group: settings.group, key: settings.key)
        socket = try MulticastSocket(group: settings.address, port: settings.port, interface: settings.interface, sendTo: settings.sendTo)
        var configuration = SyncNode.Configuration(role: settings.role, priority: settings.priority)
        configuration.systemClock = settings.clock == .system
        node = SyncNode(id: id, configuration: configuration)
    }

    deinit { stop() }

    /// This member's clock (ns) at `now` on the player's clock, the scale every local time here
    /// is on: the skewed monotonic clock, or with `clock: system` the system clock.
    public func local(at now: ClockTime) -> Int64 {
        let ns = Int64(clamping: now.nanoseconds)
        guard settings.clock == .system else { return settings.skew.reading(ns) }
        var realtime = timespec(), monotonic = timespec()
        clock_gettime(CLOCK_REALTIME, &realtime)
        clock_gettime(CLOCK_MONOTONIC, &monotonic)
        let r = Int64(realtime.tv_sec) * 1_000_000_000 + Int64(realtime.tv_nsec)
        let m = Int64(monotonic.tv_sec) * 1_000_000_000 + Int64(monotonic.tv_nsec)
        return settings.skew.reading(r - m + ns)
    }

    public func localNow() -> Int64 { local(at: clock.now()) }

    public func start() {
        let t = Thread(named: "scanout-sync") { [self] in run() }
        thread = t
        t.start()
    }

    /// Ends the member's thread (within about 10 ms).
    public func stop() { lock.withLock { stopped = true } }

    public func status() -> (node: SyncNode.Status, timeline: SyncTimeline?, counters: Counters, changes: Int) {
        let now = localNow()
        return lock.withLock { (node.status(atLocal: now), node.timeline, counters, node.leaderChanges) }
    }

    /// The group's time now; nil before this member knows it.
    public func groupTime() -> Int64? { groupTime(atLocal: localNow()) }
    public func groupTime(atLocal local: Int64) -> Int64? { lock.withLock { node.groupTime(atLocal: local) } }

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

extension SyncService: SyncGroup {
    public func groupTime(at now: ClockTime) -> Int64? { groupTime(atLocal: local(at: now)) }
    public var currentTimeline: SyncTimeline? { lock.withLock { node.timeline } }
    public var isLeading: Bool { lock.withLock { node.leading } }
    public var groupState: SyncGroupState {
        let s = status().node
        return SyncGroupState(leading: s.leading, leader: s.leader, term: s.term, locked: s.locked)
    }
    /// The leader's timeline, sent out at once (ignored by a member that does not lead).
    public func publish(_ t: SyncTimeline) { lock.withLock { node.publish(t) } }
}
