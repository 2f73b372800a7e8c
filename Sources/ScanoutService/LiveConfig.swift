import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio

extension ServiceConfig {
    /// The UDP/RTP fields: `interface` (a name or an IPv4 address, null: the routing table's),
    /// `sources` (source-specific multicast senders), `liveTimeout` (seconds of silence before
    /// the service reports the source gone).
    mutating func applyLive(_ o: inout JSONObject) throws(APIError) {
        if o.values.keys.contains("interface") {
            let v = try o.string("interface", nullable: true)
            if v?.isEmpty == true { throw .badRequest("interface", "must be an interface name or address, or null for the default route") }
            live.interface = v
        }
        if let list = try o.array("sources") {
            live.sources = try list.enumerated().map { (i, s) throws(APIError) in
                guard let s = s as? String, !s.isEmpty else { throw .badRequest("sources[\(i)]", "must be a sender's address") }
                return s
            }
        }
        if let v = try o.double("liveTimeout", range: 1...600) { live.timeoutSeconds = v }
        if var t = try o.object("timeshift") { try applyTimeshift(&t) }
    }

    /// `timeshift`: `seconds` of a live input kept for pause and seeks (0: none; default 30),
    /// `maxBytes` (default 256 MiB), `directory` (null: in memory; a writable directory: on disk there).
    private mutating func applyTimeshift(_ t: inout JSONObject) throws(APIError) {
        if let v = try t.double("seconds", range: 0...3600) { timeshift.seconds = v }
        if let v = try t.int("maxBytes", range: (1 << 20)...(1 << 40)) { timeshift.maxBytes = v }
        if t.values.keys.contains("directory") {
            let dir = try t.string("directory", nullable: true)
            if let dir {
                var isDir: ObjCBool = false
                guard dir.hasPrefix("/"), FileManager.default.fileExists(atPath: dir, isDirectory: &isDir), isDir.boolValue,
                      FileManager.default.isWritableFile(atPath: dir) else {
                    throw .badRequest(t.name("directory"), "must be an existing directory this user can write to, as an absolute path, or null to keep the buffer in memory (got \"\(dir)\")")
                }
            }
            timeshift.directory = dir
        }
        try t.rejectUnknown()
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
