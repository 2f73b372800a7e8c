import Foundation

/// `limits`: how much of the machine clients may hold, so that a flood of connections costs
/// them their answer and never the player its media (`ConnectionGate`, `EventStreamLimit`).
///
///     limits {connections, eventStreams, headerTimeout (s), idleTimeout (s)}
///
/// `connections` and `eventStreams` left out are derived from the file limit (`resolved`), which
/// keeps descriptors in reserve for media, downloads, the offline store and the runtime.
public struct ServiceLimits: Sendable, Equatable {
    /// Connections open at once over TCP and the Unix socket together; nil: from the file limit.
    public var connections: Int?
    /// Event streams (`GET /events`) open at once; nil: from the file limit.
    public var eventStreams: Int?
    /// Seconds a client has to send a whole request head, from its connection's start or from
    /// the first byte of a request after an idle time.
    public var headerTimeout = 10.0
    /// Seconds a connection may stay open with no request in flight (a response being written,
    /// an event stream among them, is never idle).
    public var idleTimeout = 60.0

    public init() {}

    /// The bounds in force.
    public struct Resolved: Sendable, Equatable {
        public var connections: Int
        public var eventStreams: Int
        /// Descriptors kept free for everything that is not a client.
        public var reserve: Int
    }

    /// Derived bounds: `reserve` is max(256, an eighth of the limit) (half of a limit under 512);
    /// connections take the rest, up to 16,384; event streams half the connections. Configured
    /// values win, but not past what the file limit holds.
    public func resolved(fileLimit: Int) -> Resolved {
        let limit = max(16, fileLimit)
        let reserve = limit < 512 ? limit / 2 : max(256, limit / 8)
        let room = max(1, limit - reserve - ConnectionGate.overflowCapacity)
        let c = min(connections ?? min(room, 16_384), room)
        let e = min(eventStreams ?? max(1, c / 2), c)
        return Resolved(connections: c, eventStreams: e, reserve: reserve)
    }

    /// The bounds for the process's current file limit.
    public func resolved() -> Resolved {
        resolved(fileLimit: (try? FileDescriptorLimit.current().usable) ?? 1024)
    }
}

extension Wire.ConfigBody {
    struct Limits: Decodable {
        enum Field: String, CodingKey, CaseIterable { case connections, eventStreams, headerTimeout, idleTimeout }
        var connections: Int?
        var eventStreams: Int?
        var headerTimeout: Double?
        var idleTimeout: Double?

        init(from decoder: any Swift.Decoder) throws {
            let c = try decoder.container(keyedBy: Field.self)
            connections = try c.decodeIfPresent(Int.self, forKey: .connections, in: 1...1_000_000)
            eventStreams = try c.decodeIfPresent(Int.self, forKey: .eventStreams, in: 1...1_000_000)
            headerTimeout = try c.decodeIfPresent(Double.self, forKey: .headerTimeout, in: 0.1...3600)
            idleTimeout = try c.decodeIfPresent(Double.self, forKey: .idleTimeout, in: 0.1...86_400)
        }
    }
}

extension ServiceConfig {
    mutating func applyLimits(_ l: Wire.ConfigBody.Limits) {
        if let v = l.connections { limits.connections = v }
        if let v = l.eventStreams { limits.eventStreams = v }
        if let v = l.headerTimeout { limits.headerTimeout = v }
        if let v = l.idleTimeout { limits.idleTimeout = v }
    }

    /// As `GET /config` shows it: the bounds in force, derived ones included.
    func encodeLimits(into c: inout KeyedEncodingContainer<WireKey>) throws {
        let r = limits.resolved()
        var o = c.nestedContainer(keyedBy: WireKey.self, forKey: "limits")
        try o.encode(r.connections, forKey: "connections"); try o.encode(r.eventStreams, forKey: "eventStreams")
        try o.encode(limits.headerTimeout, forKey: "headerTimeout"); try o.encode(limits.idleTimeout, forKey: "idleTimeout")
    }
}
