import Foundation
import ScanoutTestSupport
import Testing

/// A segment abandoned mid-download through `scanout serve`: the change of variant as an event,
/// the count in /stats and in metrics.
@Suite struct AbandonedSegmentServeTests {
    @Test func abandonedSegmentIsReportedAsEventStatsAndMetrics() async throws {
        try await offPool {
            let hls = try HTTPFileServer.hls(directory: try Fixtures.path("hls3"))
            // The third segment of 320x240 (the start variant at the default 2 Mb/s estimate):
            // 40 kB at once, then 8 kB/s, a tenth of its bitrate.
            try hls.control("trickle?prefix=/v2/seg2.ts&rate=8000&after=40000")
            let server = try ServeProcess(arguments: ["--paused", "--output", "headless", hls.url("master.m3u8")])
            let config = try #require(try server.request("GET", "/config").json)
            #expect(config["abandonSegments"] as? Bool == true && config["minBufferForUp"] as? Double == 8)
            let events = try SSEReader(server.tcp, path: "/events")
            _ = events.read(timeout: 5) { $0.event == "state" }
            #expect(try server.request("POST", "/play").status == 200)
            let seen = events.read(timeout: 15) { $0.event == "variantSwitch" && !($0.json?["from"] is NSNull) }
            let change = try #require(seen.last { $0.event == "variantSwitch" }?.json)
            #expect((change["from"] as? [String: Any])?["height"] as? Int == 240, "\(change)")
            #expect((change["reason"] as? String)?.hasPrefix("segment abandoned: ") == true, "\(change)")
            let stats = try #require(try server.request("GET", "/stats").json?["adaptive"] as? [String: Any])
            #expect(stats["abandonedSegments"] as? Int == 1 && stats["switches"] as? Int == 1, "\(stats)")
            let metrics = try server.request("GET", "/metrics").text
            #expect(metrics.contains("scanout_hls_segments_abandoned_total 1"), "\(metrics)")
            #expect(metrics.contains("# HELP scanout_hls_segments_abandoned_total "))
            #expect(server.terminate() == 0)
        }
    }
}
