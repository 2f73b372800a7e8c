import Foundation
import ScanoutCore
import ScanoutSync

/// `sync`: this screen plays in lockstep with the others of its group (`ScanoutSync`).
///
///     sync {group, key, role ("auto"|"leader"|"follower"), priority, address, port, interface,
///           sendTo ("ADDRESS:PORT"), clock ("group"|"system")}
///
/// `group` and `key` (at least 16 characters, the same on every member) are required; the rest
/// have defaults (`auto`, 100, 239.255.42.42, 5398, the route's interface, the group itself,
/// `group`). `SCANOUT_SYNC_CLOCK_SKEW=SECONDS:PPM` in the service's environment is a test seam:
/// this member's clock taken as that far off and drifting (the sync benchmark and its test).
extension Wire.ConfigBody {
    struct Sync: Decodable {
        enum Field: String, CodingKey, CaseIterable { case group, key, role, priority, address, port, interface, sendTo, clock }
        var settings: SyncSettings

        init(from decoder: any Swift.Decoder) throws {
            let c = try decoder.container(keyedBy: Field.self)
            guard let group = try c.decodeIfPresent(String.self, forKey: .group), !group.isEmpty, group.utf8.count <= 64 else {
                throw APIError.badRequest(c.name(.group), "is required: the group's name (1 to 64 bytes), the same on every member")
            }
            guard let key = try c.decodeIfPresent(String.self, forKey: .key), key.utf8.count >= 16 else {
                throw APIError.badRequest(c.name(.key), "is required: the group's shared secret, at least 16 characters, the same on every member")
            }
            settings = SyncSettings(group: group, role: try c.decodeChoiceIfPresent(SyncNode.Role.self, forKey: .role) ?? .auto, key: Array(key.utf8))
            if let p = try c.decodeIfPresent(Int.self, forKey: .priority, in: 0...1_000_000) { settings.priority = UInt32(p) }
            if let a = try c.decodeIfPresent(String.self, forKey: .address) {
                guard MulticastSocket.multicastAddress(a) != nil else {
                    throw APIError.badRequest(c.name(.address), "must be an IPv4 multicast address, 224.0.0.0 to 239.255.255.255 (got \"\(a)\")")
                }
                settings.address = a
            }
            if let p = try c.decodeIfPresent(Int.self, forKey: .port, in: 1...65535) { settings.port = UInt16(p) }
            settings.interface = try c.decodeIfPresent(String.self, forKey: .interface)
            if let s = try c.decodeIfPresent(String.self, forKey: .sendTo) {
                let parts = s.split(separator: ":")
                var address = in_addr()
                guard parts.count == 2, inet_pton(AF_INET, String(parts[0]), &address) == 1, let port = UInt16(parts[1]), port > 0 else {
                    throw APIError.badRequest(c.name(.sendTo), "must be an IPv4 address and a port, e.g. 192.168.1.20:5398 (got \"\(s)\")")
                }
                settings.sendTo = (String(parts[0]), port)
            }
            settings.clock = try c.decodeChoiceIfPresent(SyncSettings.ClockSource.self, forKey: .clock) ?? .group
        }
    }
}

extension SyncNode.Role: CaseIterable {
    public static var allCases: [SyncNode.Role] { [.auto, .leader, .follower] }
}

extension ServiceConfig {
    /// As `GET /config` shows it (the key never).
    func encodeSync(into c: inout KeyedEncodingContainer<WireKey>) throws {
        guard let s = sync else {
            try c.encodeNil(forKey: "sync")
            return
        }
        var o = c.nestedContainer(keyedBy: WireKey.self, forKey: "sync")
        try o.encode(s.group, forKey: "group"); try o.encode(true, forKey: "keySet"); try o.encode(s.role.rawValue, forKey: "role")
        try o.encode(s.priority, forKey: "priority"); try o.encode(s.address, forKey: "address"); try o.encode(s.port, forKey: "port")
        try o.encodeNullable(s.interface, forKey: "interface"); try o.encodeNullable(s.sendTo.map { "\($0.host):\($0.port)" }, forKey: "sendTo")
        try o.encode(s.clock.rawValue, forKey: "clock")
    }

    /// The sync settings in force: the config's, with the environment's clock skew (a test seam).
    func syncSettings(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> SyncSettings? {
        guard var s = sync else { return nil }
        if let v = environment["SCANOUT_SYNC_CLOCK_SKEW"], !v.isEmpty {
            guard let skew = ClockSkew(parsing: v) else {
                throw ConfigFileError(file: "SCANOUT_SYNC_CLOCK_SKEW", message: "must be SECONDS:PPM, e.g. -3.5:80 (got \"\(v)\")")
            }
            s.skew = skew
        }
        return s
    }
}
