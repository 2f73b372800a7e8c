import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ScanoutService
import ScanoutTestSupport
import Testing

@Suite struct TimeshiftConfigTests {
    @Test func timeshiftSettingsReachThePlayerAndADirectoryMustBeWritable() throws {
        var c = ServiceConfig()
        #expect(c.playerConfiguration.timeshift == TimeshiftOptions(seconds: 30, maxBytes: 256 << 20))
        try c.apply(json: Data(#"{"timeshift": {"seconds": 10, "maxBytes": 8388608, "directory": null}}"#.utf8), runtimeOnly: false)
        #expect(c.playerConfiguration.timeshift == TimeshiftOptions(seconds: 10, maxBytes: 8 << 20))
        #expect((c.json["timeshift"] as? [String: Any])?["seconds"] as? Double == 10)
        #expect(throws: APIError.self) { try c.apply(json: Data(#"{"timeshift": {"directory": "/nonexistent/scanout"}}"#.utf8), runtimeOnly: false) }
        let scratch = try Scratch()
        try c.apply(json: Data(#"{"timeshift": {"directory": "\#(scratch.url.path)"}}"#.utf8), runtimeOnly: false)
        #expect(c.playerConfiguration.timeshift.directory == scratch.url.path)
        #expect(throws: APIError.badRequest("timeshift.minutes", "unknown field")) {
            try c.apply(json: Data(#"{"timeshift": {"minutes": 1}}"#.utf8), runtimeOnly: false)
        }
    }
}

/// `scanout serve` on a live UDP channel (loopback unicast), driven over HTTP.
@Suite("Timeshift over the API", .serialized, .timeLimit(.minutes(1)))
struct TimeshiftAPITests {
    @Test func pauseSeekBackAndReturnToLive() async throws { try await offPool { [self] in try self.pauseSeekBackAndReturnToLiveBlocking() } }

    func pauseSeekBackAndReturnToLiveBlocking() throws {
        let sender = try LoopbackSender()
        let server = try ServeProcess(arguments: ["--output", "headless", sender.source])
        func state() throws -> [String: Any] { try server.request("GET", "/state").json ?? [:] }
        func timeshift(_ s: [String: Any]) -> [String: Double] { s["timeshift"] as? [String: Double] ?? [:] }

        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline {
            let s = try state()
            // Playing, with more than a second of the buffer behind the frame on screen.
            let t = timeshift(s)
            if s["state"] as? String == "playing", let p = t["position"], let a = t["start"], p - a > 1.2 { break }
            usleep(100_000)
        }
        let playing = try state()
        #expect(playing["live"] as? Bool == true)
        #expect((playing["liveDuration"] as? Double ?? 0) > 0.5)

        let paused = try #require(try server.request("POST", "/pause").json)
        let at = try #require(timeshift(paused)["position"])
        usleep(1_000_000)
        let back = try server.request("POST", "/timeshift/seek", body: #"{"relative": -1}"#)
        #expect(back.status == 200, "\(back.text)")
        let t = timeshift(back.json ?? [:])
        #expect(abs(try #require(t["position"]) - (at - 1)) < 1e-6)
        #expect(try #require(t["behindLive"]) > 1.5)
        #expect(back.json?["state"] as? String == "paused")

        let start = try #require(t["start"])
        let exact = try server.request("POST", "/timeshift/seek", body: "{\"absolute\": \(start)}")
        #expect(timeshift(exact.json ?? [:])["position"] == start)
        let outside = try server.request("POST", "/timeshift/seek", body: "{\"absolute\": \(start - 0.5)}")
        #expect(outside.status == 400 && outside.json?["field"] as? String == "position", "\(outside.text)")
        let itemSeek = try server.request("POST", "/seek", body: #"{"position": 1}"#)
        #expect(itemSeek.status == 409 && itemSeek.text.contains("timeshift buffer"), "\(itemSeek.text)")
        let both = try server.request("POST", "/timeshift/seek", body: #"{"relative": -1, "absolute": 2}"#)
        #expect(both.status == 400 && both.json?["field"] as? String == "body")

        let live = try server.request("POST", "/timeshift/live")
        #expect(live.status == 200 && live.json?["state"] as? String == "playing", "\(live.text)")
        // At the newest frame received when the command ran; the edge moved on while the GOP
        // up to it was decoded (more on a loaded machine), but far less than the 2 s it was behind.
        #expect(try #require(timeshift(live.json ?? [:])["behindLive"]) < 1)
        let reader = try SSEReader(server.tcp, path: "/events", headers: ["Last-Event-ID": "0"])
        let events = reader.read(timeout: 5) { $0.event == "liveEdge" }
        #expect(events.contains { $0.event == "liveEdge" })
        #expect(server.terminate() == 0)
    }
}
