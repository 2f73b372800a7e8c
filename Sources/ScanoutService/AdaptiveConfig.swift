import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio

extension ServiceConfig {
    /// The adaptive HLS fields: `maxHeight` (pixels) and `maxBitrate` (bits a second) cap the
    /// variants played (null: no cap); `initialBandwidth` (bits a second) picks the start variant;
    /// `liveStartIndex` (segments from the live edge, negative) is where live playlists start;
    /// `minBufferForUp` (seconds buffered before any change up), `starvationMargin` (seconds:
    /// a segment is late when its rest would come later than the buffer less this) and
    /// `abandonSegments` (whether a late segment is abandoned for a lower variant's) steer the
    /// choice.
    mutating func applyAdaptive(_ o: inout JSONObject) throws(APIError) {
        if let v = try Self.cap(&o, "maxHeight", range: 1...16384) { adaptive.maxHeight = v }
        if let v = try Self.cap(&o, "maxBitrate", range: 1...1_000_000_000) { adaptive.maxBitrate = v }
        if let v = try o.int("initialBandwidth", range: 1...1_000_000_000) { adaptive.initialBandwidth = v }
        if let v = try o.int("liveStartIndex", range: -1000...1000) { adaptive.liveStartIndex = v }
        if let v = try o.double("minBufferForUp", range: 0...3600) { adaptive.minBufferForUp = v }
        if let v = try o.double("starvationMargin", range: 0...60) { adaptive.starvationMargin = v }
        if let v = try o.bool("abandonSegments") { adaptive.abandonSegments = v }
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

    static let adaptiveKeys: Set<String> = ["maxHeight", "maxBitrate", "initialBandwidth", "liveStartIndex",
                                            "minBufferForUp", "starvationMargin", "abandonSegments"]

    func encodeAdaptive(into c: inout KeyedEncodingContainer<WireKey>) throws {
        try c.encodeNullable(adaptive.maxHeight, forKey: "maxHeight"); try c.encodeNullable(adaptive.maxBitrate, forKey: "maxBitrate")
        try c.encode(adaptive.initialBandwidth, forKey: "initialBandwidth"); try c.encode(adaptive.liveStartIndex, forKey: "liveStartIndex")
        try c.encode(adaptive.minBufferForUp, forKey: "minBufferForUp"); try c.encode(adaptive.starvationMargin, forKey: "starvationMargin")
        try c.encode(adaptive.abandonSegments, forKey: "abandonSegments")
    }
}
