import Foundation
import Hummingbird
import HummingbirdTesting
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ScanoutPlayer
@testable import ScanoutService
import ScanoutTestSupport
import Testing

@Suite("tracks in /state, subtitle fields of /load, POST /subtitles")
struct SubtitleAPITests {
    @Test("/load with subtitleLanguages: /state lists the tracks with the English one selected; POST /subtitles changes delay, track, on/off")
    func stateAndSubtitles() async throws {
        let clip = try Fixtures.path("tracks.mkv")
        let service = try await InProcessService(keys: nil)
        defer { service.player.shutdown() }
        try await Application(router: service.api.router()).test(.router) { client in
            let load = try await service.request(client, .post, "/load", ["source": clip, "subtitleLanguages": ["en"]])
            #expect(load.status == 200)
            let item = try #require((load.json["playlist"] as? [[String: Any]])?.first)
            #expect(item["subtitleLanguages"] as? [String] == ["en"] && item["subtitles"] is NSNull)
            let state = try await service.request(client, .get, "/state").json
            let tracks = try #require(state["tracks"] as? [[String: Any]])
            #expect(tracks.map { $0["index"] as? Int } == [1, 2, 3, 4])
            #expect(tracks.map { $0["kind"] as? String } == ["audio", "audio", "subtitle", "subtitle"])
            #expect(tracks.map { $0["language"] as? String } == ["eng", "ger", "eng", "fre"])
            #expect(tracks.map { $0["selected"] as? Bool } == [false, false, true, false])
            #expect(tracks[3]["forced"] as? Bool == true && tracks[1]["title"] as? String == "Deutsch")
            #expect(tracks[0]["sampleRate"] as? Int == 48000 && tracks[0]["channels"] as? Int == 2)
            let subs = try #require(state["subtitles"] as? [String: Any])
            #expect(subs["track"] as? Int == 3 && subs["enabled"] as? Bool == true && subs["delay"] as? Double == 0)

            let changed = try await service.request(client, .post, "/subtitles", ["delay": 0.5, "track": 4])
            #expect(changed.status == 200)
            let now = try #require(changed.json["subtitles"] as? [String: Any])
            #expect(now["track"] as? Int == 4 && now["delay"] as? Double == 0.5)
            #expect((changed.json["tracks"] as? [[String: Any]])?.map { $0["selected"] as? Bool } == [false, false, false, true])
            let off = try await service.request(client, .post, "/subtitles", ["enabled": false, "track": NSNull()])
            #expect((off.json["subtitles"] as? [String: Any])?["track"] is NSNull)
            #expect((off.json["subtitles"] as? [String: Any])?["enabled"] as? Bool == false)

            let bad = try await service.request(client, .post, "/subtitles", ["track": 1])
            #expect(bad.status == 400 && bad.json["field"] as? String == "track")
            let unknown = try await service.request(client, .post, "/subtitles", ["lang": "en"])
            #expect(unknown.status == 400)
            let events = service.events.compactMap { e -> SubtitleStatus? in
                if case let .subtitlesChanged(s) = e { return s } else { return nil }
            }
            #expect(events.map(\.track) == [4, nil])
        }
    }

    @Test("service defaults: subtitleLanguages and subtitles {enabled, delay, safeMargin} reach the player and GET /config, at run time too; bad margins are refused")
    func serviceDefaults() throws {
        var c = ServiceConfig()
        try c.apply(json: Data(#"{"subtitleLanguages": ["fr"], "subtitles": {"enabled": true, "delay": 0.25, "safeMargin": 48}}"#.utf8), runtimeOnly: true)
        let p = c.playerConfiguration.subtitles
        #expect(p.languages == ["fr"] && p.delay == 0.25 && p.margin == .pixels(48) && p.enabled)
        #expect(c.json["subtitleLanguages"] as? [String] == ["fr"])
        let subs = try #require(c.json["subtitles"] as? [String: Any])
        #expect(subs["safeMargin"] as? Double == 48 && subs["delay"] as? Double == 0.25 && subs["enabled"] as? Bool == true)
        // An item that names its own languages keeps the service's delay and margin.
        let item = p.overridden(by: SubtitleSelection(languages: ["en"]))
        #expect(item.languages == ["en"] && item.delay == 0.25 && item.margin == .pixels(48))
        try c.apply(json: Data(#"{"subtitles": {"safeMargin": 0.05, "enabled": false}}"#.utf8), runtimeOnly: true)
        #expect(c.subtitles.margin == .fraction(0.05) && !c.subtitles.enabled && c.subtitles.languages == ["fr"])
        for bad in [#"{"subtitles": {"safeMargin": 1.5}}"#, #"{"subtitles": {"margin": 0.1}}"#, #"{"subtitleLanguages": [""]}"#] {
            var d = ServiceConfig()
            #expect(throws: APIError.self, "\(bad)") { try d.apply(json: Data(bad.utf8), runtimeOnly: false) }
        }
    }

    @Test("item fields are checked: an empty subtitles path, a language that is not a string")
    func refusals() throws {
        for (entry, field) in [(#"{"source": "a.mkv", "subtitles": ""}"#, "playlist[0].subtitles"),
                               (#"{"source": "a.mkv", "subtitleLanguages": [3]}"#, "playlist[0].subtitleLanguages[0]"),
                               (#"{"source": "a.mkv", "subtitleTrack": -1}"#, "playlist[0].subtitleTrack")] {
            let list = try JSONSerialization.jsonObject(with: Data("[\(entry)]".utf8)) as! [Any]
            #expect { _ = try parsePlaylist(list, field: "playlist") } throws: { e in (e as? APIError)?.field == field }
        }
        let list = try JSONSerialization.jsonObject(with: Data(#"[{"source": "a.mkv", "subtitles": "a.srt", "subtitleTrack": 3}]"#.utf8)) as! [Any]
        let item = try #require(try parsePlaylist(list, field: "playlist").first)
        #expect(item.subtitles?.file == "a.srt" && item.subtitles?.track == 3)
    }
}
