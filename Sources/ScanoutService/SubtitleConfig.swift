import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio

/// The service-wide subtitle defaults: `subtitleLanguages` (preferred languages for items that
/// name none of their own) and `subtitles {enabled, delay, safeMargin}` (on/off, seconds,
/// the margin: below 1 a fraction of the output's size, else pixels). Runtime keys: `PUT /config`
/// and SIGHUP apply them from the next item on.
extension Wire.ConfigBody {
    struct Subtitles {
        var languages: [String]?
        var defaults: SubtitleDefaults?

        init(_ c: Fields) throws {
            languages = try c.decodeIfPresent(Wire.LanguageTags.self, forKey: .subtitleLanguages)?.tags
            defaults = try c.decodeIfPresent(SubtitleDefaults.self, forKey: .subtitles)
        }
    }

    /// `subtitles {enabled, delay, safeMargin}`.
    struct SubtitleDefaults: Decodable {
        enum Field: String, CodingKey, CaseIterable { case enabled, delay, safeMargin }
        var enabled: Bool?
        var delay: Double?
        var margin: SubtitleMargin?

        init(from decoder: any Swift.Decoder) throws {
            let c = try decoder.container(keyedBy: Field.self)
            enabled = try c.decodeIfPresent(Bool.self, forKey: .enabled)
            delay = try c.decodeIfPresent(Double.self, forKey: .delay, in: -600...600)
            if let v = try c.decodeIfPresent(Double.self, forKey: .safeMargin, in: 0...4096) {
                guard let m = SubtitleMargin(v) else {
                    throw APIError.badRequest(c.name(.safeMargin), "must be a fraction below 1 (0.05) or whole pixels (48)")
                }
                margin = m
            }
        }
    }
}

extension ServiceConfig {
    mutating func applySubtitles(_ s: Wire.ConfigBody.Subtitles) {
        if let v = s.languages { subtitles.languages = v }
        guard let d = s.defaults else { return }
        if let v = d.enabled { subtitles.enabled = v }
        if let v = d.delay { subtitles.delay = v }
        if let v = d.margin { subtitles.margin = v }
    }

    func encodeSubtitles(into c: inout KeyedEncodingContainer<WireKey>) throws {
        try c.encode(subtitles.languages, forKey: "subtitleLanguages")
        var o = c.nestedContainer(keyedBy: WireKey.self, forKey: "subtitles")
        try o.encode(subtitles.enabled, forKey: "enabled"); try o.encode(subtitles.delay, forKey: "delay")
        try o.encode(subtitles.margin.number, forKey: "safeMargin")
    }
}
