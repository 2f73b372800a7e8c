import Foundation
import ScanoutTestSupport
import Testing

/// Adaptive HLS through `scanout serve`: the variant choice as events, in /stats and in metrics.
@Suite struct AdaptiveServiceTests {
    @Test func variantChoiceIsReportedAsEventsStatsAndMetrics() async throws {
        try await offPool {
            let hls = try HTTPFileServer.hls(directory: try Fixtures.path("hls3"))
            // 30 kB/s (240 kb/s) carries 256x192 (165 kb/s) but not 288x216 (330 kb/s); the cap
            // keeps 320x240 out although the initial estimate (2 Mb/s) would carry it.
            try hls.control("throttle?prefix=/v1/&rate=30000")
            let server = try ServeProcess(arguments: ["--paused", "--output", "headless", "--max-height", "216", hls.url("master.m3u8")])
            let config = try #require(try server.request("GET", "/config").json)
            #expect(config["maxHeight"] as? Int == 216 && config["maxBitrate"] is NSNull)
            let events = try SSEReader(server.tcp, path: "/events")
            _ = events.read(timeout: 5) { $0.event == "state" }
            #expect(try server.request("POST", "/play").status == 200)
            let seen = events.read(timeout: 15) { $0.event == "variantSwitch" && !($0.json?["from"] is NSNull) }
            let switches = seen.filter { $0.event == "variantSwitch" }.compactMap(\.json)
            let heights = switches.compactMap { ($0["to"] as? [String: Any])?["height"] as? Int }
            #expect(heights == [216, 192], "\(switches)")
            if let down = switches.last {
                #expect((down["from"] as? [String: Any])?["height"] as? Int == 216)
                let bandwidth = try #require(down["bandwidth"] as? Double)
                #expect(bandwidth < 330_000 && bandwidth > 165_000, "\(down)")
                #expect((down["reason"] as? String)?.contains("below") == true)
                #expect(down["pts"] is Int && down["seconds"] is Double)
            }
            let stats = try #require(try server.request("GET", "/stats").json?["adaptive"] as? [String: Any])
            #expect((stats["variant"] as? [String: Any])?["height"] as? Int == 192)
            #expect((stats["variants"] as? [Any])?.count == 3 && stats["switches"] as? Int == 1)
            let metrics = try server.request("GET", "/metrics").text
            #expect(metrics.contains("scanout_hls_variant_switches_total 1"), "\(metrics)")
            #expect(metrics.contains("scanout_hls_variant_bitrate_bytes_per_second 20625"))
            #expect(metrics.contains("# HELP scanout_hls_variant_switches_total "))
            #expect(server.terminate() == 0)
        }
    }
}
