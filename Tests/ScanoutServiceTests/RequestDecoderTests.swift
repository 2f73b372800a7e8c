import Foundation
@testable import ScanoutService
import Testing

/// Request bodies read into their wire types: each refusal names the field by its path, with the
/// words the API has always used.
@Suite struct RequestDecoderTests {
    func decode<T: RequestBody>(_ type: T.Type, _ json: String) throws -> T {
        try RequestDecoder.decode(T.self, json: Data(json.utf8))
    }

    func refusal<T: RequestBody>(_ type: T.Type, _ json: String) -> APIError? {
        do {
            _ = try decode(type, json)
            return nil
        } catch {
            return error as? APIError
        }
    }

    @Test func fieldsAreReadWithTheirTypesRangesAndDefaults() throws {
        let seek = try decode(Wire.SeekRequest.self, #"{"position": 2}"#)
        #expect(seek.position == 2 && seek.exact)
        #expect(try decode(Wire.JumpRequest.self, #"{"index": 3.0}"#).index == 3)
        #expect(try decode(Wire.RepeatRequest.self, #"{"repeat": "all"}"#).mode == .all)
        let volume = try decode(Wire.VolumeRequest.self, #"{"mute": false}"#)
        #expect(volume.volume == nil && volume.mute == false)
        // null is a value of its own for the subtitle track: none.
        let off = try decode(Wire.SubtitlesRequest.self, #"{"track": null}"#)
        #expect(off.track == .some(nil) && off.enabled == nil)
        #expect(try decode(Wire.SubtitlesRequest.self, #"{"delay": 0.5}"#).track == nil)
        let load = try decode(Wire.LoadRequest.self, #"{"playlist": ["a.mp4", {"source": "b.mkv", "alang": "de, en", "subtitleLanguages": ["fr"]}], "start": 1}"#)
        #expect(load.items.map(\.source) == ["a.mp4", "b.mkv"] && load.start == 1 && !load.single)
        #expect(load.items[1].audio.languages == ["de", "en"] && load.items[1].subtitles?.languages == ["fr"])
        #expect(try decode(Wire.LoadRequest.self, #"{"source": "a.mp4", "rotation": 90}"#).items.first?.rotation == 90)
    }

    @Test func refusalsNameTheFieldAndWhatIsWrong() {
        let cases: [(APIError?, String)] = [
            (refusal(Wire.SeekRequest.self, #"{}"#), "position: is required"),
            (refusal(Wire.SeekRequest.self, #"{"position": "2"}"#), "position: must be a number"),
            (refusal(Wire.SeekRequest.self, #"{"position": true}"#), "position: must be a number"),
            (refusal(Wire.SeekRequest.self, #"{"position": -1}"#), "position: must be within 0...1000000000 (got -1)"),
            (refusal(Wire.SeekRequest.self, #"{"position": 1, "exact": null}"#), "exact: must not be null"),
            (refusal(Wire.SeekRequest.self, #"{"position": 1, "exact": 1}"#), "exact: must be true or false"),
            (refusal(Wire.JumpRequest.self, #"{"index": 2.5}"#), "index: must be an integer"),
            (refusal(Wire.JumpRequest.self, #"{"index": 1e300}"#), "index: must be within 0...1000000 (got 1e+300)"),
            (refusal(Wire.RepeatRequest.self, #"{"repeat": "sometimes"}"#), #"repeat: must be one of none, one, all (got "sometimes")"#),
            (refusal(Wire.RateRequest.self, #"{"rate": 8}"#), "rate: must be within 0.25...4 (got 8)"),
            (refusal(Wire.SubtitlesRequest.self, #"{"track": -1}"#), "track: must be within 0...2147483647 (got -1)"),
            (refusal(Wire.LoadRequest.self, #"{}"#), "source: is required (or token, or playlist)"),
            (refusal(Wire.LoadRequest.self, #"{"source": "a", "playlist": ["b"]}"#), "playlist: give either source (or token) or playlist, not both"),
            (refusal(Wire.LoadRequest.self, #"{"playlist": []}"#), "playlist: must not be empty"),
            (refusal(Wire.LoadRequest.self, #"{"playlist": "a.mp4"}"#), "playlist: must be an array"),
            (refusal(Wire.LoadRequest.self, #"{"playlist": [7]}"#), #"playlist[0]: must be a string or an object with "source" or "token""#),
            (refusal(Wire.LoadRequest.self, #"{"playlist": [""]}"#), "playlist[0]: must not be empty"),
            (refusal(Wire.LoadRequest.self, #"{"playlist": [{"src": "a"}]}"#), "playlist[0].source: is required (or a token whose url claim names it)"),
            (refusal(Wire.LoadRequest.self, #"{"playlist": ["a", {"source": "b", "src": "c"}]}"#), "playlist[1].src: unknown field"),
            (refusal(Wire.LoadRequest.self, #"{"playlist": [{"source": "b", "rotation": 45}]}"#), "playlist[0].rotation: must be 0, 90, 180 or 270 (got 45)"),
            (refusal(Wire.LoadRequest.self, #"{"playlist": [{"source": "b", "alang": ["de", 3]}]}"#), "playlist[0].alang[1]: must be a language tag (de, eng, en-US)"),
            (refusal(Wire.LoadRequest.self, #"{"source": "b", "subtitleLanguages": ["en", ""]}"#), "subtitleLanguages[1]: must be a language tag (en, fre, pt-BR)"),
            (refusal(Wire.LoadRequest.self, #"{"source": "b", "overlay": {"opacity": 2}}"#), "overlay.image: is required"),
            (refusal(Wire.LoadRequest.self, #"{"source": "b", "overlay": {"image": "x.png", "size": 2}}"#), "overlay.size: unknown field"),
            (refusal(Wire.LoadRequest.self, #"{"source": "b", "start": 1}"#), "start: item 1 does not exist (the playlist has 1)"),
            (refusal(Wire.AssetRequest.self, #"{"id": ".x", "token": "t"}"#), "id: must be 1 to 64 letters, digits, '-', '_' or '.', not starting with '.'"),
            (refusal(Wire.DownloadRequest.self, #"{"source": "s", "maxBitrate": 1, "maxHeight": 1}"#), "maxHeight: give maxBitrate or maxHeight, not both"),
        ]
        for (error, message) in cases {
            #expect(error?.message == message)
            #expect(error.map { message.hasPrefix(($0.field ?? "?") + ":") } == true, "\(message): field \(error?.field ?? "none")")
        }
    }
}
