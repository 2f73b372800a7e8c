import Foundation

/// Which hosts the offline store's downloads and key fetches may reach (`offline.allowedHosts`).
///
/// Every request's host is resolved and each address it resolves to is checked, so that a name
/// or a number that stands for this machine (`localhost`, `127.1`, `2130706433`) is judged by
/// the address it reaches:
/// - with no list (the default), any host, but loopback (127/8, ::1), link-local (169.254/16,
///   fe80::/10) and unspecified (0.0.0.0, ::) addresses are refused: a download or a key fetch
///   does not reach the services of this machine or its link (a cloud's metadata service at
///   169.254.169.254) on a source's or a playlist's say;
/// - with a list, only hosts it names: by name (exactly, case aside), by address, or by a CIDR
///   range (`10.0.0.0/8`, `fd00::/8`); an entry allows what it covers, loopback included
///   (`127.0.0.1` lets a test's loopback server in).
public struct HostAllowance: Sendable, Equatable {
    /// The entries as configured.
    public private(set) var entries: [String] = []
    private var names: Set<String> = []
    private var ranges: [IPRange] = []

    /// No list: any host but the special addresses.
    public init() {}

    /// The list `entries`; throws naming the first entry that is no host name, address or range.
    public init(_ entries: [String]) throws(HostAllowanceError) {
        for (i, entry) in entries.enumerated() {
            let e = entry.trimmingCharacters(in: .whitespaces).lowercased()
            if let range = IPRange(e) {
                ranges.append(range)
            } else if Self.isHostName(e) {
                names.insert(e.hasSuffix(".") ? String(e.dropLast()) : e)
            } else {
                throw HostAllowanceError(index: i, entry: entry)
            }
        }
        self.entries = entries
    }

    /// Why `url` may not be fetched, nil when it may. Resolves its host (blocking: call it off
    /// the cooperative pool).
    public func refusal(of url: String) -> String? {
        guard let components = URLComponents(string: url), let rawHost = components.host, !rawHost.isEmpty else {
            return "\(url) names no host"
        }
        var host = rawHost.lowercased()
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.hasSuffix(".") { host = String(host.dropLast()) }
        if names.contains(host) { return nil }
        let addresses = Self.resolve(host)
        guard !addresses.isEmpty else { return "\(host) cannot be resolved" }
        for a in addresses {
            if !entries.isEmpty {
                guard ranges.contains(where: { $0.contains(a) }) else {
                    return "\(host) (\(a.text)) is not in offline.allowedHosts"
                }
            } else if let kind = a.special {
                return "\(host) resolves to \(a.text), \(kind == "unspecified" ? "an" : "a") \(kind) address: downloads and key fetches do not reach it unless offline.allowedHosts names it"
            }
        }
        return nil
    }

    /// A DNS name: dot-separated labels of 1 to 63 letters, digits, '-' or '_' (a final dot aside).
    static func isHostName(_ s: String) -> Bool {
        let name = s.hasSuffix(".") ? s.dropLast() : Substring(s)
        return (1...253).contains(name.count) && name.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
            (1...63).contains(label.count) && label.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
        }
    }

    /// Every address `host` resolves to (`getaddrinfo`: numbers such as `2130706433` included).
    static func resolve(_ host: String) -> [IPAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0, let first = list else { return [] }
        defer { freeaddrinfo(first) }
        var out: [IPAddress] = []
        var p: UnsafeMutablePointer<addrinfo>? = first
        while let ai = p {
            if let sa = ai.pointee.ai_addr {
                if ai.pointee.ai_family == AF_INET {
                    let v4 = sa.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
                    out.append(IPAddress(bytes: withUnsafeBytes(of: v4) { Array($0) }))
                } else if ai.pointee.ai_family == AF_INET6 {
                    let v6 = sa.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
                    out.append(IPAddress(bytes: withUnsafeBytes(of: v6) { Array($0) }))
                }
            }
            p = ai.pointee.ai_next
        }
        return out
    }
}

/// An entry of `offline.allowedHosts` that is no host name, address or CIDR range.
public struct HostAllowanceError: Error, Equatable, CustomStringConvertible {
    public var index: Int
    public var entry: String
    public init(index: Int, entry: String) {
        self.index = index
        self.entry = entry
    }
    public var description: String { "\"\(entry)\" is not a host name, an IP address or a CIDR range (such as 10.0.0.0/8)" }
}

/// An IPv4 (4 bytes) or IPv6 (16 bytes) address.
struct IPAddress: Equatable {
    var bytes: [UInt8]

    /// An IPv4 address an IPv6 one maps (`::ffff:127.0.0.1`) as the IPv4 one.
    var unmapped: IPAddress {
        guard bytes.count == 16, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF else { return self }
        return IPAddress(bytes: Array(bytes[12...]))
    }

    /// `loopback`, `link-local` or `unspecified`; nil for another address.
    var special: String? {
        let a = unmapped.bytes
        if a.count == 4 {
            if a[0] == 127 { return "loopback" }
            if a[0] == 169 && a[1] == 254 { return "link-local" }
            if a == [0, 0, 0, 0] || a[0] == 0 { return "unspecified" }
            return nil
        }
        if a == [UInt8](repeating: 0, count: 15) + [1] { return "loopback" }
        if a.allSatisfy({ $0 == 0 }) { return "unspecified" }
        if a[0] == 0xFE && a[1] & 0xC0 == 0x80 { return "link-local" }
        return nil
    }

    var text: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        return bytes.withUnsafeBytes { raw in
            guard inet_ntop(family, raw.baseAddress, &buffer, socklen_t(buffer.count)) != nil else { return "?" }
            return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }

    /// An address literal; nil for anything else.
    init?(_ text: String) {
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            bytes = withUnsafeBytes(of: v4) { Array($0) }
        } else if inet_pton(AF_INET6, text, &v6) == 1 {
            bytes = withUnsafeBytes(of: v6) { Array($0) }
        } else {
            return nil
        }
    }

    init(bytes: [UInt8]) { self.bytes = bytes }
}

/// An address with a prefix length (`10.0.0.0/8`); a lone address is a range of one.
struct IPRange: Equatable {
    var base: IPAddress
    var prefix: Int

    init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let base = IPAddress(String(parts[0])) else { return nil }
        let bits = base.bytes.count * 8
        if parts.count == 2 {
            guard let p = Int(parts[1]), (0...bits).contains(p) else { return nil }
            prefix = p
        } else {
            prefix = bits
        }
        self.base = base
    }

    func contains(_ address: IPAddress) -> Bool {
        let a = base.bytes.count == 4 ? address.unmapped : address
        guard a.bytes.count == base.bytes.count else { return false }
        var left = prefix
        for (x, y) in zip(a.bytes, base.bytes) where left > 0 {
            let n = min(8, left)
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - n))
            if x & mask != y & mask { return false }
            left -= n
        }
        return true
    }
}
