import Foundation
import ScanoutDecode
import ScanoutPlayer

// `POST /subtitles`, the `subtitles` of `/state` and the `subtitlesChanged` event.

extension Wire {
    /// Subtitles as they are shown: on or off, the delay, the embedded track or the file, and
    /// why they failed; the strings redacted.
    struct SubtitleStatus: Encodable, Sendable {
        var enabled: Bool
        var delay: Double
        @Nullable var track: Int?
        @Nullable var file: String?
        @Nullable var error: String?

        init(_ s: ScanoutPlayer.SubtitleStatus) {
            enabled = s.enabled
            delay = s.delay
            track = s.track
            file = s.file?.redacted
            error = s.error?.redacted
        }

        /// The fields into an event's object.
        func encodeFields(into c: inout KeyedEncodingContainer<WireKey>) throws {
            try c.encode(enabled, forKey: "enabled")
            try c.encode(delay, forKey: "delay")
            try c.encodeNullable(track, forKey: "track")
            try c.encodeNullable(file, forKey: "file")
            try c.encodeNullable(error, forKey: "error")
        }
    }

    /// `POST /subtitles {enabled, delay, track}`: on/off, delay in seconds (positive: later), the
    /// embedded track by stream index (null: none); a field left out is left as it is.
    struct SubtitlesRequest: RequestBody {
        enum Field: String, CodingKey, CaseIterable { case enabled, delay, track }
        var enabled: Bool?
        var delay: Double?
        /// nil: unchanged; `.some(nil)`: no track.
        var track: Int??

        init(from decoder: any Swift.Decoder) throws {
            let c = try decoder.container(keyedBy: Field.self)
            enabled = try c.decodeIfPresent(Bool.self, forKey: .enabled)
            delay = try c.decodeIfPresent(Double.self, forKey: .delay, in: -600...600)
            if c.contains(.track) {
                track = try c.decodeNil(forKey: .track) ? .some(nil) : .some(try c.decodeIfPresent(Int.self, forKey: .track, in: 0...Int(Int32.max)))
            }
        }
    }

    /// The subtitle fields of a playlist item and of `/load`: `subtitles` (a sideband file or
    /// URL), `subtitleLanguages` (preferred languages, first first), `subtitleTrack` (an
    /// embedded track by stream index); nil when the item names none (the player's applies).
    static func subtitleSelection<K: CodingKey>(_ c: KeyedDecodingContainer<K>, file: K, track: K, languages: K) throws -> SubtitleSelection? {
        let path = try c.decodeIfPresent(String.self, forKey: file)
        if let path, path.isEmpty { throw APIError.badRequest(c.name(file), "must not be empty") }
        let index = try c.decodeIfPresent(Int.self, forKey: track, in: 0...Int(Int32.max))
        let tags = try c.decodeIfPresent(LanguageTags.self, forKey: languages)?.tags ?? []
        guard path != nil || index != nil || !tags.isEmpty else { return nil }
        return SubtitleSelection(file: path, track: index, languages: tags)
    }

    /// `subtitleLanguages`: an array of language tags.
    struct LanguageTags: Decodable {
        var tags: [String] = []

        init(from decoder: any Swift.Decoder) throws {
            var list = try decoder.unkeyedContainer()
            while !list.isAtEnd {
                let at = RequestDecoder.name(decoder.codingPath) + "[\(list.currentIndex)]"
                guard let tag = try? list.decode(String.self), !tag.isEmpty else {
                    throw APIError.badRequest(at, "must be a language tag (en, fre, pt-BR)")
                }
                tags.append(tag)
            }
        }
    }
}
