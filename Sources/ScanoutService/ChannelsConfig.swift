import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio

/// Where the channel list comes from: `channels: {"m3u": "file or URL", "sap": true | {"address",
/// "port", "interface", "timeout"}}` in the config file.
public struct ChannelsConfig: Sendable, Equatable {
    /// An M3U playlist: a file path or an http(s) URL; nil: none.
    public var m3u: String?
    /// Listen to SAP announcements there; nil: no SAP.
    public var sap: SAPListenerOptions?

    public init(m3u: String? = nil, sap: SAPListenerOptions? = nil) {
        self.m3u = m3u
        self.sap = sap
    }

    public var isEmpty: Bool { m3u == nil && sap == nil }

    /// As `GET /config` shows it: null without a channel list; `sap` false without SAP.
    func encode(into c: inout KeyedEncodingContainer<WireKey>) throws {
        guard !isEmpty else { return try c.encodeNil(forKey: "channels") }
        var o = c.nestedContainer(keyedBy: WireKey.self, forKey: "channels")
        try o.encodeNullable(m3u?.redacted, forKey: "m3u")
        guard let s = sap else { return try o.encode(false, forKey: "sap") }
        var listen = o.nestedContainer(keyedBy: WireKey.self, forKey: "sap")
        try listen.encode(s.address, forKey: "address"); try listen.encode(s.port, forKey: "port")
        try listen.encodeNullable(s.interface, forKey: "interface"); try listen.encodeNullable(s.timeout, forKey: "timeout")
    }
}

extension ServiceConfig {
    /// The `channels` field (null: no channel list).
    mutating func applyChannels(_ o: inout JSONObject) throws(APIError) {
        guard o.values.keys.contains("channels") else { return }
        if o.values["channels"] is NSNull {
            _ = try o.string("channels", nullable: true)
            channels = ChannelsConfig()
            return
        }
        guard var c = try o.object("channels") else { return }
        var parsed = ChannelsConfig()
        if let m3u = try c.string("m3u", nullable: true) {
            guard !m3u.isEmpty else { throw .badRequest(c.name("m3u"), "must be a file path or an http(s) URL") }
            parsed.m3u = m3u
        }
        if let on = c.values["sap"] as? NSNumber, JSONObject.isBoolean(on) {
            _ = try c.bool("sap")
            parsed.sap = on.boolValue ? SAPListenerOptions() : nil
        } else if var s = try c.object("sap") {
            var options = SAPListenerOptions()
            if let a = try s.string("address") {
                var probe = in_addr()
                guard inet_pton(AF_INET, a, &probe) == 1 else { throw .badRequest(s.name("address"), "must be an IPv4 multicast address (got \"\(a)\")") }
                options.address = a
            }
            if let p = try s.int("port", range: 1...65535) { options.port = p }
            if let i = try s.string("interface", nullable: true) {
                guard !i.isEmpty else { throw .badRequest(s.name("interface"), "must be an interface name or address, or null") }
                options.interface = i
            }
            options.timeout = try s.double("timeout", range: 0.5...86400)
            try s.rejectUnknown()
            parsed.sap = options
        }
        try c.rejectUnknown()
        channels = parsed
    }
}
