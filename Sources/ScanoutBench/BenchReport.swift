import Foundation
import ScanoutCore

/// The table and JSON forms of a benchmark's results.
enum BenchReport {
    static func table(suite: BenchSuite, configuration c: BenchConfiguration, results: [InputResult]) -> String {
        let m = suite.metric
        var out = "bench \(suite.rawValue)\(suite == .render ? " (renderer \(c.renderer))" : ""): threads \(c.threads == 0 ? "auto" : String(c.threads))\(suite == .decode ? " per stream, streams \(c.streams)" : ""), player type \(c.playerType), \(c.runs) runs after \(c.warmup) warm-up; whole-process time per tool; \(m.name) (\(m.higherIsBetter ? "higher" : "lower") is better)\n"
        for r in results {
            let v = r.video
            out += "\n\(r.input): \(v.codecName) \(v.width)x\(v.height) \(v.pixelFormat), \(r.frames) \(suite == .seek ? "seeks" : "frames")\n"
            if suite == .play {
                out += playLines(r) + absentLines(r, suite: suite)
                continue
            }
            out += toolLines(r, suite: suite) + streamLines(r, streams: c.streams) + scanoutLines(r, suite: suite) + absentLines(r, suite: suite)
        }
        return out
    }

    /// Play suite: Scanout's drops and pacing, each peer's drops and delayed frames.
    private static func playLines(_ r: InputResult) -> String {
        let drops = r.dropped.sorted()
        var out = "  scanout  dropped median \(drops.isEmpty ? 0 : drops[drops.count / 2]) (max \(drops.max() ?? 0)), pacing p50 \(format2(r.pacing.p50)) ms, p99 \(format2(r.pacing.p99)) ms\n"
        for (peer, runs) in r.peerDrops.sorted(by: { $0.key < $1.key }) {
            let d = runs.map(\.dropped).sorted(), late = runs.map(\.delayed).sorted()
            out += "  \(pad(peer, 8)) dropped median \(d[d.count / 2]) (max \(d.last!)), delayed median \(late[late.count / 2])\n"
        }
        return out
    }

    /// The peers that did not run, and why.
    private static func absentLines(_ r: InputResult, suite: BenchSuite) -> String {
        var out = ""
        for p in r.missing { out += "  \(p): missing (not installed, or it failed on this input)\n" }
        for p in r.noEquivalent { out += "  \(p): no equivalent for the \(suite.rawValue) suite\n" }
        return out
    }

    /// A row per tool (the suite's figure, CPU time, peak memory, ratio), and for decode and
    /// render the in-process figures of Scanout and ffmpeg.
    private static func toolLines(_ r: InputResult, suite: BenchSuite) -> String {
        let m = suite.metric
        var out = "  " + pad("tool", 11) + pad(m.name + " median", 14) + pad("min", 10) + pad("max", 10) + pad("cpu ms/unit", 13) + pad("peak MiB", 10) + "ratio scanout/tool\n"
        for t in r.tools {
            let ratio = t.tool == "scanout" ? "" : (r.ratio(to: t.tool).map { formatFixed($0, 3) } ?? "-")
            out += "  " + pad(t.tool, 11) + pad(format1(t.median), 14) + pad(format1(t.values.min() ?? .nan), 10)
                + pad(format1(t.values.max() ?? .nan), 10) + pad(format2(t.cpuMedian), 13) + pad(format1(Double(t.peakKiB) / 1024), 10) + ratio + "\n"
        }
        if suite == .decode || suite == .render {
            let ours = r.tools.first?.internalFPS.sorted() ?? []
            let ff = r.tools.first { $0.tool == "ffmpeg" }?.internalFPS.sorted() ?? []
            if !ours.isEmpty && !ff.isEmpty {
                out += "  in-process (scanout decode loop vs ffmpeg -benchmark rtime): \(format1(ours[ours.count / 2])) vs \(format1(ff[ff.count / 2])) fps, ratio \(formatFixed(ours[ours.count / 2] / ff[ff.count / 2], 3))\n"
            }
        }
        return out
    }

    /// What Scanout's last run says of itself: its decoder and copies, the ffmpeg peer's decoder,
    /// the GL stages, the in-process stages and the per-unit time distribution.
    private static func scanoutLines(_ r: InputResult, suite: BenchSuite) -> String {
        var out = ""
        if !r.decoder.isEmpty { out += "  scanout decoder: \(r.decoder)\n" }
        if !r.copies.isEmpty { out += "  scanout copies: \(r.copies)\n" }
        if !r.peerDecoding.isEmpty && r.tools.contains(where: { $0.tool == "ffmpeg" }) { out += "  ffmpeg decoder: \(r.peerDecoding)\n" }
        if !r.stageMs.isEmpty {
            // Pipelined, draw is the CPU's time issuing it; the GPU's time shows in the readback wait.
            let how = r.readback.isEmpty ? "" : "; readback \(r.readback)" + (r.readback.hasPrefix("pipelined") ? ": draw = issuing, readback = start + fence wait + map + pack" : "")
            out += "  scanout gl stages (median ms/frame\(how)): upload \(format2(r.stageMs["upload"] ?? .nan)), draw \(format2(r.stageMs["draw"] ?? .nan)), readback \(format2(r.stageMs["readback"] ?? .nan))\n"
        }
        if !r.stages.isEmpty {
            let what = suite == .startup ? "in process, last run" : "in process, last run; a seek = seek to frame shown + png"
            out += "  scanout stages (ms, \(what)): " + r.stages.map { "\($0.name) \(format2($0.ms))" }.joined(separator: ", ") + "\n"
        }
        if !r.unitMs.isEmpty {
            let s = r.unitMs.sorted()
            out += "  scanout \(suite == .seek ? "seek" : "frame") time: p50 \(format2(pct(s, 50))) ms, p90 \(format2(pct(s, 90))) ms, p99 \(format2(pct(s, 99))) ms, max \(format2(s.last!)) ms\n"
        }
        return out
    }

    /// Decode suite: the streams decoded at once, each tool's aggregate and per-stream fps, and
    /// the ratio of the aggregates.
    private static func streamLines(_ r: InputResult, streams: Int) -> String {
        guard let ours = r.streams["scanout"] else { return "" }
        var out = "  streams: \(streams) at once; aggregate fps = all frames / wall time from the start to the last stream's end"
            + " (scanout: one process, a thread per stream, from the gate they start at; a peer: \(streams) process\(streams == 1 ? "" : "es"), from their launch)\n"
        for t in r.tools {
            guard let f = r.streams[t.tool] else { continue }
            let per = f.perStreamFPS.sorted()
            let unit = t.tool == "scanout" ? "stream" : "process"
            let total = f.frames.reduce(0, +)
            var line = "    " + pad(t.tool, 10) + "aggregate median \(format1(f.aggregateMedian)) fps"
            line += " (last run: \(total) frames in \(formatFixed(f.wallSeconds, 3)) s = \(format1(f.aggregateFPS)) fps)"
            line += ", per \(unit) min \(format1(per.first ?? .nan)) / median \(format1(upperMedian(per))) / max \(format1(per.last ?? .nan)) fps"
            if t.tool != "scanout" { line += ", ratio scanout/\(t.tool) \(formatFixed(ours.aggregateMedian / f.aggregateMedian, 3))" }
            out += line + "\n"
        }
        return out
    }

    /// A figure in the JSON: rounded to 3 decimals, null when not finite.
    static func num(_ v: Double) -> Any { v.isFinite ? (v * 1000).rounded() / 1000 : NSNull() }

    static func json(suite: BenchSuite, configuration c: BenchConfiguration, results: [InputResult]) -> String {
        let root: [String: Any] = [
            "suite": suite.rawValue, "metric": suite.metric.name, "higherIsBetter": suite.metric.higherIsBetter,
            "renderer": c.renderer.rawValue, "playerType": c.playerType.rawValue, "threads": c.threads, "streams": c.streams, "runs": c.runs, "warmup": c.warmup,
            "inputs": results.map(inputJSON),
        ]
        let data = (try? JSONSerialization.data(withJSONObject: root, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// One input's object in the JSON.
    private static func inputJSON(_ r: InputResult) -> [String: Any] {
        let s = r.unitMs.sorted()
        var ratios: [String: Any] = [:]
        for t in r.tools.dropFirst() { if let x = r.ratio(to: t.tool) { ratios[t.tool] = num(x) } }
        var aggregateRatios: [String: Any] = [:]
        if let ours = r.streams["scanout"] {
            for (tool, f) in r.streams where tool != "scanout" { aggregateRatios[tool] = num(ours.aggregateMedian / f.aggregateMedian) }
        }
        return [
            "input": r.input, "codec": r.video.codecName, "width": r.video.width, "height": r.video.height,
            "pixelFormat": r.video.pixelFormat.name, "units": r.frames,
            "results": r.tools.map { t in
                ["tool": t.tool, "values": t.values.map(num), "median": num(t.median), "cpuMsPerUnit": t.cpuMsPerUnit.map(num),
                 "peakKiB": t.peakKiB, "inProcessFPS": t.internalFPS.map(num)] as [String: Any]
            },
            "ratios": ratios, "streams": r.streams.mapValues(streamJSON), "aggregateRatios": aggregateRatios, "peerDecoding": r.peerDecoding,
            "missing": r.missing, "noEquivalent": r.noEquivalent,
            "scanoutUnitMs": s.isEmpty ? [:] : ["p50": num(pct(s, 50)), "p90": num(pct(s, 90)), "p99": num(pct(s, 99)), "max": num(s.last!)],
            "glStageMs": r.stageMs.mapValues(num), "stagesMs": r.stages.map { ["stage": $0.name, "ms": num($0.ms)] as [String: Any] }, "decoder": r.decoder, "copies": r.copies, "dropped": r.dropped,
            "peerDropped": r.peerDrops.mapValues { $0.map(\.dropped) }, "peerDelayed": r.peerDrops.mapValues { $0.map(\.delayed) }, "pacingMs": ["p50": num(r.pacing.p50), "p99": num(r.pacing.p99)],
        ]
    }

    /// Seconds unrounded, so that aggregates can be checked against them.
    private static func streamJSON(_ f: StreamFigures) -> [String: Any] {
        ["processes": f.processes, "frames": f.frames, "seconds": f.seconds, "wallSeconds": f.wallSeconds,
         "aggregateFPS": num(f.aggregateFPS), "perStreamFPS": f.perStreamFPS.map(num),
         "aggregateFPSRuns": f.aggregateRuns.map(num), "aggregateFPSMedian": num(f.aggregateMedian)]
    }
}

/// The `p`-th percentile of sorted values (nearest rank).
func pct(_ sorted: [Double], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return .nan }
    return sorted[min(sorted.count - 1, Int((p / 100 * Double(sorted.count - 1)).rounded()))]
}

/// The middle value (the upper one of an even count), NaN for none.
func upperMedian(_ values: [Double]) -> Double {
    values.isEmpty ? .nan : values.sorted()[values.count / 2]
}
