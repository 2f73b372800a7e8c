import Foundation
import ScanoutOffline

extension Wire.ConfigBody {
    /// `offline`: `true` keeps every playlist item (http or https) in the offline store, `false`
    /// keeps only what `POST /downloads` asks for; an object sets `keepAll`,
    /// `concurrentDownloads` (default 2), `minFreeBytes` (the cushion the disk keeps free, default
    /// 512 MiB), `maxHeight` and `maxBitrate` (the variant kept of a master playlist), `licenceKeys`
    /// (the key file of `GET /licence/KID`), `allowedHosts` (the hosts downloads and key fetches
    /// may reach: names, addresses, CIDR ranges; by default any but loopback, link-local and
    /// unspecified addresses: `HostAllowance`). The fields an object leaves out stay as they are.
    struct Offline: Decodable {
        enum Field: String, CodingKey, CaseIterable {
            case keepAll, concurrentDownloads, minFreeBytes, maxHeight, maxBitrate, licenceKeys, allowedHosts
        }
        var keepAll: Bool?
        var concurrentDownloads: Int?
        var minFreeBytes: Int?
        var maxHeight: Int?
        var maxBitrate: Int?
        var licenceKeys: String?
        var allowedHosts: HostAllowance?

        /// The `offline` field of the top level; nil when absent. Neither a boolean nor an object
        /// (null included) is refused with what it may be.
        static func field(_ c: Fields) throws -> Offline? {
            guard c.contains(.offline) else { return nil }
            if try c.decodeNil(forKey: .offline) { throw refusal(c.name(.offline)) }
            return try c.decode(Offline.self, forKey: .offline)
        }

        static func refusal(_ field: String) -> APIError {
            .badRequest(field, "must be true, false or an object {keepAll, concurrentDownloads, minFreeBytes, maxHeight, maxBitrate, licenceKeys, allowedHosts}")
        }

        init(from decoder: any Swift.Decoder) throws {
            if let flag = try? decoder.singleValueContainer().decode(Bool.self) {
                keepAll = flag
                return
            }
            guard let c = try? decoder.container(keyedBy: Field.self) else { throw Self.refusal(RequestDecoder.name(decoder.codingPath)) }
            keepAll = try c.decodeIfPresent(Bool.self, forKey: .keepAll)
            concurrentDownloads = try c.decodeIfPresent(Int.self, forKey: .concurrentDownloads, in: 1...16)
            minFreeBytes = try c.decodeIfPresent(Int.self, forKey: .minFreeBytes, in: 0...(1 << 50))
            maxHeight = try c.decodeIfPresent(Int.self, forKey: .maxHeight, in: 1...16384)
            maxBitrate = try c.decodeIfPresent(Int.self, forKey: .maxBitrate, in: 1...1_000_000_000)
            licenceKeys = try c.decodeIfPresent(String.self, forKey: .licenceKeys)
            guard c.contains(.allowedHosts) else { return }
            var list = try c.nestedUnkeyedContainer(forKey: .allowedHosts)
            var names: [String] = []
            while !list.isAtEnd {
                guard let name = try? list.decode(String.self) else {
                    throw APIError.badRequest(c.name(.allowedHosts), "must be an array of host names, addresses or CIDR ranges")
                }
                names.append(name)
            }
            do throws(HostAllowanceError) { allowedHosts = try HostAllowance(names) } catch {
                throw APIError.badRequest("\(c.name(.allowedHosts))[\(error.index)]", error.description)
            }
        }
    }
}

extension ServiceConfig {
    mutating func applyOffline(_ o: Wire.ConfigBody.Offline) {
        if let v = o.keepAll { offline.keepAll = v }
        if let v = o.concurrentDownloads { offline.concurrentDownloads = v }
        if let v = o.minFreeBytes { offline.minFreeBytes = Int64(v) }
        if let v = o.maxHeight { offline.maxHeight = v }
        if let v = o.maxBitrate { offline.maxBitrate = v }
        if let v = o.licenceKeys { offline.licenceKeys = v }
        if let v = o.allowedHosts { offline.allowedHosts = v }
    }

    func encodeOffline(into c: inout KeyedEncodingContainer<WireKey>) throws {
        var o = c.nestedContainer(keyedBy: WireKey.self, forKey: "offline")
        try o.encode(offline.keepAll, forKey: "keepAll"); try o.encode(offline.concurrentDownloads, forKey: "concurrentDownloads")
        try o.encode(offline.minFreeBytes, forKey: "minFreeBytes"); try o.encodeNullable(offline.maxHeight, forKey: "maxHeight")
        try o.encodeNullable(offline.maxBitrate, forKey: "maxBitrate"); try o.encodeNullable(offline.licenceKeys, forKey: "licenceKeys")
        try o.encode(offline.allowedHosts.entries, forKey: "allowedHosts")
    }
}
