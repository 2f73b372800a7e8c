import Foundation
import ScanoutPlayer
import ScanoutService
import ScanoutTestSupport
import Testing

@Suite struct AudioServiceTests {
    @Test func configFieldsAndPerItemTracks() throws {
        var c = ServiceConfig()
        #expect(c.audio.device == "none" && c.audio.volume == 100 && !c.audio.muted)
        try c.apply(json: Data(#"""
            {"audioDevice": "hdmi:CARD=PCH,DEV=0", "volume": 70, "mute": true, "alang": "de, en", "aid": 2,
             "playlist": ["a.mp4", {"source": "b.mkv", "alang": ["fr"], "aid": 1}]}
            """#.utf8), runtimeOnly: false)
        #expect(c.audio.device == "hdmi:CARD=PCH,DEV=0" && c.audio.volume == 70 && c.audio.muted)
        #expect(c.audio.selection == AudioSelection(track: 2, languages: ["de", "en"]))
        #expect(c.playlist[0].audio.isEmpty)
        #expect(c.playlist[1].audio == AudioSelection(track: 1, languages: ["fr"]))
        #expect(c.playerConfiguration.audio.device == "hdmi:CARD=PCH,DEV=0")
        #expect(c.json["audioDevice"] as? String == "hdmi:CARD=PCH,DEV=0" && c.json["alang"] as? [String] == ["de", "en"])

        try c.apply(json: Data(#"{"volume": 20, "mute": false}"#.utf8), runtimeOnly: true)
        #expect(c.audio.volume == 20 && !c.audio.muted)
        #expect(throws: APIError.self) { try c.apply(json: Data(#"{"audioDevice": "default"}"#.utf8), runtimeOnly: true) }
        #expect(throws: APIError.self) { try c.apply(json: Data(#"{"volume": 101}"#.utf8), runtimeOnly: false) }
    }

    @Test func volumeThroughTheAPI() throws {
        let server = try ServeProcess(arguments: ["--output", "headless", "--repeat", "all", try Fixtures.path("tracks.mkv")])
        let a = try server.request("POST", "/volume", body: #"{"volume": 30}"#)
        #expect(a.status == 200, "\(a.text)")
        #expect(a.json?["volume"] as? Int == 30 && a.json?["mute"] as? Bool == false)
        let b = try server.request("POST", "/volume", body: #"{"mute": true}"#)
        #expect(b.json?["volume"] as? Int == 30 && b.json?["mute"] as? Bool == true)
        let config = try #require(try server.request("GET", "/config").json)
        #expect(config["volume"] as? Int == 30 && config["mute"] as? Bool == true && config["audioDevice"] as? String == "none")
        for (body, field) in [("{}", "volume"), (#"{"volume": 101}"#, "volume"), (#"{"mute": "yes"}"#, "mute")] {
            let r = try server.request("POST", "/volume", body: body)
            #expect(r.status == 400 && r.json?["field"] as? String == field, "\(body): \(r.text)")
        }
        #expect(server.terminate() == 0)
    }

    /// `/stats` says which device the sound goes to, in what format, and what it did (frames
    /// played, underruns, chunks dropped); null with no device.
    @Test func statsReportTheDeviceAndItsCounts() throws {
        let scratch = try Scratch()
        let device = "file:FILE=\(scratch.path("out.raw")),FORMAT=raw"
        let server = try ServeProcess(arguments: ["--output", "headless", "--repeat", "all", "--audio-device", device,
                                                  try Fixtures.path("tracks.mkv")])
        var audio: [String: Any]?
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            audio = try server.request("GET", "/stats").json?["audio"] as? [String: Any]
            if let played = audio?["framesPlayed"] as? Int, played > 0 { break }
            usleep(100_000)
        }
        let a = try #require(audio)
        #expect(a["device"] as? String == device)
        #expect((a["sampleRate"] as? Int ?? 0) > 0 && (a["channels"] as? Int ?? 0) > 0)
        #expect((a["framesPlayed"] as? Int ?? 0) > 0 && a["underruns"] is Int && a["chunksDropped"] as? Int == 0)
        #expect((a["periodFrames"] as? Int ?? 0) > 0 && (a["bufferFrames"] as? Int ?? 0) >= (a["periodFrames"] as? Int ?? 0))
        #expect(a["loss"] is NSNull)
        #expect(server.terminate() == 0)

        let silent = try ServeProcess(arguments: ["--output", "headless", try Fixtures.path("tracks.mkv")])
        #expect(try silent.request("GET", "/stats").json?["audio"] is NSNull)
        #expect(silent.terminate() == 0)
    }
}
