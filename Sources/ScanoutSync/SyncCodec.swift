import ScanoutCore
import Crypto
import Foundation

/// Sync messages on the wire: one UDP datagram each, authenticated with the group's key.
///
///     "SCSY" · version 1 · type · 2 bytes zero · group tag (8) · sender (8) · sequence (8)
///     · sentAt (8) · payload length (2) · payload · HMAC-SHA-256 tag, first 16 bytes
///
/// Integers big-endian. The group tag is the first 8 bytes of SHA-256 over the group's name, so a
/// member drops another group's traffic before any cryptography; the tag is keyed with a key
/// derived from the configured one and the group's name (HKDF-SHA-256), so one secret can serve
/// several groups without one group's messages passing in another. Decoding checks the length of
/// every field and the tag (in constant time) before it reads the payload.
public struct SyncCodec: Sendable {
    public static let maxDatagram = 1400
    static let magic: [UInt8] = Array("SCSY".utf8)
    static let version: UInt8 = 1
    static let headerSize = 4 + 1 + 1 + 2 + 8 + 8 + 8 + 8 + 2
    static let tagSize = 16

    public let group: String
    let groupTag: [UInt8]
    private let key: SymmetricKey

    /// `key`: the group's shared secret, at least 16 bytes.
    public init(group: String, key: [UInt8]) throws {
        guard !group.isEmpty, group.utf8.count <= 64 else { throw SyncCodecError.badConfiguration("group: 1 to 64 bytes") }
        guard key.count >= 16 else { throw SyncCodecError.badConfiguration("key: at least 16 bytes (give 32 random bytes)") }
        self.group = group
        groupTag = Array(SHA256.hash(data: Array(group.utf8)).prefix(8))
        self.key = HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: key), salt: Array("scanout sync".utf8),
                                          info: Array(group.utf8), outputByteCount: 32)
    }

    public func encode(_ m: SyncMessage) throws -> [UInt8] {
        var payload = Writer()
        let type: UInt8
        switch m.body {
        case let .timeRequest(nonce, t1):
            type = 1; payload.u64(nonce); payload.i64(t1)
        case let .timeResponse(follower, nonce, t1, t2, t3):
            type = 2; payload.u64(follower); payload.u64(nonce); payload.i64(t1); payload.i64(t2); payload.i64(t3)
        case let .timeline(t):
            type = 3
            payload.u64(t.term); payload.i32(t.index); payload.i64(t.mediaTime); payload.i64(t.groupTime)
            payload.u64(t.rate.bitPattern); payload.u8(t.paused ? 1 : 0)
            let item = Array(t.item.utf8)
            guard item.count <= 1024 else { throw SyncCodecError.tooLong("timeline.item (\(item.count) bytes; 1024 at most)") }
            payload.u16(UInt16(item.count)); payload.bytes(item)
        case let .announce(priority, term):
            type = 4; payload.u32(priority); payload.u64(term)
        }
        var out = Writer()
        out.bytes(Self.magic); out.u8(Self.version); out.u8(type); out.u16(0)
        out.bytes(groupTag); out.u64(m.sender); out.u64(m.sequence); out.i64(m.sentAt)
        out.u16(UInt16(payload.data.count)); out.bytes(payload.data)
        let tag = HMAC<SHA256>.authenticationCode(for: out.data, using: key)
        out.bytes(Array(Array(tag).prefix(Self.tagSize)))
        guard out.data.count <= Self.maxDatagram else { throw SyncCodecError.tooLong("message (\(out.data.count) bytes)") }
        return out.data
    }

    public func decode(_ datagram: [UInt8]) throws -> SyncMessage {
        guard datagram.count >= Self.headerSize + Self.tagSize else { throw SyncCodecError.malformed("shorter than a header and a tag") }
        guard Array(datagram[0..<4]) == Self.magic else { throw SyncCodecError.malformed("not a sync message") }
        guard datagram[4] == Self.version else { throw SyncCodecError.unsupportedVersion(datagram[4]) }
        guard Array(datagram[8..<16]) == groupTag else { throw SyncCodecError.otherGroup }
        var r = Reader(datagram, from: 40)
        let length = Int(try r.u16())
        guard datagram.count == Self.headerSize + length + Self.tagSize else { throw SyncCodecError.malformed("payload length \(length) does not match") }
        let signed = datagram[0..<(Self.headerSize + length)]
        let tag = datagram[(Self.headerSize + length)...]
        // The full MAC recomputed and its first 16 bytes compared in constant time.
        let full = Array(HMAC<SHA256>.authenticationCode(for: signed, using: key))
        var difference: UInt8 = 0
        for (a, b) in zip(full.prefix(Self.tagSize), tag) { difference |= a ^ b }
        guard difference == 0 else { throw SyncCodecError.badTag }
        var h = Reader(datagram, from: 16)
        let sender = try h.u64(), sequence = try h.u64(), sentAt = try h.i64()
        var p = Reader(Array(datagram[Self.headerSize..<(Self.headerSize + length)]), from: 0)
        let body: SyncMessage.Body
        switch datagram[5] {
        case 1: body = .timeRequest(nonce: try p.u64(), t1: try p.i64())
        case 2: body = .timeResponse(follower: try p.u64(), nonce: try p.u64(), t1: try p.i64(), t2: try p.i64(), t3: try p.i64())
        case 3:
            let term = try p.u64(), index = try p.i32(), media = try p.i64(), group = try p.i64()
            let rate = Double(bitPattern: try p.u64())
            let paused = try p.u8()
            guard rate.isFinite, abs(rate) <= 16, paused <= 1 else { throw SyncCodecError.malformed("timeline rate or paused") }
            let n = Int(try p.u16())
            guard let item = String(validating: try p.bytes(n), as: UTF8.self) else { throw SyncCodecError.malformed("timeline item is not UTF-8") }
            body = .timeline(SyncTimeline(term: term, index: index, item: item, mediaTime: media, groupTime: group, rate: rate, paused: paused == 1))
        case 4: body = .announce(priority: try p.u32(), term: try p.u64())
        case let t: throw SyncCodecError.malformed("message type \(t)")
        }
        guard p.atEnd else { throw SyncCodecError.malformed("\(p.remaining) bytes after the payload") }
        return SyncMessage(sender: sender, sequence: sequence, sentAt: sentAt, body: body)
    }
}

/// Why a datagram was not taken.
public enum SyncCodecError: Error, Equatable, CustomStringConvertible {
    case badConfiguration(String)
    case tooLong(String)
    case malformed(String)
    case unsupportedVersion(UInt8)
    /// Another group's message (not an error on a shared LAN: dropped quietly).
    case otherGroup
    /// The tag does not match: a wrong key, or a message altered or forged.
    case badTag

    public var description: String {
        switch self {
        case .badConfiguration(let s): "sync: \(s)"
        case .tooLong(let s): "sync: too long: \(s)"
        case .malformed(let s): "sync: malformed message: \(s)"
        case .unsupportedVersion(let v): "sync: message version \(v) (this build speaks 1)"
        case .otherGroup: "sync: another group's message"
        case .badTag: "sync: the message's tag does not match the group's key"
        }
    }
}

/// Big-endian writing.
struct Writer {
    var data: [UInt8] = []
    mutating func u8(_ v: UInt8) { data.append(v) }
    mutating func u16(_ v: UInt16) { data += [UInt8(v >> 8), UInt8(v & 0xFF)] }
    mutating func u32(_ v: UInt32) { for s in stride(from: 24, through: 0, by: -8) { data.append(UInt8((v >> UInt32(s)) & 0xFF)) } }
    mutating func u64(_ v: UInt64) { for s in stride(from: 56, through: 0, by: -8) { data.append(UInt8((v >> UInt64(s)) & 0xFF)) } }
    mutating func i32(_ v: Int32) { u32(UInt32(bitPattern: v)) }
    mutating func i64(_ v: Int64) { u64(UInt64(bitPattern: v)) }
    mutating func bytes(_ b: [UInt8]) { data += b }
}

/// Big-endian reading, every read checked against the end.
struct Reader {
    private let data: [UInt8]
    private var at: Int
    init(_ data: [UInt8], from start: Int) { self.data = data; at = start }
    var atEnd: Bool { at == data.count }
    var remaining: Int { data.count - at }

    mutating func bytes(_ n: Int) throws -> [UInt8] {
        guard n >= 0, at + n <= data.count else { throw SyncCodecError.malformed("ends inside a field") }
        defer { at += n }
        return Array(data[at..<(at + n)])
    }
    mutating func u8() throws -> UInt8 { try bytes(1)[0] }
    mutating func u16() throws -> UInt16 { try bytes(2).reduce(0) { $0 << 8 | UInt16($1) } }
    mutating func u32() throws -> UInt32 { try bytes(4).reduce(0) { $0 << 8 | UInt32($1) } }
    mutating func u64() throws -> UInt64 { try bytes(8).reduce(0) { $0 << 8 | UInt64($1) } }
    mutating func i32() throws -> Int32 { Int32(bitPattern: try u32()) }
    mutating func i64() throws -> Int64 { Int64(bitPattern: try u64()) }
}
