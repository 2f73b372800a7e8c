import Foundation
@testable import ScanoutBench
import Testing

@Suite("bench reports")
struct BenchReportTests {
    /// Two measured runs of Scanout and ffmpeg on one input, and mpv missing.
    static func decodeResult() -> InputResult {
        var r = InputResult(input: "/media/a.mp4", video: testVideo())
        r.frames = 96
        r.tools = [ToolFigures(tool: "scanout", values: [100.12345, 120], cpuMsPerUnit: [5, 7], peakKiB: 51200, internalFPS: [400, 500]),
                   ToolFigures(tool: "ffmpeg", values: [60, 40], cpuMsPerUnit: [9, 8], peakKiB: 40960, internalFPS: [200, 250])]
        r.missing = ["mpv"]
        r.unitMs = [5, 1, 4, 2, 3]
        r.dropped = [0, 0]
        r.decoder = "sw: libavcodec h264 (software)"
        r.peerDecoding = "-threads 2"
        return r
    }

    static func configuration() -> BenchConfiguration {
        var c = BenchConfiguration(inputs: ["/media/a.mp4"])
        c.runs = 2
        c.warmup = 0
        c.threads = 2
        c.peers = ["ffmpeg", "mpv"]
        return c
    }

    @Test("JSON: the run's settings, each tool's figures rounded to 3 decimals, ratios, percentiles, null for no figure")
    func json() throws {
        var r = Self.decodeResult()
        r.tools.append(ToolFigures(tool: "gstreamer"))
        let text = BenchReport.json(suite: .decode, configuration: Self.configuration(), results: [r])
        let root = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(root["suite"] as? String == "decode")
        #expect(root["metric"] as? String == "fps")
        #expect(root["higherIsBetter"] as? Bool == true)
        #expect(root["threads"] as? Int == 2 && root["runs"] as? Int == 2 && root["warmup"] as? Int == 0 && root["streams"] as? Int == 1)
        #expect(root["renderer"] as? String == "cpu" && root["playerType"] as? String == "auto")
        let input = try #require((root["inputs"] as? [[String: Any]])?.first)
        #expect(input["input"] as? String == "/media/a.mp4")
        #expect(input["codec"] as? String == "h264" && input["width"] as? Int == 320 && input["height"] as? Int == 240)
        #expect(input["pixelFormat"] as? String == "yuv420p")
        #expect(input["units"] as? Int == 96)
        let results = try #require(input["results"] as? [[String: Any]])
        #expect(results.map { $0["tool"] as? String } == ["scanout", "ffmpeg", "gstreamer"])
        #expect(results[0]["values"] as? [Double] == [100.123, 120])
        #expect(results[0]["median"] as? Double == 120)
        #expect(results[0]["cpuMsPerUnit"] as? [Double] == [5, 7])
        #expect(results[0]["peakKiB"] as? Int == 51200)
        #expect(results[1]["median"] as? Double == 60)
        // A tool with no figure: its median is null, not NaN.
        #expect(results[2]["median"] is NSNull)
        #expect(input["ratios"] as? [String: Double] == ["ffmpeg": 2])
        #expect(input["scanoutUnitMs"] as? [String: Double] == ["p50": 3, "p90": 5, "p99": 5, "max": 5])
        #expect(input["missing"] as? [String] == ["mpv"])
        #expect(input["peerDecoding"] as? String == "-threads 2")
        #expect(input["dropped"] as? [Int] == [0, 0])
    }

    @Test("JSON, decode --streams: each tool's streams with unrounded seconds, and the ratio of the aggregate medians")
    func streamsJSON() throws {
        var r = Self.decodeResult()
        var ours = StreamFigures(processes: 1), theirs = StreamFigures(processes: 2)
        ours.record(frames: [96, 96], seconds: [0.5, 0.75], wall: 0.75)
        theirs.record(frames: [96, 96], seconds: [1.5, 1.125], wall: 1.5)
        r.streams = ["scanout": ours, "ffmpeg": theirs]
        var c = Self.configuration()
        c.streams = 2
        let text = BenchReport.json(suite: .decode, configuration: c, results: [r])
        let root = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let input = try #require((root["inputs"] as? [[String: Any]])?.first)
        let streams = try #require(input["streams"] as? [String: [String: Any]])
        #expect(streams["scanout"]?["aggregateFPS"] as? Double == 256)
        #expect(streams["scanout"]?["perStreamFPS"] as? [Double] == [192, 128])
        #expect(streams["ffmpeg"]?["processes"] as? Int == 2)
        #expect(streams["ffmpeg"]?["seconds"] as? [Double] == [1.5, 1.125])
        #expect(streams["ffmpeg"]?["aggregateFPS"] as? Double == 128)
        #expect(streams["ffmpeg"]?["aggregateFPSMedian"] as? Double == 128)
        #expect(input["aggregateRatios"] as? [String: Double] == ["ffmpeg": 2])
    }

    @Test("table: the settings, a row per tool with its ratio, in-process figures, then what Scanout says of itself")
    func table() {
        let text = BenchReport.table(suite: .decode, configuration: Self.configuration(), results: [Self.decodeResult()])
        let lines = text.components(separatedBy: "\n")
        #expect(lines == [
            "bench decode: threads 2 per stream, streams 1, player type auto, 2 runs after 0 warm-up; whole-process time per tool; fps (higher is better)",
            "",
            "/media/a.mp4: h264 320x240 yuv420p, 96 frames",
            "  tool       fps median    min       max       cpu ms/unit  peak MiB  ratio scanout/tool",
            "  scanout    120.0         100.1     120.0     7.00         50.0      ",
            "  ffmpeg     60.0          40.0      60.0      9.00         40.0      2.000",
            "  in-process (scanout decode loop vs ffmpeg -benchmark rtime): 500.0 vs 250.0 fps, ratio 2.000",
            "  scanout decoder: sw: libavcodec h264 (software)",
            "  ffmpeg decoder: -threads 2",
            "  scanout frame time: p50 3.00 ms, p90 5.00 ms, p99 5.00 ms, max 5.00 ms",
            "  mpv: missing (not installed, or it failed on this input)",
            "",
        ])
    }

    @Test("table, play: Scanout's drops and pacing, each peer's drops and delayed frames")
    func playTable() {
        var r = InputResult(input: "a.mp4", video: testVideo())
        r.frames = 96
        r.tools = [ToolFigures(tool: "scanout"), ToolFigures(tool: "mpv")]
        r.dropped = [3, 1, 2]
        r.pacing = (0.25, 1.5)
        r.peerDrops = ["mpv": [(dropped: 4, delayed: 1), (dropped: 0, delayed: 2), (dropped: 6, delayed: 0)]]
        r.noEquivalent = ["ffmpeg"]
        var c = Self.configuration()
        c.runs = 3
        let text = BenchReport.table(suite: .play, configuration: c, results: [r])
        #expect(text.components(separatedBy: "\n").dropFirst(2) == [
            "a.mp4: h264 320x240 yuv420p, 96 frames",
            "  scanout  dropped median 2 (max 3), pacing p50 0.25 ms, p99 1.50 ms",
            "  mpv      dropped median 4 (max 6), delayed median 1",
            "  ffmpeg: no equivalent for the play suite",
            "",
        ])
    }
}
