import Foundation
import ScanoutTestSupport
import Testing

/// `scanout serve` on a network file whose server stalls longer than what is read ahead: the
/// `buffering` event comes when the wait starts, with the reason and the level; `/state` and
/// `/stats` carry the buffer; metrics count the wait; no frame is dropped.
@Suite(.serialized) struct BufferingServeTests {
    @Test func aStallIsBufferingFromItsStartAndCostsNoFrame() async throws {
        try await offPool {
            let files = try HTTPFileServer(directory: Fixtures.directory.path,
                                           faults: ["--stall-at", "60000", "--stall-for", "4", "--times", "1"])
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("scanout-stall-\(getpid()).json")
            defer { try? FileManager.default.removeItem(at: file) }
            try #"{"output": "headless", "timeout": 12}"#.write(to: file, atomically: true, encoding: .utf8)
            let server = try ServeProcess(arguments: ["--config", file.path, "--paused", files.url("faststart.mp4")])
            let config = try #require(try server.request("GET", "/config").json?["buffering"] as? [String: Any])
            #expect(config["readAhead"] as? Double == 30 && config["resumeAfter"] as? Double == 1)
            let events = try SSEReader(server.tcp, path: "/events")
            _ = events.read(timeout: 5) { $0.event == "state" }
            #expect(try server.request("POST", "/play").status == 200)
            let started = Date()
            let on = events.read(timeout: 10) { $0.event == "buffering" && $0.json?["buffering"] as? Bool == true }
            let onAt = Date().timeIntervalSince(started)
            let reason = on.last?.json?["reason"] as? String
            #expect(reason?.contains("ran dry") == true, "\(String(describing: reason))")
            // While it waits: the state and the level.
            let state = try #require(try server.request("GET", "/state").json)
            #expect(state["state"] as? String == "buffering")
            let buffer = try #require(state["buffer"] as? [String: Any])
            #expect(buffer["policy"] as? String == "pause")
            #expect(buffer["packets"] as? Int == 0 || (buffer["seconds"] as? Double ?? 9) < 1)
            let off = events.read(timeout: 10) { $0.event == "buffering" && $0.json?["buffering"] as? Bool == false }
            let offAt = Date().timeIntervalSince(started)
            #expect(!off.isEmpty)
            // Said when the wait started, not when the data came back.
            #expect(offAt - onAt > 1.0, "on at \(onAt) s, off at \(offAt) s")
            _ = events.read(timeout: 10) { $0.event == "ended" || ($0.event == "state" && $0.json?["state"] as? String == "ended") }
            let stats = try #require(try server.request("GET", "/stats").json)
            #expect(stats["framesDropped"] as? Int == 0, "\(stats)")
            #expect(stats["framesPresented"] as? Int == 96, "\(stats)")
            let waits = try #require((stats["buffer"] as? [String: Any])?["waits"] as? Int)
            #expect(waits >= 1)
            let metrics = try server.request("GET", "/metrics").text
            #expect(metrics.contains("# HELP scanout_buffer_level_seconds "))
            #expect(metrics.contains("scanout_buffering_waits_total \(waits)"), "\(metrics)")
            #expect(server.terminate() == 0)
        }
    }

    @Test func theSettingsAreReadAndCheckedFieldByField() async throws {
        try await offPool {
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("scanout-buffering-\(getpid())")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: dir) }
            let good = dir.appendingPathComponent("good.json")
            try #"{"output": "headless", "buffering": {"readAhead": 12, "maxBytes": 8388608, "resumeAfter": 2.5}}"#.write(to: good, atomically: true, encoding: .utf8)
            let server = try ServeProcess(arguments: ["--config", good.path, "--paused"])
            let b = try #require(try server.request("GET", "/config").json?["buffering"] as? [String: Any])
            #expect(b["readAhead"] as? Double == 12 && b["maxBytes"] as? Int == 8_388_608 && b["resumeAfter"] as? Double == 2.5)
            #expect(server.terminate() == 0)
            let bad = dir.appendingPathComponent("bad.json")
            try #"{"output": "headless", "buffering": {"resumeAfter": -1}}"#.write(to: bad, atomically: true, encoding: .utf8)
            let r = try Proc.run(try ScanoutBinary.path(), ["serve", "--config", bad.path], timeout: 20)
            #expect(r.status != 0)
            #expect(r.stderrText.contains("buffering.resumeAfter"), "\(r.stderrText)")
        }
    }
}
