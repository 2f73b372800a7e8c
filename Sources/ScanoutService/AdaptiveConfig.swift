import Foundation
import ScanoutMedia

extension ServiceConfig {
    /// The adaptive HLS fields: `maxHeight` (pixels) and `maxBitrate` (bits a second) cap the
    /// variants played (null: no cap); `initialBandwidth` (bits a second) picks the start variant;
    /// `liveStartIndex` (segments from the live edge, negative) is where live playlists start.
    mutating func applyAdaptive(_ o: inout JSONObject) throws(APIError) {
        if let v = try Self.cap(&o, "maxHeight", range: 1...16384) { adaptive.maxHeight = v }
        if let v = try Self.cap(&o, "maxBitrate", range: 1...1_000_000_000) { adaptive.maxBitrate = v }
        if let v = try o.int("initialBandwidth", range: 1...1_000_000_000) { adaptive.initialBandwidth = v }
        if let v = try o.int("liveStartIndex", range: -1000...1000) { adaptive.liveStartIndex = v }
    }

    /// A cap: absent (nil), null (no cap: .some(nil)) or a number in `range`.
    private static func cap(_ o: inout JSONObject, _ key: String, range: ClosedRange<Int>) throws(APIError) -> Int?? {
        guard o.values.keys.contains(key) else { return nil }
        if o.values[key] is NSNull {
            _ = try o.string(key, nullable: true)
            return .some(nil)
        }
        return .some(try o.int(key, range: range))
    }

    static let adaptiveKeys: Set<String> = ["maxHeight", "maxBitrate", "initialBandwidth", "liveStartIndex"]

    var adaptiveJSON: [String: Any] {
        ["maxHeight": adaptive.maxHeight ?? NSNull(), "maxBitrate": adaptive.maxBitrate ?? NSNull(),
         "initialBandwidth": adaptive.initialBandwidth, "liveStartIndex": adaptive.liveStartIndex]
    }
}
