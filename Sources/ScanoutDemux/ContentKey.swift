import CFFmpeg
import ScanoutCore

/// A 16-byte content key (AES-128): the key of a CENC-encrypted MP4, handed to libavformat's mov
/// demuxer as its `decryption_key`. Its description, debug description and mirror never show the
/// bytes, so that no log, event or dump of the options that carry it names the key.
public struct ContentKey: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public let bytes: [UInt8]

    /// Nil unless `bytes` holds exactly 16 bytes.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// The key as the demuxer option takes it: 32 hexadecimal digits.
    var hex: String { hexDigits(bytes) }

    public var description: String { "ContentKey(redacted)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}

/// Where an item is opened from when a local copy stands in for its source (the service's
/// offline store): a path, and the content key the demuxer needs for it, if any.
public struct LocalInput: Sendable, Equatable, CustomStringConvertible {
    public var source: String
    /// For a CENC-encrypted MP4: its key (`DemuxerOptions.decryptionKey`); nil: none.
    public var decryptionKey: ContentKey?

    public init(source: String, decryptionKey: ContentKey? = nil) {
        self.source = source
        self.decryptionKey = decryptionKey
    }

    public var description: String { decryptionKey == nil ? source : source + " (with its content key)" }
}

/// How the samples of a Common Encryption (ISO 23001-7) MP4 are encrypted: the protection scheme
/// (`schm`) and the key id (`tenc`'s default KID), as libavformat's mov demuxer reports them on
/// each packet it reads without a key (`AV_PKT_DATA_ENCRYPTION_INFO` side data).
public struct ContentEncryption: Sendable, Equatable {
    /// The scheme's four characters: `cenc` (AES-CTR), `cbcs`, `cens`, `cbc1`.
    public var scheme: String
    /// The key id, 16 bytes.
    public var keyID: [UInt8]
    /// The key id as 32 lowercase hexadecimal digits (how licence endpoints name it).
    public var keyIDHex: String { hexDigits(keyID) }
    /// The demuxer that read it (`Demuxer.formatName`); only the mov demuxer (MP4) decrypts.
    public var container = ""

    public init(scheme: String, keyID: [UInt8]) {
        self.scheme = scheme
        self.keyID = keyID
    }

    /// Whether libavformat can decrypt it: an MP4 under the `cenc` scheme (AES-CTR), the one
    /// scheme this project keeps (`cbcs` and the others are refused before they are fetched).
    public var isDecryptable: Bool { scheme == "cenc" && container.hasPrefix("mov,") && keyID.count == 16 }

    /// Opens `input` without a key and reads its first video packet: its encryption, or nil when
    /// the packet is clear. Blocks the calling thread for as long as the demuxer's timeout.
    public static func probe(input: String, options: DemuxerOptions = DemuxerOptions()) throws -> ContentEncryption? {
        var options = options
        options.decryptionKey = nil
        let demuxer = try Demuxer(input: input, options: options)
        let packet = Packet()
        guard try demuxer.read(into: packet), var found = packet.encryption else { return nil }
        found.container = demuxer.formatName
        return found
    }
}

extension Packet {
    /// The packet's encryption as the demuxer describes it (`av_encryption_info_get_side_data`);
    /// nil for a clear packet, or one the demuxer decrypted.
    var encryption: ContentEncryption? {
        var size = 0
        guard let data = av_packet_get_side_data(pointer, AV_PKT_DATA_ENCRYPTION_INFO, &size), size > 0,
              let info = av_encryption_info_get_side_data(data, size) else { return nil }
        defer { av_encryption_info_free(info) }
        let fourcc = info.pointee.scheme
        let scheme = String(decoding: [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: fourcc >> $0) }, as: UTF8.self)
        let keyID = info.pointee.key_id.map { Array(UnsafeBufferPointer(start: $0, count: Int(info.pointee.key_id_size))) } ?? []
        return ContentEncryption(scheme: scheme, keyID: keyID)
    }
}

/// `bytes` as lowercase hexadecimal digits, two a byte: a key as the demuxer option takes it, a
/// key id as licence endpoints name it.
private func hexDigits(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
