import Foundation
@testable import ScanoutBench
@testable import ScanoutDemux
import ScanoutCore
import Testing

/// An input's stream as the reports print it: h264, 320x240, yuv420p.
func testVideo() -> VideoStreamInfo {
    VideoStreamInfo(index: 0, codecName: "h264", codecLongName: "H.264", profile: nil, width: 320, height: 240, pixelFormat: .yuv420p,
                    timeBase: Rational(1, 30), frameRate: Rational(30, 1), startTime: 0, duration: 96, declaredFrameCount: 96,
                    sampleAspectRatio: Rational(1, 1), orientation: .identity, colorSpace: .bt709, colorRange: .limited, bitRate: 0)
}

@Suite("bench figures")
struct BenchFiguresTests {
    @Test("the middle value is the upper one of an even count; percentiles by nearest rank")
    func medianAndPercentiles() {
        #expect(upperMedian([3, 1, 2]) == 2)
        #expect(upperMedian([4, 1, 3, 2]) == 3)
        #expect(upperMedian([]).isNaN)
        let s: [Double] = [1, 2, 3, 4, 5]
        #expect(pct(s, 50) == 3)
        #expect(pct(s, 90) == 5)
        #expect(pct(s, 10) == 1)
        #expect(pct([], 50).isNaN)
    }

    @Test("ratio: Scanout's median over the peer's; none for a peer without figures or with 0")
    func ratio() {
        var r = InputResult(input: "a.mp4", video: testVideo())
        r.tools = [ToolFigures(tool: "scanout", values: [100, 120, 110]), ToolFigures(tool: "ffmpeg", values: [50, 55]),
                   ToolFigures(tool: "mpv", values: [0]), ToolFigures(tool: "gstreamer")]
        #expect(r.ratio(to: "ffmpeg") == 2)
        #expect(r.ratio(to: "mpv") == nil)
        #expect(r.ratio(to: "gstreamer") == nil)
        #expect(r.ratio(to: "vlc") == nil)
    }

    @Test("streams: aggregate = all frames / wall, per stream = its frames / its seconds, a median over runs")
    func streams() {
        var f = StreamFigures(processes: 3)
        f.record(frames: [96, 96, 96], seconds: [1, 2, 1.5], wall: 2)
        #expect(f.aggregateFPS == 144)
        #expect(f.perStreamFPS == [96, 48, 64])
        f.record(frames: [96, 96, 96], seconds: [1, 1, 1], wall: 1)
        f.record(frames: [96, 96, 96], seconds: [4, 4, 4], wall: 4)
        #expect(f.aggregateRuns == [144, 288, 72])
        #expect(f.aggregateMedian == 144)
        #expect(f.frames == [96, 96, 96] && f.wallSeconds == 4)
    }

    @Test("seek targets: the same pseudo-random frames for every tool and run, inside the stream")
    func seekTargetsAreFixed() {
        #expect(seekTargets(frameCount: 96, count: 8) == [38, 95, 15, 67, 75, 78, 65, 75])
        #expect(seekTargets(frameCount: 1000, count: 5) == [846, 615, 471, 443, 931])
        #expect(seekTargets(frameCount: 0, count: 5) == [])
    }

    @Test("a child's report comes back from its JSON as it was written")
    func childReportRoundTrip() throws {
        var report = ChildReport(frames: 96, internalSeconds: 0.75, unitMs: [7.5, 8.25, 6])
        report.dropped = 2
        report.pacingP50Ms = 0.5
        report.pacingP99Ms = 3.25
        report.decoder = "hw: VA-API /dev/dri/renderD128 (Intel iHD driver)"
        report.decoderLabel = "VA-API /dev/dri/renderD128 (Intel iHD driver)"
        report.streamFrames = [48, 48]
        report.streamSeconds = [0.5, 0.625]
        report.streamsWallSeconds = 0.625
        report.stageMs = ["upload": 1.5, "draw": 0.25, "readback": 2]
        report.readback = "pipelined, 3 deep"
        report.copies = "1.00 CPU copies/frame (0 downloads, 96 uploads, 0 GPU copies, 0 imports)"
        report.stages = [Stage(name: "open", ms: 12.5), Stage(name: "first frame", ms: 30)]
        let data = try JSONEncoder().encode(report)
        let back = try JSONDecoder().decode(ChildReport.self, from: data)
        #expect(back == report)
        // The fields the parent reads are named as written.
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["frames"] as? Int == 96)
        #expect(object["decoderLabel"] as? String == "VA-API /dev/dri/renderD128 (Intel iHD driver)")
        #expect(object["streamFrames"] as? [Int] == [48, 48])
    }
}
