import Foundation
@testable import ScanoutBench
import Testing

@Suite("bench layout: trials and report")
struct LayoutReportTests {
    @Test("a Scanout trial passes with no zone's frame dropped and no compose late")
    func childVerdict() {
        var r = LayoutChildReport(zonesPresented: [1800, 1800], zonesDropped: [0, 0], zonesDecodeMs: [3, 4], zonesPresentMs: [0.1, 0.1],
                                  composed: 1810, lateComposes: 0, composeP50Ms: 12, composeP99Ms: 20, composeMaxMs: 31,
                                  startSeconds: 0.4, threadCPUSeconds: ["scanout-screen": 22.5, "scanout-player": 40])
        #expect(r.passed)
        #expect(LayoutBench.describe(r) == "dropped 0 (0 of 2 zones), late composes 0 of 1810, compose p50 12.00 ms, p99 20.00 ms, max 31.00 ms"
                + "; zone median: decode 4.00 ms/frame, present 0.10 ms/frame, 1800 frames at least; first frames after 0.40 s"
                + "; cpu s by thread: scanout-player 40.0, scanout-screen 22.5")
        r.lateComposes = 1
        #expect(!r.passed)
        r.lateComposes = 0
        r.zonesDropped = [0, 2]
        #expect(!r.passed)
    }

    static func report() -> LayoutReport {
        let trial = { (n: Int, passed: Bool) in
            LayoutTrial(zones: n, passed: passed, dropped: passed ? 0 : 3, lateComposes: 0, wallSeconds: 61.23456, cpuSeconds: 90.5, peakKiB: 204_800,
                        detail: "dropped \(passed ? 0 : 3)")
        }
        let size = LayoutSizeResult(size: "1080p30", clip: ".clips/layout-1080p30.mp4", codec: "h264", width: 1920, height: 1080, tools: [
            LayoutToolResult(tool: "scanout", zones: 4, trials: [trial(1, true), trial(2, true), trial(4, true), trial(8, false)]),
            LayoutToolResult(tool: "gstreamer", zones: 3, trials: [trial(1, true), trial(2, true), trial(4, false), trial(3, true)]),
            LayoutToolResult(tool: "ffmpeg", zones: nil, trials: [], missing: "ffmpeg is not installed"),
        ])
        return LayoutReport(canvasWidth: 1920, canvasHeight: 1080, fps: 30, seconds: 60, maxZones: 16, cores: 2,
                            loadAverageStart: 1.5, loadAverageEnd: 2.25, sizes: [size])
    }

    @Test("the report: JSON that reads back as written, the ratio to GStreamer, figures to 3 decimals")
    func reportRoundTrip() throws {
        let report = Self.report()
        #expect(report.sizes[0].ratioToGStreamer == 1.333)
        #expect(report.sizes[0].tools[0].trials[0].wallSeconds == 61.235)
        let text = try report.json()
        #expect(try LayoutReport.read(json: text) == report)
        let root = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(root["suite"] as? String == "layout" && root["seconds"] as? Double == 60 && root["fps"] as? Int == 30)
        let size = try #require((root["sizes"] as? [[String: Any]])?.first)
        #expect(size["ratioToGStreamer"] as? Double == 1.333)
        #expect((size["tools"] as? [[String: Any]])?.map { $0["zones"] as? Int } == [4, 3, nil])
        // No figure from GStreamer (none passed, or not run): no ratio.
        var none = report.sizes[0]
        none.tools[1].zones = 0
        #expect(LayoutSizeResult(size: none.size, clip: none.clip, codec: none.codec, width: 1920, height: 1080, tools: none.tools).ratioToGStreamer == nil)
    }

    @Test("the table: a row per size with each tool's zones and the ratio, then every trial")
    func table() {
        let lines = Self.report().table().components(separatedBy: "\n")
        #expect(Array(lines.prefix(6)) == [
            "bench layout: the most zones of one clip composed into 1920x1080 at 30 fps with no frame dropped for 60 s (a grid of ⌈√N⌉ columns, pictures fitted; N = 1, 2, 4, ... to the first failure, then bisected; at most 16)",
            "machine: 2 cores, load average 1.50 at the start, 2.25 at the end",
            "",
            "size     scanout N    gstreamer N  ffmpeg N     ratio scanout/gstreamer",
            "1080p30  4            3            missing      1.333",
            "",
        ])
        #expect(lines[6] == "1080p30: .clips/layout-1080p30.mp4 (h264 1920x1080)")
        #expect(lines[7] == "  scanout   1 zone    pass  wall 61.2 s, cpu 90.5 s (1.48 cores), peak 200.0 MiB; dropped 0")
        #expect(lines[10] == "  scanout   8 zones   FAIL  wall 61.2 s, cpu 90.5 s (1.48 cores), peak 200.0 MiB; dropped 3")
        #expect(lines.last == "  ffmpeg: missing (ffmpeg is not installed)")
    }
}
