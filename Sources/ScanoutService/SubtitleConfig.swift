import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio

/// The service-wide subtitle defaults: `subtitleLanguages` (preferred languages for items that
/// name none of their own) and `subtitles {enabled, delay, safeMargin}` (on/off, seconds,
/// the margin: below 1 a fraction of the output's size, else pixels). Runtime keys: `PUT /config`
/// and SIGHUP apply them from the next item on.
extension ServiceConfig {
    static let subtitleKeys: Set<String> = ["subtitleLanguages", "subtitles"]

    mutating func applySubtitles(_ o: inout JSONObject) throws(APIError) {
        if let v = try o.decode("subtitleLanguages", as: Wire.LanguageTags.self) { subtitles.languages = v.tags }
        guard var s = try o.object("subtitles") else { return }
        if let v = try s.bool("enabled") { subtitles.enabled = v }
        if let v = try s.double("delay", range: -600...600) { subtitles.delay = v }
        if let v = try s.double("safeMargin", range: 0...4096) {
            guard let m = SubtitleMargin(v) else {
                throw .badRequest(s.name("safeMargin"), "must be a fraction below 1 (0.05) or whole pixels (48)")
            }
            subtitles.margin = m
        }
        try s.rejectUnknown()
    }

    func encodeSubtitles(into c: inout KeyedEncodingContainer<WireKey>) throws {
        try c.encode(subtitles.languages, forKey: "subtitleLanguages")
        var o = c.nestedContainer(keyedBy: WireKey.self, forKey: "subtitles")
        try o.encode(subtitles.enabled, forKey: "enabled"); try o.encode(subtitles.delay, forKey: "delay")
        try o.encode(subtitles.margin.number, forKey: "safeMargin")
    }
}
