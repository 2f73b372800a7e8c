import Foundation
import ScanoutTestSupport
import Testing

/// `scanout serve` of an HLS VOD playlist: its length (ffprobe's format duration) in /state and
/// in every `position` event.
@Suite struct HLSDurationServeTests {
    @Test func vodPlaylistDurationInStateAndPositionEvents() async throws {
        try await offPool {
            let hls = try HTTPFileServer.hls(directory: try Fixtures.path("hls3"))
            let probe = try Proc.run("ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "default=nw=1:nk=1", hls.url("master.m3u8")])
            let expected = try #require(Double(probe.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)))
            let server = try ServeProcess(arguments: ["--paused", "--output", "headless", hls.url("master.m3u8")])
            let events = try SSEReader(server.tcp, path: "/events")
            _ = events.read(timeout: 10) { $0.event == "state" }
            let state = try #require(try server.request("GET", "/state").json)
            let duration = try #require(state["duration"] as? Double, "\(state)")
            #expect(abs(duration - expected) < 0.001)
            #expect(try server.request("POST", "/play").status == 200)
            let seen = events.read(timeout: 15) { $0.event == "ended" }
            let positions = seen.filter { $0.event == "position" }.compactMap(\.json)
            #expect(positions.count >= 3, "\(seen.map(\.event))")
            for p in positions {
                #expect((p["duration"] as? Double).map { abs($0 - expected) < 0.001 } == true, "\(p)")
            }
            #expect(server.terminate() == 0)
        }
    }
}
