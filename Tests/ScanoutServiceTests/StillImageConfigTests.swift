import Foundation
import ScanoutPlayer
@testable import ScanoutService
import Testing

/// How long still images are shown: an item's `duration`, the configuration's `imageDuration`.
@Suite struct StillImageConfigTests {
    func refusal<T: RequestBody>(_ type: T.Type, _ json: String) -> String? {
        do {
            _ = try RequestDecoder.decode(T.self, json: Data(json.utf8))
            return nil
        } catch {
            return (error as? APIError)?.message
        }
    }

    @Test("an item's duration is read, shown by the playlist, and refused outside 0.01...86400 by its path")
    func itemDuration() throws {
        let load = try RequestDecoder.decode(Wire.LoadRequest.self, json: Data(#"{"playlist": [{"source": "a.png", "duration": 7.5}, "b.mp4"]}"#.utf8))
        #expect(load.items.map(\.duration) == [7.5, nil])
        let shown = String(decoding: try JSONEncoder().encode(Wire.Item(load.items[0])), as: UTF8.self)
        #expect(shown.contains(#""duration":7.5"#))
        #expect(refusal(Wire.LoadRequest.self, #"{"playlist": [{"source": "a.png", "duration": 0}]}"#)
                == "playlist[0].duration: must be within 0.01...86400 (got 0)")
        #expect(refusal(Wire.LoadRequest.self, #"{"source": "a.png", "duration": "5"}"#) == "duration: must be a number")
    }

    @Test("imageDuration: 5 s by default, set at run time by PUT /config, given to the player")
    func configuration() throws {
        var c = ServiceConfig()
        #expect(c.imageDuration == 5 && c.playerConfiguration.imageDuration == 5)
        try c.apply(json: Data(#"{"imageDuration": 12}"#.utf8), runtimeOnly: true)
        #expect(c.imageDuration == 12 && c.playerConfiguration.imageDuration == 12)
        do {
            try c.apply(json: Data(#"{"imageDuration": -1}"#.utf8), runtimeOnly: true)
            Issue.record("a negative duration was accepted")
        } catch {
            #expect(error.message == "imageDuration: must be within 0.01...86400 (got -1)")
        }
        #expect(c.imageDuration == 12)
    }
}
