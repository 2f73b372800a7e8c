import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio

/// `buffering`: how network inputs with an end (files over HTTP, HLS VOD) are read ahead of
/// playback, and when playback resumes after the read-ahead ran dry (`PacketReadAhead`).
///
///     buffering {readAhead (s; 0: off), maxBytes, resumeAfter (s)}
extension ServiceConfig {
    mutating func applyBuffering(_ o: inout JSONObject) throws(APIError) {
        guard var t = try o.object("buffering") else { return }
        if let v = try t.double("readAhead", range: 0...3600) {
            readAhead.enabled = v > 0
            if v > 0 { readAhead.seconds = v }
        }
        if let v = try t.int("maxBytes", range: 1 << 20...(8 << 30)) { readAhead.maxBytes = v }
        if let v = try t.double("resumeAfter", range: 0...600) { readAhead.resumeSeconds = v }
        try t.rejectUnknown()
    }

    func encodeBuffering(into c: inout KeyedEncodingContainer<WireKey>) throws {
        var o = c.nestedContainer(keyedBy: WireKey.self, forKey: "buffering")
        try o.encode(readAhead.enabled ? readAhead.seconds : 0, forKey: "readAhead"); try o.encode(readAhead.maxBytes, forKey: "maxBytes")
        try o.encode(readAhead.resumeSeconds, forKey: "resumeAfter")
    }
}
