import Foundation
import ScanoutTestSupport
import Testing

/// `serve --channels FILE` starts on a channel instead of idle: the one tuned last (kept in the
/// state directory as `channel.json`), else the list's first. Two channels sent over loopback UDP.
@Suite(.serialized) struct ChannelStartTests {
    /// The channel `server` plays: /channels' `current`, once frames are shown (nil after 10 s without).
    static func playing(_ server: ServeProcess) throws -> String? {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            let stats = try server.request("GET", "/stats").json
            if (stats?["framesPresented"] as? Int ?? 0) > 5, let current = try server.request("GET", "/channels").json?["current"] as? String {
                return current
            }
            usleep(100_000)
        }
        return nil
    }

    @Test("a fresh state directory starts on the first channel; a restart starts on the channel tuned last")
    func startsOnAChannel() async throws {
        try await offPool {
            let scratch = try Scratch()
            let one = try LoopbackSender(seconds: 60), two = try LoopbackSender(seconds: 60)
            let m3u = scratch.path("channels.m3u"), state = scratch.path("state")
            try ["#EXTM3U", "#EXTINF:-1 tvg-id=\"one\",One", one.source, "#EXTINF:-1 tvg-id=\"two\",Two", two.source]
                .joined(separator: "\n").write(toFile: m3u, atomically: true, encoding: .utf8)
            let arguments = ["--output", "headless", "--channels", m3u, "--state-dir", state, "--live-timeout", "3"]

            let first = try ServeProcess(arguments: arguments)
            #expect(try Self.playing(first) == "one", "\(first.stderr)")
            #expect(try first.request("GET", "/state").json?["state"] as? String == "playing")
            let tuned = try first.request("POST", "/channel", body: #"{"id": "two"}"#)
            #expect(tuned.status == 200, "\(tuned.text)")
            #expect(try Self.playing(first) == "two")
            #expect(first.terminate() == 0)
            let saved = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: state + "/channel.json"))) as? [String: Any]
            #expect(saved?["id"] as? String == "two")

            let second = try ServeProcess(arguments: arguments)
            #expect(try Self.playing(second) == "two", "\(second.stderr)")
            #expect(second.stderr.contains("tuning two (Two), the channel tuned last"), "\(second.stderr)")
            #expect(second.terminate() == 0)

            // A saved channel that left the list: the first, and the log says why.
            try JSONSerialization.data(withJSONObject: ["id": "gone", "version": 1]).write(to: URL(fileURLWithPath: state + "/channel.json"))
            let third = try ServeProcess(arguments: arguments + ["--paused"])
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline, try third.request("GET", "/channels").json?["current"] as? String == nil { usleep(100_000) }
            #expect(try third.request("GET", "/channels").json?["current"] as? String == "one")
            #expect(try third.request("GET", "/state").json?["state"] as? String != "playing")
            #expect(third.stderr.contains("the channel tuned last, gone, is no longer listed"), "\(third.stderr)")
            #expect(third.terminate() == 0)
        }
    }
}
