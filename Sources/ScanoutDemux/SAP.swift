import ScanoutCore

/// One Session Announcement Protocol message (RFC 2974) and the SDP session description it
/// carries (RFC 4566): what a SAP listener needs to list a channel.
public struct SAPMessage: Sendable, Equatable {
    public enum Kind: Sendable, Equatable { case announce, delete }
    public var kind: Kind
    /// The sender's address (the header's originating source), as text.
    public var origin: String
    /// The message identifier hash: with `origin`, it names the session across repeats.
    public var messageIDHash: UInt16
    /// The payload type (`application/sdp` when the header leaves it out).
    public var payloadType: String
    /// The session description; nil for a delete whose payload is not SDP.
    public var session: SDPSession?

    /// The key that names the announced session: origin and message id hash.
    public var key: String { "\(origin)/\(messageIDHash)" }

    /// Parses one datagram; the error says what is wrong with it (a listener counts and skips it).
    public static func parse(_ d: [UInt8]) throws(SAPError) -> SAPMessage {
        guard d.count >= 4 else { throw .malformed("\(d.count) bytes, shorter than a SAP header") }
        let version = d[0] >> 5
        guard version == 1 else { throw .malformed("SAP version \(version) (1 expected)") }
        let ipv6 = d[0] & 0x10 != 0
        let kind: Kind = d[0] & 0x04 != 0 ? .delete : .announce
        guard d[0] & 0x02 == 0 else { throw .unsupported("encrypted payload") }
        guard d[0] & 0x01 == 0 else { throw .unsupported("compressed payload") }
        let authBytes = Int(d[1]) * 4
        let hash = UInt16(d[2]) << 8 | UInt16(d[3])
        let originBytes = ipv6 ? 16 : 4
        var i = 4 + originBytes + authBytes
        guard d.count >= i else { throw .malformed("\(d.count) bytes, shorter than the header it declares (\(i))") }
        let origin = ipv6 ? stride(from: 4, to: 20, by: 2).map { String(UInt16(d[$0]) << 8 | UInt16(d[$0 + 1]), radix: 16) }.joined(separator: ":")
                          : d[4..<8].map(String.init).joined(separator: ".")
        var payloadType = "application/sdp"
        // The payload type is optional: an SDP payload starts with "v=0".
        if !d[i...].starts(with: Array("v=0".utf8)) {
            guard let nul = d[i...].firstIndex(of: 0) else { throw .malformed("payload type not terminated") }
            payloadType = String(decoding: d[i..<nul], as: UTF8.self)
            i = nul + 1
        }
        let text = String(decoding: d[i...], as: UTF8.self)
        var session: SDPSession?
        if payloadType == "application/sdp" {
            session = try SDPSession.parse(text)
        } else if kind == .announce {
            throw .unsupported("payload type \(payloadType)")
        }
        return SAPMessage(kind: kind, origin: origin, messageIDHash: hash, payloadType: payloadType, session: session)
    }
}

/// A SAP datagram that cannot be used.
public enum SAPError: Error, Equatable, Sendable, CustomStringConvertible {
    case malformed(String)
    case unsupported(String)
    public var description: String {
        switch self {
        case .malformed(let s): return "malformed SAP message: \(s)"
        case .unsupported(let s): return "unsupported SAP message: \(s)"
        }
    }
}

/// The lines of an SDP session description a channel list reads: `s=` (name), `i=`
/// (information), `c=` (connection address, session or media level), `m=` (the first media:
/// port and transport), `a=` (attributes, in order).
public struct SDPSession: Sendable, Equatable {
    public var name = ""
    public var information: String?
    /// The connection address without TTL or count (`239.1.1.1` of `c=IN IP4 239.1.1.1/32`).
    public var address: String?
    public var port: Int?
    /// `RTP/AVP`, `udp`, `MP2T/H2221/UDP`...
    public var transport: String?
    /// `a=` lines as name and value (value empty for a flag).
    public var attributes: [(name: String, value: String)] = []

    public init() {}

    public static func == (a: Self, b: Self) -> Bool {
        a.name == b.name && a.information == b.information && a.address == b.address && a.port == b.port
            && a.transport == b.transport && a.attributes.map(\.name) == b.attributes.map(\.name)
            && a.attributes.map(\.value) == b.attributes.map(\.value)
    }

    public func attribute(_ name: String) -> String? { attributes.first { $0.name == name }?.value }

    /// The stream's URL: `rtp://` for RTP transports, `udp://` otherwise; nil without an
    /// address or port. Source-specific sessions (`a=source-filter: incl`) name their senders.
    public var url: String? {
        guard let address, let port else { return nil }
        let scheme = transport?.uppercased().hasPrefix("RTP") == true ? "rtp" : "udp"
        var url = "\(scheme)://\(address.contains(":") ? "[\(address)]" : address):\(port)"
        if let filter = attribute("source-filter") {
            // incl IN IP4 <destination> <source>...
            let f = filter.split(separator: " ").map(String.init)
            if f.count >= 5, f[0] == "incl" { url += "?sources=" + f[4...].joined(separator: ",") }
        }
        return url
    }

    /// Parses SDP text (CRLF or LF lines); a description without `v=` is refused.
    public static func parse(_ text: String) throws(SAPError) -> SDPSession {
        var s = SDPSession()
        var sawVersion = false
        var inMedia = false
        for raw in text.split(omittingEmptySubsequences: true, whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }) {
            let line = raw.hasSuffix("\r") ? raw.dropLast() : raw[...]
            guard line.count >= 2, line.dropFirst().first == "=" else { continue }
            let value = String(line.dropFirst(2))
            switch line.first {
            case "v": sawVersion = true
            case "s": s.name = value
            case "i" where !inMedia: s.information = value
            case "c":
                // IN IP4 239.1.1.1/32: a media-level address wins over the session's.
                let parts = value.split(separator: " ")
                if parts.count >= 3 { s.address = String(parts[2].split(separator: "/").first ?? parts[2]) }
            case "m":
                guard !inMedia else { continue }
                inMedia = true
                let parts = value.split(separator: " ")
                if parts.count >= 3 {
                    s.port = Int(parts[1].split(separator: "/").first ?? parts[1])
                    s.transport = String(parts[2])
                }
            case "a":
                if let colon = value.firstIndex(of: ":") {
                    s.attributes.append((String(value[..<colon]), String(value[value.index(after: colon)...])))
                } else {
                    s.attributes.append((value, ""))
                }
            default: break
            }
        }
        guard sawVersion else { throw .malformed("SDP without a v= line") }
        return s
    }
}
