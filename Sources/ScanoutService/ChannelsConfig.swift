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

extension Wire.ConfigBody {
    /// `channels {m3u, sap}`: the list given replaces the running one (a source it leaves out
    /// is none).
    struct Channels: Decodable {
        enum Field: String, CodingKey, CaseIterable { case m3u, sap }
        var config = ChannelsConfig()

        init(from decoder: any Swift.Decoder) throws {
            let c = try decoder.container(keyedBy: Field.self)
            if case let m3u?? = try c.decodeNullable(String.self, forKey: .m3u) {
                guard !m3u.isEmpty else { throw APIError.badRequest(c.name(.m3u), "must be a file path or an http(s) URL") }
                config.m3u = m3u
            }
            config.sap = try c.decodeIfPresent(SAP.self, forKey: .sap)?.options
        }
    }

    /// `sap`: true (the RFC 2974 group), false (none) or `{address, port, interface, timeout}`.
    struct SAP: Decodable {
        enum Field: String, CodingKey, CaseIterable { case address, port, interface, timeout }
        var options: SAPListenerOptions?

        init(from decoder: any Swift.Decoder) throws {
            if let on = try? decoder.singleValueContainer().decode(Bool.self) {
                options = on ? SAPListenerOptions() : nil
                return
            }
            let c = try decoder.container(keyedBy: Field.self)
            var options = SAPListenerOptions()
            if let a = try c.decodeIfPresent(String.self, forKey: .address) {
                var probe = in_addr()
                guard inet_pton(AF_INET, a, &probe) == 1 else {
                    throw APIError.badRequest(c.name(.address), "must be an IPv4 multicast address (got \"\(a)\")")
                }
                options.address = a
            }
            if let p = try c.decodeIfPresent(Int.self, forKey: .port, in: 1...65535) { options.port = p }
            if case let i?? = try c.decodeNullable(String.self, forKey: .interface) {
                guard !i.isEmpty else { throw APIError.badRequest(c.name(.interface), "must be an interface name or address, or null") }
                options.interface = i
            }
            options.timeout = try c.decodeIfPresent(Double.self, forKey: .timeout, in: 0.5...86400)
            self.options = options
        }
    }
}
