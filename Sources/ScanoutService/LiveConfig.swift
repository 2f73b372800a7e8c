import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio

extension Wire.ConfigBody {
    /// The UDP/RTP fields: `interface` (a name or an IPv4 address, null: the routing table's),
    /// `sources` (source-specific multicast senders), `liveTimeout` (seconds of silence before
    /// the service reports the source gone), `timeshift`.
    struct Live {
        var interface: String??
        var sources: [String]?
        var timeoutSeconds: Double?
        var timeshift: Timeshift?

        init(_ c: Fields) throws {
            interface = try c.decodeNullable(String.self, forKey: .interface)
            if interface??.isEmpty == true {
                throw APIError.badRequest(c.name(.interface), "must be an interface name or address, or null for the default route")
            }
            sources = try c.decodeStrings(forKey: .sources, each: "must be a sender's address")
            timeoutSeconds = try c.decodeIfPresent(Double.self, forKey: .liveTimeout, in: 1...600)
            timeshift = try c.decodeIfPresent(Timeshift.self, forKey: .timeshift)
        }
    }

    /// `timeshift`: `seconds` of a live input kept for pause and seeks (0: none; default 30),
    /// `maxBytes` (default 256 MiB), `directory` (null: in memory; a writable directory: on disk there).
    struct Timeshift: Decodable {
        enum Field: String, CodingKey, CaseIterable { case seconds, maxBytes, directory }
        var seconds: Double?
        var maxBytes: Int?
        var directory: String??

        init(from decoder: any Swift.Decoder) throws {
            let c = try decoder.container(keyedBy: Field.self)
            seconds = try c.decodeIfPresent(Double.self, forKey: .seconds, in: 0...3600)
            maxBytes = try c.decodeIfPresent(Int.self, forKey: .maxBytes, in: (1 << 20)...(1 << 40))
            directory = try c.decodeNullable(String.self, forKey: .directory)
            if case let dir?? = directory {
                var isDir: ObjCBool = false
                guard dir.hasPrefix("/"), FileManager.default.fileExists(atPath: dir, isDirectory: &isDir), isDir.boolValue,
                      FileManager.default.isWritableFile(atPath: dir) else {
                    throw APIError.badRequest(c.name(.directory), "must be an existing directory this user can write to, as an absolute path, or null to keep the buffer in memory (got \"\(dir)\")")
                }
            }
        }
    }
}

extension ServiceConfig {
    mutating func applyLive(_ f: Wire.ConfigBody.Live) {
        if let v = f.interface { live.interface = v }
        if let v = f.sources { live.sources = v }
        if let v = f.timeoutSeconds { live.timeoutSeconds = v }
        guard let t = f.timeshift else { return }
        if let v = t.seconds { timeshift.seconds = v }
        if let v = t.maxBytes { timeshift.maxBytes = v }
        if let v = t.directory { timeshift.directory = v }
    }

    /// `interface`, `sources`, `liveTimeout` and `timeshift`, as `GET /config` shows them.
    func encodeLive(into c: inout KeyedEncodingContainer<WireKey>) throws {
        try c.encodeNullable(live.interface, forKey: "interface"); try c.encode(live.sources, forKey: "sources")
        try c.encode(live.timeoutSeconds, forKey: "liveTimeout")
        var o = c.nestedContainer(keyedBy: WireKey.self, forKey: "timeshift")
        try o.encode(timeshift.seconds, forKey: "seconds"); try o.encode(timeshift.maxBytes, forKey: "maxBytes")
        try o.encodeNullable(timeshift.directory, forKey: "directory")
    }
}
