import Foundation
import ScanoutCore
import ScanoutPlayer
import ScanoutRender

// `POST /load`, `GET|PUT /playlist`, `POST /playlist/jump`, `PUT /repeat`, and the playlist
// entries of these and of the config file.

extension Wire {
    /// An item as the API shows it (`/playlist`, `/state`, `GET /config`); its strings redacted.
    struct Item: Encodable, Sendable {
        var source: String
        @Nullable var scaling: String?
        var rotation: Int
        @Nullable var playerType: String?
        var tokenSet: Bool
        @Nullable var overlay: OverlayShown?
        @Nullable var subtitles: String?
        @Nullable var subtitleTrack: Int?
        var subtitleLanguages: [String]
        @Nullable var duration: Double?

        init(_ item: PlaylistItem) {
            source = item.source.redacted
            scaling = item.scaling?.rawValue
            rotation = item.rotation
            playerType = item.playerType?.rawValue
            tokenSet = item.token != nil
            overlay = item.overlay.map(OverlayShown.init)
            subtitles = item.subtitles?.file?.redacted
            subtitleTrack = item.subtitles?.track
            subtitleLanguages = (item.subtitles?.languages ?? []).map(\.redacted)
            duration = item.duration
        }
    }

    /// An overlay as the API shows it.
    struct OverlayShown: Encodable, Sendable {
        @Nullable var image: String?
        var opacity: Double
        var position: String

        init(_ o: Overlay) {
            image = o.path?.redacted
            opacity = o.opacity
            position = o.position.description
        }
    }

    /// `GET|PUT /playlist`.
    struct Playlist: Encodable, Sendable {
        var items: [Item]
        @Nullable var item: Int?
        var `repeat`: String

        init(_ s: PlayerSnapshot) {
            items = s.playlist.map(Item.init)
            item = s.index
            self.repeat = s.repeatMode.rawValue
        }
    }

    /// `POST /load`: one item (its fields in the body: `source` or `token`, ...) or `playlist`,
    /// with `start`, `autoplay`, `repeat`.
    struct LoadRequest: RequestBody {
        enum Field: String, CodingKey, CaseIterable {
            case source, token, playerType, scaling, rotation, overlay, playlist, start, autoplay, `repeat`, alang, aid
            case subtitles, subtitleLanguages, subtitleTrack, duration
        }
        var items: [PlaylistItem]
        /// Whether the item was the body's own (its token field is `token`), not a playlist's.
        var single: Bool
        var start: Int
        var autoplay: Bool
        var repeatMode: RepeatMode?

        init(from decoder: any Swift.Decoder) throws {
            let c = try decoder.container(keyedBy: Field.self)
            if c.has(.source) || c.has(.token) {
                guard !c.has(.playlist) else { throw APIError.badRequest("playlist", "give either source (or token) or playlist, not both") }
                items = [try ItemRequest(from: decoder).item]
                single = true
            } else if let list = try c.decodeIfPresent([ItemRequest].self, forKey: .playlist) {
                items = list.map(\.item)
                guard !items.isEmpty else { throw APIError.badRequest("playlist", "must not be empty") }
                single = false
            } else {
                throw APIError.badRequest("source", "is required (or token, or playlist)")
            }
            start = try c.decodeIfPresent(Int.self, forKey: .start, in: 0...Int.max) ?? 0
            guard start < items.count else { throw Wire.noItem(start, of: items.count) }
            autoplay = try c.decodeIfPresent(Bool.self, forKey: .autoplay) ?? true
            repeatMode = try c.decodeChoiceIfPresent(RepeatMode.self, forKey: .repeat)
        }
    }

    /// `PUT /playlist {items, start, autoplay}`.
    struct PlaylistRequest: RequestBody {
        enum Field: String, CodingKey, CaseIterable { case items, start, autoplay }
        var items: [PlaylistItem]
        var start: Int
        var autoplay: Bool

        init(from decoder: any Swift.Decoder) throws {
            let c = try decoder.container(keyedBy: Field.self)
            items = try c.decode([ItemRequest].self, forKey: .items).map(\.item)
            guard !items.isEmpty else { throw APIError.badRequest("items", "must not be empty") }
            start = try c.decodeIfPresent(Int.self, forKey: .start, in: 0...Int.max) ?? 0
            guard start < items.count else { throw Wire.noItem(start, of: items.count) }
            autoplay = try c.decodeIfPresent(Bool.self, forKey: .autoplay) ?? true
        }
    }

    static func noItem(_ start: Int, of count: Int) -> APIError {
        APIError(.notFound, "start: item \(start) does not exist (the playlist has \(count))", field: "start")
    }

    /// `POST /playlist/jump {index}`.
    struct JumpRequest: RequestBody {
        enum Field: String, CodingKey, CaseIterable { case index }
        var index: Int

        init(from decoder: any Swift.Decoder) throws {
            index = try decoder.container(keyedBy: Field.self).decode(Int.self, forKey: .index, in: 0...1_000_000)
        }
    }

    /// `PUT /repeat {repeat}`.
    struct RepeatRequest: RequestBody {
        enum Field: String, CodingKey, CaseIterable { case `repeat` }
        var mode: RepeatMode

        init(from decoder: any Swift.Decoder) throws {
            let c = try decoder.container(keyedBy: Field.self)
            guard let mode = try c.decodeChoiceIfPresent(RepeatMode.self, forKey: .repeat) else {
                throw APIError.badRequest(c.name(.repeat), "is required")
            }
            self.mode = mode
        }
    }

    /// A playlist entry: a string (the source) or an object: `source` (may be left out when
    /// `token`, a content token, names the URL), `token`, `playerType`, `scaling`, `rotation`,
    /// `overlay`, `alang`, `aid`, the subtitle fields and `duration` (seconds a still image is
    /// shown). An item without a source gets it when its token is verified.
    struct ItemRequest: Decodable {
        enum Field: String, CodingKey, CaseIterable {
            case source, token, playerType, scaling, rotation, overlay, alang, aid, subtitles, subtitleLanguages, subtitleTrack, duration
        }
        /// The shortest and longest time a still image may be shown, seconds.
        static let durations = 0.01...86_400.0
        var item: PlaylistItem

        init(from decoder: any Swift.Decoder) throws {
            let here = RequestDecoder.name(decoder.codingPath)
            if let source = try? decoder.singleValueContainer().decode(String.self) {
                guard !source.isEmpty else { throw APIError.badRequest(here, "must not be empty") }
                item = PlaylistItem(source: source)
                return
            }
            guard let c = try? decoder.container(keyedBy: Field.self) else {
                throw APIError.badRequest(here, "must be a string or an object with \"source\" or \"token\"")
            }
            let source = try c.decodeIfPresent(String.self, forKey: .source)
            if let source, source.isEmpty { throw APIError.badRequest(c.name(.source), "must not be empty") }
            let token = try c.decodeIfPresent(String.self, forKey: .token)
            if let token, token.isEmpty { throw APIError.badRequest(c.name(.token), "must not be empty") }
            guard source != nil || token != nil else { throw APIError.badRequest(c.name(.source), "is required (or a token whose url claim names it)") }
            let playerType = try c.decodeChoiceIfPresent(PlayerType.self, forKey: .playerType)
            let scaling = try c.decodeChoiceIfPresent(ScalingMode.self, forKey: .scaling)
            let rotation = try c.decodeIfPresent(Int.self, forKey: .rotation) ?? 0
            guard [0, 90, 180, 270].contains(rotation) else { throw APIError.badRequest(c.name(.rotation), "must be 0, 90, 180 or 270 (got \(rotation))") }
            let overlay = try c.decodeIfPresent(OverlayRequest.self, forKey: .overlay)?.load()
            item = PlaylistItem(source: source ?? "", scaling: scaling, rotation: rotation, playerType: playerType, token: token, overlay: overlay)
            item.audio = try Wire.audioSelection(c, languages: .alang, track: .aid)
            item.subtitles = try Wire.subtitleSelection(c, file: .subtitles, track: .subtitleTrack, languages: .subtitleLanguages)
            item.duration = try c.decodeIfPresent(Double.self, forKey: .duration, in: Self.durations)
        }
    }

    /// `alang` and `aid` of a playlist item or the config (absent: empty): languages in order of
    /// preference (a string `"de,en"` or an array), a stream index.
    static func audioSelection<K: CodingKey>(_ c: KeyedDecodingContainer<K>, languages: K, track: K) throws -> AudioSelection {
        var s = AudioSelection()
        if c.has(languages) { s.languages = try c.decode(AudioLanguages.self, forKey: languages).tags }
        s.track = try c.decodeIfPresent(Int.self, forKey: track, in: 0...1000)
        return s
    }

    /// `alang`: `"de,en"` or `["de", "en"]`.
    struct AudioLanguages: Decodable {
        var tags: [String] = []

        init(from decoder: any Swift.Decoder) throws {
            guard var list = try? decoder.unkeyedContainer() else {
                tags = try decoder.singleValueContainer().decode(String.self).split(separator: ",")
                    .map { String($0).trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
                return
            }
            while !list.isAtEnd {
                let at = RequestDecoder.name(decoder.codingPath) + "[\(list.currentIndex)]"
                guard let tag = try? list.decode(String.self), !tag.isEmpty else { throw APIError.badRequest(at, "must be a language tag (de, eng, en-US)") }
                tags.append(tag)
            }
        }
    }

    /// `overlay`: `{"image": "PATH", "opacity": 0...1, "position": "X,Y" | "CORNER[:MARGIN]"}`;
    /// the image is read (`load`) once the object is, so that a missing or unreadable file is
    /// refused with the field named.
    struct OverlayRequest: Decodable {
        enum Field: String, CodingKey, CaseIterable { case image, opacity, position }
        var image: String
        var opacity: Double
        var position: OverlayPosition
        /// `image`'s name in the request.
        var imageField: String

        init(from decoder: any Swift.Decoder) throws {
            let c = try decoder.container(keyedBy: Field.self)
            image = try c.decode(String.self, forKey: .image)
            imageField = c.name(.image)
            guard !image.isEmpty else { throw APIError.badRequest(imageField, "must not be empty") }
            opacity = try c.decodeIfPresent(Double.self, forKey: .opacity, in: 0...1) ?? 1
            position = .point(x: 0, y: 0)
            if let text = try c.decodeIfPresent(String.self, forKey: .position) {
                guard let p = OverlayPosition(text) else {
                    throw APIError.badRequest(c.name(.position), "must be \(OverlayPosition.syntax) (got \"\(text)\")")
                }
                position = p
            }
        }

        func load() throws(APIError) -> Overlay {
            do {
                return try Overlay.load(path: image, position: position, opacity: opacity)
            } catch {
                throw .badRequest(imageField, "\(image) cannot be read as an image: \(error)")
            }
        }
    }
}
