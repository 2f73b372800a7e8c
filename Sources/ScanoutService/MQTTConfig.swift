import Foundation
import ScanoutMQTT

/// `mqtt`: this box is one of a fleet, reached through an MQTT broker (`FleetLink`).
///
///     mqtt {url ("mqtt://HOST[:PORT]" | "mqtts://..."), clientId, groups [NAME], topicPrefix,
///           username, password, tls {caFile, certFile, keyFile, insecure}, statsInterval}
///
/// `url` is required. `clientId` is the device's name in the topics (default: the host name);
/// `groups` the groups whose commands it takes; `topicPrefix` the topics' root (`scanout`);
/// `statsInterval` the seconds between two stats records (60). `mqtts://` needs `tls.caFile`.
public struct FleetSettings: Sendable, Equatable {
    public var url: String
    public var clientId: String
    public var groups: [String] = []
    public var topicPrefix = "scanout"
    public var username: String?
    public var password: String?
    public var tls: MQTTSettings.TLS?
    public var statsInterval: Double = 60

    /// The client's settings, with the will that says `offline` on the status topic.
    var client: MQTTSettings {
        let endpoint = MQTTSettings.endpoint(of: url)!
        return MQTTSettings(host: endpoint.host, port: endpoint.port, clientId: clientId, username: username, password: password,
                            tls: tls, will: MQTTMessage(topic: topic("status"), payload: Array("offline".utf8), qos: 1, retained: true))
    }

    /// `PREFIX/CLIENTID/leaf`.
    func topic(_ leaf: String) -> String { "\(topicPrefix)/\(clientId)/\(leaf)" }
    /// `PREFIX/group/GROUP/cmd`.
    func groupCommands(_ group: String) -> String { "\(topicPrefix)/group/\(group)/cmd" }

    /// A topic level: 1 to 64 bytes, none of MQTT's separators or wildcards.
    static func isLevel(_ s: String) -> Bool {
        !s.isEmpty && s.utf8.count <= 64 && !s.contains { "/+#".contains($0) || $0.isWhitespace || $0.asciiValue.map { $0 < 32 } ?? false }
    }
}

extension Wire.ConfigBody {
    struct MQTT: Decodable {
        enum Field: String, CodingKey, CaseIterable { case url, clientId, groups, topicPrefix, username, password, tls, statsInterval }
        var settings: FleetSettings

        init(from decoder: any Swift.Decoder) throws {
            let c = try decoder.container(keyedBy: Field.self)
            guard let url = try c.decodeIfPresent(String.self, forKey: .url) else {
                throw APIError.badRequest(c.name(.url), "is required: the broker, mqtt://HOST[:PORT] or mqtts://HOST[:PORT]")
            }
            guard let endpoint = MQTTSettings.endpoint(of: url) else {
                throw APIError.badRequest(c.name(.url), "must be mqtt://HOST[:PORT] or mqtts://HOST[:PORT] (got \"\(url)\")")
            }
            let host = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "scanout"
            settings = FleetSettings(url: url, clientId: try c.decodeIfPresent(String.self, forKey: .clientId) ?? host)
            guard FleetSettings.isLevel(settings.clientId) else {
                throw APIError.badRequest(c.name(.clientId), "must be 1 to 64 bytes without /, +, # or spaces: it is a topic level (got \"\(settings.clientId)\")")
            }
            settings.groups = try c.decodeIfPresent([String].self, forKey: .groups) ?? []
            if let bad = settings.groups.first(where: { !FleetSettings.isLevel($0) }) {
                throw APIError.badRequest(c.name(.groups), "each group must be 1 to 64 bytes without /, +, # or spaces: it is a topic level (got \"\(bad)\")")
            }
            if let p = try c.decodeIfPresent(String.self, forKey: .topicPrefix) {
                guard !p.isEmpty, p.split(separator: "/", omittingEmptySubsequences: false).allSatisfy({ FleetSettings.isLevel(String($0)) }) else {
                    throw APIError.badRequest(c.name(.topicPrefix), "must be topic levels separated by /, without +, # or spaces (got \"\(p)\")")
                }
                settings.topicPrefix = p
            }
            settings.username = try c.decodeIfPresent(String.self, forKey: .username)
            settings.password = try c.decodeIfPresent(String.self, forKey: .password)
            settings.tls = try c.decodeIfPresent(TLS.self, forKey: .tls)?.tls
            if endpoint.tls && settings.tls == nil {
                throw APIError.badRequest(c.name(.tls), "is required with mqtts://: tls.caFile names the authorities the broker's certificate is checked against")
            }
            settings.statsInterval = try c.decodeIfPresent(Double.self, forKey: .statsInterval, in: 1...86_400) ?? 60
        }
    }

    struct TLS: Decodable {
        enum Field: String, CodingKey, CaseIterable { case caFile, certFile, keyFile, insecure }
        var tls: MQTTSettings.TLS

        init(from decoder: any Swift.Decoder) throws {
            let c = try decoder.container(keyedBy: Field.self)
            func file(_ f: Field) throws -> String? {
                guard let path = try c.decodeIfPresent(String.self, forKey: f) else { return nil }
                guard path.hasPrefix("/") else { throw APIError.badRequest(c.name(f), "must be an absolute file path (got \"\(path)\")") }
                return path
            }
            guard let ca = try file(.caFile) else {
                throw APIError.badRequest(c.name(.caFile), "is required: the authorities the broker's certificate is checked against (a PEM file)")
            }
            tls = MQTTSettings.TLS(caFile: ca, certFile: try file(.certFile), keyFile: try file(.keyFile),
                                   insecure: try c.decodeIfPresent(Bool.self, forKey: .insecure) ?? false)
            if (tls.certFile == nil) != (tls.keyFile == nil) {
                throw APIError.badRequest(c.name(tls.certFile == nil ? .certFile : .keyFile), "certFile and keyFile go together (the client's certificate and its key)")
            }
        }
    }
}

extension ServiceConfig {
    /// As `GET /config` shows it (the password never).
    func encodeMQTT(into c: inout KeyedEncodingContainer<WireKey>) throws {
        guard let m = mqtt else {
            try c.encodeNil(forKey: "mqtt")
            return
        }
        var o = c.nestedContainer(keyedBy: WireKey.self, forKey: "mqtt")
        try o.encode(m.url, forKey: "url"); try o.encode(m.clientId, forKey: "clientId"); try o.encode(m.groups, forKey: "groups")
        try o.encode(m.topicPrefix, forKey: "topicPrefix"); try o.encodeNullable(m.username, forKey: "username")
        try o.encode(m.password != nil, forKey: "passwordSet"); try o.encode(m.statsInterval, forKey: "statsInterval")
        if let t = m.tls {
            var tls = o.nestedContainer(keyedBy: WireKey.self, forKey: "tls")
            try tls.encode(t.caFile, forKey: "caFile"); try tls.encodeNullable(t.certFile, forKey: "certFile")
            try tls.encodeNullable(t.keyFile, forKey: "keyFile"); try tls.encode(t.insecure, forKey: "insecure")
        } else {
            try o.encodeNil(forKey: "tls")
        }
    }
}
