import Foundation
@testable import ScanoutBench
import Testing

@Suite("bench zap")
struct ZapTests {
    @Test("the plan: channels in turn, phases from SplitMix64 of the seed, the same for every tool")
    func plan() {
        let plan = ZapPlan(channels: 2, zaps: 4, seed: 1)
        #expect(plan.steps.map(\.channel) == [0, 1, 0, 1])
        #expect(plan.steps.map(\.phase) == [0.5665615751722809, 0.7457817572627011, 0.9710027535867962, 0.4443592170557721])
        #expect(ZapPlan(channels: 2, zaps: 4, seed: 1).steps.map(\.phase) == plan.steps.map(\.phase))
        #expect(ZapPlan(channels: 2, zaps: 4, seed: 2).steps.map(\.phase) != plan.steps.map(\.phase))
    }

    /// A TS packet of `pid`, with a PCR of `pcr` (90 kHz) in its adaptation field when given.
    static func packet(pid: Int, pcr: Int64? = nil) -> [UInt8] {
        var p = [UInt8](repeating: 0xFF, count: 188)
        p[0] = 0x47
        p[1] = UInt8((pid >> 8) & 0x1F)
        p[2] = UInt8(pid & 0xFF)
        p[3] = pcr == nil ? 0x10 : 0x30
        if let pcr {
            p[4] = 7
            p[5] = 0x10
            p[6] = UInt8((pcr >> 25) & 0xFF)
            p[7] = UInt8((pcr >> 17) & 0xFF)
            p[8] = UInt8((pcr >> 9) & 0xFF)
            p[9] = UInt8((pcr >> 1) & 0xFF)
            p[10] = UInt8((pcr & 1) << 7)
            p[11] = 0
        }
        return p
    }

    @Test("datagram times: interpolated between two PCRs, extrapolated past the last, from the file's start")
    func datagramTimes() throws {
        // 28 packets (4 datagrams of 7); PCRs of PID 0x100 at packet 0 (1.0 s) and 14 (1.1 s).
        var data: [UInt8] = []
        for i in 0..<28 {
            data += i == 0 ? Self.packet(pid: 0x100, pcr: 90_000) : i == 14 ? Self.packet(pid: 0x100, pcr: 99_000) : Self.packet(pid: 0x101)
        }
        let (times, period) = try ZapChannel.datagramTimes(data, packets: 28, file: "t.ts")
        let expected = [0, 0.05, 0.1, 0.15]
        #expect(times.count == 4)
        for (t, e) in zip(times, expected) { #expect(abs(t - e) < 1e-12, "\(times)") }
        #expect(abs(period - 0.2) < 1e-12)
    }

    @Test("datagram times: a file without two PCRs, or out of sync, is refused with its name")
    func datagramTimesRefused() {
        let one = Self.packet(pid: 0x100, pcr: 90_000) + Self.packet(pid: 0x101)
        do {
            _ = try ZapChannel.datagramTimes(one, packets: 2, file: "one.ts")
            Issue.record("a file with one PCR was given times")
        } catch {
            #expect("\(error)" == "one.ts: fewer than two PCRs, so it cannot be sent in real time")
        }
        var lost = Self.packet(pid: 0x100, pcr: 90_000) + Self.packet(pid: 0x100, pcr: 99_000)
        lost[188] = 0
        do {
            _ = try ZapChannel.datagramTimes(lost, packets: 2, file: "lost.ts")
            Issue.record("a packet without its sync byte was read")
        } catch {
            #expect("\(error)" == "lost.ts: lost TS sync at packet 1")
        }
    }

    static func results() -> [ZapResult] { [
        ZapResult(tool: "scanout", ms: [100, 300, 200], inProcessMs: [80, 90, 70], stagesMs: ["open": [10, 30, 20], "probe": [5, 5, 5]],
                  afterKeyframeMs: [40, 50, 60]),
        ZapResult(tool: "mpv", ms: [400, 200, 300], afterKeyframeMs: [100, 90, 80]),
    ] }

    @Test("JSON: each tool's changes sorted, median, mean, p90, max, how many over the target, the stages' medians")
    func json() throws {
        let text = ZapBench.json(Self.results(), inputs: ["/m/a.ts"], channels: 2, gop: 10.0 / 3, target: 250)
        let root = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(root["suite"] as? String == "zap" && root["channels"] as? Int == 2 && root["inputs"] as? [String] == ["/m/a.ts"])
        #expect(root["keyframeInterval"] as? Double == 3.333)
        #expect(root["targetMs"] as? Double == 250)
        let tools = try #require(root["tools"] as? [[String: Any]])
        #expect(tools.map { $0["tool"] as? String } == ["scanout", "mpv"])
        #expect(tools[0]["zapsMs"] as? [Double] == [100, 200, 300])
        #expect(tools[0]["medianMs"] as? Double == 200 && tools[0]["meanMs"] as? Double == 200)
        #expect(tools[0]["p90Ms"] as? Double == 300 && tools[0]["maxMs"] as? Double == 300)
        #expect(tools[0]["overTarget"] as? Int == 1)
        #expect(tools[0]["afterKeyframeMedianMs"] as? Double == 50)
        #expect(tools[0]["inProcessMedianMs"] as? Double == 80)
        #expect(tools[0]["stagesMedianMs"] as? [String: Double] == ["open": 20, "probe": 5])
        #expect(tools[1]["overTarget"] as? Int == 2)
        #expect(tools[1]["inProcessMedianMs"] is NSNull)
    }

    @Test("table: a row per tool, Scanout's in-process figure and stages, the ratio to each peer")
    func table() {
        let text = ZapBench.table(Self.results(), inputs: ["/m/a.ts"], channels: 2, gop: 10.0 / 3, target: 250)
        #expect(text.components(separatedBy: "\n") == [
            "bench zap: 2 channels from a.ts; keyframe interval 3.333 s; target ≤ 250 ms",
            "tool     zaps  median ms  mean ms  p90 ms  max ms  over target  after keyframe: median ms",
            "scanout  3     200.0      200.0    300.0   300.0   1            50.0",
            "mpv      3     300.0      300.0    400.0   400.0   2            90.0",
            "scanout in process (command to first frame shown): median 80.0 ms; stages, median ms: open 20.0, probe 5.0",
            "ratio scanout/mpv: median 0.667, mean 0.667",
        ])
    }
}
