import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio

/// `buffering`: how network inputs with an end (files over HTTP, HLS VOD) are read ahead of
/// playback, and when playback resumes after the read-ahead ran dry (`PacketReadAhead`).
///
///     buffering {readAhead (s; 0: off), maxBytes, resumeAfter (s)}
extension Wire.ConfigBody {
    struct Buffering: Decodable {
        enum Field: String, CodingKey, CaseIterable { case readAhead, maxBytes, resumeAfter }
        var readAhead: Double?
        var maxBytes: Int?
        var resumeAfter: Double?

        init(from decoder: any Swift.Decoder) throws {
            let c = try decoder.container(keyedBy: Field.self)
            readAhead = try c.decodeIfPresent(Double.self, forKey: .readAhead, in: 0...3600)
            maxBytes = try c.decodeIfPresent(Int.self, forKey: .maxBytes, in: 1 << 20...(8 << 30))
            resumeAfter = try c.decodeIfPresent(Double.self, forKey: .resumeAfter, in: 0...600)
        }
    }
}

extension ServiceConfig {
    mutating func applyBuffering(_ b: Wire.ConfigBody.Buffering) {
        if let v = b.readAhead {
            readAhead.enabled = v > 0
            if v > 0 { readAhead.seconds = v }
        }
        if let v = b.maxBytes { readAhead.maxBytes = v }
        if let v = b.resumeAfter { readAhead.resumeSeconds = v }
    }

    func encodeBuffering(into c: inout KeyedEncodingContainer<WireKey>) throws {
        var o = c.nestedContainer(keyedBy: WireKey.self, forKey: "buffering")
        try o.encode(readAhead.enabled ? readAhead.seconds : 0, forKey: "readAhead"); try o.encode(readAhead.maxBytes, forKey: "maxBytes")
        try o.encode(readAhead.resumeSeconds, forKey: "resumeAfter")
    }
}
