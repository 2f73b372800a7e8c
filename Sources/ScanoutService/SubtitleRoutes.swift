import Foundation
import Hummingbird
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ScanoutPlayer

/// The subtitle fields of a playlist item and of `/load`: `subtitles` (a sideband file or URL),
/// `subtitleLanguages` (preferred languages), `subtitleTrack` (an embedded track by stream index).
enum SubtitleFields {
    static let names = ["subtitles", "subtitleLanguages", "subtitleTrack"]

    /// The item's selection; nil when it names none (the player's applies).
    static func parse(_ o: inout JSONObject) throws(APIError) -> SubtitleSelection? {
        let file = try o.string("subtitles")
        if let file, file.isEmpty { throw .badRequest(o.name("subtitles"), "must not be empty") }
        let track = try o.int("subtitleTrack", range: 0...Int(Int32.max))
        let languages = try self.languages(&o) ?? []
        guard file != nil || track != nil || !languages.isEmpty else { return nil }
        return SubtitleSelection(file: file, track: track, languages: languages)
    }

    /// `subtitleLanguages`: language tags, first first; nil when absent.
    static func languages(_ o: inout JSONObject) throws(APIError) -> [String]? {
        guard let list = try o.array("subtitleLanguages") else { return nil }
        var languages: [String] = []
        for (i, v) in list.enumerated() {
            guard let s = v as? String, !s.isEmpty else { throw .badRequest("\(o.name("subtitleLanguages"))[\(i)]", "must be a language tag (en, fre, pt-BR)") }
            languages.append(s)
        }
        return languages
    }

    static func json(_ s: SubtitleSelection?) -> [String: Any] {
        ["subtitles": s?.file ?? NSNull(), "subtitleTrack": s?.track ?? NSNull(), "subtitleLanguages": s?.languages ?? []]
    }

    /// `/state`'s `subtitles` and the `subtitlesChanged` event.
    static func status(_ s: SubtitleStatus) -> [String: Any] {
        ["enabled": s.enabled, "delay": s.delay, "track": s.track ?? NSNull(), "file": s.file ?? NSNull(), "error": s.error ?? NSNull()]
    }
}

extension ControlAPI {
    /// `POST /subtitles`.
    func subtitleRoutes() -> RouteCollection<ServiceRequestContext> {
        let routes = RouteCollection(context: ServiceRequestContext.self)
        routes.post("/subtitles") { [self] request, context in
            var o = try await body(request, context, fields: ["enabled", "delay", "track"])
            return jsonResponse(try await subtitles(&o))
        }
        return routes
    }

    /// `POST /subtitles {"enabled", "delay", "track"}`: on/off, delay in seconds (positive: later),
    /// the embedded track by stream index (null: none). Answers with the state.
    func subtitles(_ o: inout JSONObject) async throws -> [String: Any] {
        let enabled = try o.bool("enabled")
        let delay = try o.double("delay", range: -600...600)
        var track: Int?? = nil
        if o.values.keys.contains("track") {
            if o.has("track") {
                track = .some(try o.int("track", range: 0...Int(Int32.max)))
            } else {
                _ = try o.string("track", nullable: true)   // null: no subtitle track
                track = .some(nil)
            }
        }
        try o.rejectUnknown()
        let change = track
        return WireFormat.state(try await perform { e in try e.setSubtitles(enabled: enabled, delay: delay, track: change); return e.snapshot() })
    }
}
