import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio

extension Wire.ConfigBody {
    /// The adaptive HLS fields: `maxHeight` (pixels) and `maxBitrate` (bits a second) cap the
    /// variants played (null: no cap); `initialBandwidth` (bits a second) picks the start variant;
    /// `liveStartIndex` (segments from the live edge, negative) is where live playlists start;
    /// `minBufferForUp` (seconds buffered before any change up), `starvationMargin` (seconds:
    /// a segment is late when its rest would come later than the buffer less this) and
    /// `abandonSegments` (whether a late segment is abandoned for a lower variant's) steer the
    /// choice.
    struct Adaptive {
        var maxHeight: Int??
        var maxBitrate: Int??
        var initialBandwidth: Int?
        var liveStartIndex: Int?
        var minBufferForUp: Double?
        var starvationMargin: Double?
        var abandonSegments: Bool?

        init(_ c: Fields) throws {
            maxHeight = try c.nullable(.maxHeight) { try c.decode(Int.self, forKey: .maxHeight, in: 1...16384) }
            maxBitrate = try c.nullable(.maxBitrate) { try c.decode(Int.self, forKey: .maxBitrate, in: 1...1_000_000_000) }
            initialBandwidth = try c.decodeIfPresent(Int.self, forKey: .initialBandwidth, in: 1...1_000_000_000)
            liveStartIndex = try c.decodeIfPresent(Int.self, forKey: .liveStartIndex, in: -1000...1000)
            minBufferForUp = try c.decodeIfPresent(Double.self, forKey: .minBufferForUp, in: 0...3600)
            starvationMargin = try c.decodeIfPresent(Double.self, forKey: .starvationMargin, in: 0...60)
            abandonSegments = try c.decodeIfPresent(Bool.self, forKey: .abandonSegments)
        }
    }
}

extension ServiceConfig {
    mutating func applyAdaptive(_ f: Wire.ConfigBody.Adaptive) {
        if let v = f.maxHeight { adaptive.maxHeight = v }
        if let v = f.maxBitrate { adaptive.maxBitrate = v }
        if let v = f.initialBandwidth { adaptive.initialBandwidth = v }
        if let v = f.liveStartIndex { adaptive.liveStartIndex = v }
        if let v = f.minBufferForUp { adaptive.minBufferForUp = v }
        if let v = f.starvationMargin { adaptive.starvationMargin = v }
        if let v = f.abandonSegments { adaptive.abandonSegments = v }
    }

    func encodeAdaptive(into c: inout KeyedEncodingContainer<WireKey>) throws {
        try c.encodeNullable(adaptive.maxHeight, forKey: "maxHeight"); try c.encodeNullable(adaptive.maxBitrate, forKey: "maxBitrate")
        try c.encode(adaptive.initialBandwidth, forKey: "initialBandwidth"); try c.encode(adaptive.liveStartIndex, forKey: "liveStartIndex")
        try c.encode(adaptive.minBufferForUp, forKey: "minBufferForUp"); try c.encode(adaptive.starvationMargin, forKey: "starvationMargin")
        try c.encode(adaptive.abandonSegments, forKey: "abandonSegments")
    }
}
