import Foundation
import ScanoutOffline

extension ServiceConfig {
    /// `offline`: `true` keeps every playlist item (http or https) in the offline store, `false`
    /// keeps only what `POST /downloads` asks for; an object sets `keepAll`,
    /// `concurrentDownloads` (default 2), `minFreeBytes` (the cushion the disk keeps free, default
    /// 512 MiB), `maxHeight` and `maxBitrate` (the variant kept of a master playlist), `licenceKeys`
    /// (the key file of `GET /licence/KID`), `allowedHosts` (the hosts downloads and key fetches
    /// may reach: names, addresses, CIDR ranges; by default any but loopback, link-local and
    /// unspecified addresses: `HostAllowance`).
    mutating func applyOffline(_ o: inout JSONObject) throws(APIError) {
        guard o.values.keys.contains("offline") else { return }
        if !(o.values["offline"] is [String: Any]) {
            guard let flag = try? o.bool("offline") else {
                throw .badRequest("offline", "must be true, false or an object {keepAll, concurrentDownloads, minFreeBytes, maxHeight, maxBitrate, licenceKeys, allowedHosts}")
            }
            offline.keepAll = flag
            return
        }
        guard var t = try o.object("offline") else { return }
        if let v = try t.bool("keepAll") { offline.keepAll = v }
        if let v = try t.int("concurrentDownloads", range: 1...16) { offline.concurrentDownloads = v }
        if let v = try t.int("minFreeBytes", range: 0...(1 << 50)) { offline.minFreeBytes = Int64(v) }
        if let v = try t.int("maxHeight", range: 1...16384) { offline.maxHeight = v }
        if let v = try t.int("maxBitrate", range: 1...1_000_000_000) { offline.maxBitrate = v }
        if let v = try t.string("licenceKeys") { offline.licenceKeys = v }
        if let hosts = try t.array("allowedHosts") {
            guard let names = hosts as? [String] else { throw .badRequest("offline.allowedHosts", "must be an array of host names, addresses or CIDR ranges") }
            do throws(HostAllowanceError) { offline.allowedHosts = try HostAllowance(names) } catch {
                throw .badRequest("offline.allowedHosts[\(error.index)]", error.description)
            }
        }
        try t.rejectUnknown()
    }

    func encodeOffline(into c: inout KeyedEncodingContainer<WireKey>) throws {
        var o = c.nestedContainer(keyedBy: WireKey.self, forKey: "offline")
        try o.encode(offline.keepAll, forKey: "keepAll"); try o.encode(offline.concurrentDownloads, forKey: "concurrentDownloads")
        try o.encode(offline.minFreeBytes, forKey: "minFreeBytes"); try o.encodeNullable(offline.maxHeight, forKey: "maxHeight")
        try o.encodeNullable(offline.maxBitrate, forKey: "maxBitrate"); try o.encodeNullable(offline.licenceKeys, forKey: "licenceKeys")
        try o.encode(offline.allowedHosts.entries, forKey: "allowedHosts")
    }
}
