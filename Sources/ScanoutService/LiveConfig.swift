import ScanoutMedia

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
    }
}
