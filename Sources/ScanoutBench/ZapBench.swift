import Foundation
import ScanoutCore
import ScanoutDemux

/// `bench zap`: channel changes on live MPEG-TS channels sent over loopback UDP, timed from the
/// tune request to the new channel's first frame on screen, for Scanout (`scanout serve`) and
/// the peers (mpv).
public struct ZapBench {
    /// MPEG-TS files, one channel each (one file: two channels of it).
    let inputs: [String]
    /// Measured and unmeasured (first) channel changes per tool.
    let zaps: Int
    let warmup: Int
    /// Peers to run on the same channels: mpv.
    let peers: [String]
    /// Seed of the waits between channel changes.
    let seed: UInt64
    /// Print the results as JSON instead of a table.
    let json: Bool

    public init(inputs: [String], zaps: Int, warmup: Int, peers: [String], seed: UInt64, json: Bool) {
        self.inputs = inputs
        self.zaps = zaps
        self.warmup = warmup
        self.peers = peers
        self.seed = seed
        self.json = json
    }

    /// Sends the channels, makes every tool change channel as the plan says, and prints the
    /// table (or the JSON) on stdout.
    public func run() throws {
        var gop = 0.0
        var keyframes: [String: [Int64]] = [:]
        for input in inputs {
            let k = try Self.keyframes(input)
            gop = max(gop, k.interval)
            keyframes[input] = k.positions
        }
        let files = inputs.count == 1 ? [inputs[0], inputs[0]] : inputs
        let channels = try files.enumerated().map { i, f in
            try ZapChannel(file: f, offset: inputs.count == 1 ? Double(i) * 0.5 : 0, keyframePositions: keyframes[f]!)
        }
        channels.forEach { $0.start() }
        defer { channels.forEach { $0.stop() } }
        let plan = ZapPlan(channels: channels.count, zaps: warmup + zaps, seed: seed)
        var results: [ZapResult] = []
        for tool in ["scanout"] + peers {
            let player: ZapPlayer = tool == "mpv" ? try MPVZapPlayer() : try ScanoutZapPlayer()
            results.append(try measure(player, tool: tool, channels: channels, plan: plan, gop: gop))
            player.stop()
        }
        let target = (gop + 0.1) * 1000
        if json {
            print(Self.json(results, inputs: inputs, channels: channels.count, gop: gop, target: target))
        } else {
            print(Self.table(results, inputs: inputs, channels: channels.count, gop: gop, target: target))
        }
    }

    /// Every change of the plan with `player`: at least 1 s on each channel, each request sent
    /// when the next keyframe of the channel asked for is the step's part of `gop` away.
    private func measure(_ player: ZapPlayer, tool: String, channels: [ZapChannel], plan: ZapPlan, gop: Double) throws -> ZapResult {
        var result = ZapResult(tool: tool)
        for (n, step) in plan.steps.enumerated() {
            let channel = channels[step.channel]
            usleep(1_000_000)
            // A tune just before the file starts again would time the jump back, not the zap.
            let wrap = channel.secondsToWrap()
            if wrap < 2 * gop + 1 { usleep(UInt32((wrap + 0.5) * 1e6)) }
            let keyframeAt = channel.wait(untilKeyframeIn: step.phase * gop)
            let keyframeWait = keyframeAt - monotonicSeconds()
            let zap = try player.tune(channel.url)
            if n >= warmup {
                result.ms.append(zap.seconds * 1000)
                result.afterKeyframeMs.append((zap.seconds - keyframeWait) * 1000)
                if let inside = zap.inProcess { result.inProcessMs.append(inside * 1000) }
                for (k, v) in zap.stages { result.stagesMs[k, default: []].append(v * 1000) }
            }
        }
        return result
    }

    /// The longest distance between two keyframes of `input`, in seconds, and where in the file
    /// each keyframe starts.
    static func keyframes(_ input: String) throws -> (interval: Double, positions: [Int64]) {
        let demuxer = try Demuxer(input: input)
        guard demuxer.formatName == "mpegts" else { throw BenchError("\(input): bench zap sends MPEG-TS; this is \(demuxer.formatName)") }
        let index = try FrameIndex.cached(input: input)
        let tb = demuxer.video.timeBase.doubleValue
        let pts = index.keyframes.map(\.pts).sorted()
        guard pts.count >= 2 else { throw BenchError("\(input): fewer than two keyframes; a channel needs a keyframe interval") }
        let positions = index.keyframes.compactMap(\.position)
        guard positions.count == index.keyframes.count else { throw BenchError("\(input): the index has no byte position for some keyframes") }
        return (zip(pts, pts.dropFirst()).map { Double($1 - $0) * tb }.max()!, positions)
    }

    static func table(_ results: [ZapResult], inputs: [String], channels: Int, gop: Double, target: Double) -> String {
        var lines = ["bench zap: \(channels) channels from \(inputs.map { ($0 as NSString).lastPathComponent }.joined(separator: ", ")); keyframe interval \(String(format: "%.3f", gop)) s; target ≤ \(String(format: "%.0f", target)) ms",
                     pad("tool", 9) + pad("zaps", 6) + pad("median ms", 11) + pad("mean ms", 9) + pad("p90 ms", 8) + pad("max ms", 8) + pad("over target", 13) + "after keyframe: median ms"]
        for r in results {
            let s = r.ms.sorted()
            lines.append(pad(r.tool, 9) + pad("\(s.count)", 6) + pad(String(format: "%.1f", upperMedian(s)), 11)
                         + pad(String(format: "%.1f", r.mean), 9) + pad(String(format: "%.1f", pct(s, 90)), 8)
                         + pad(String(format: "%.1f", s.last ?? .nan), 8) + pad("\(s.filter { $0 > target }.count)", 13)
                         + String(format: "%.1f", upperMedian(r.afterKeyframeMs)))
        }
        if let ours = results.first {
            if !ours.inProcessMs.isEmpty {
                let stages = ["open", "probe", "decoder", "firstDecode"].compactMap { k in
                    ours.stagesMs[k].map { "\(k) \(String(format: "%.1f", upperMedian($0)))" }
                }
                lines.append("scanout in process (command to first frame shown): median \(String(format: "%.1f", upperMedian(ours.inProcessMs))) ms; stages, median ms: \(stages.joined(separator: ", "))")
            }
            for peer in results.dropFirst() {
                lines.append("ratio scanout/\(peer.tool): median \(String(format: "%.3f", upperMedian(ours.ms) / upperMedian(peer.ms))), mean \(String(format: "%.3f", ours.mean / peer.mean))")
            }
        }
        return lines.joined(separator: "\n")
    }

    static func json(_ results: [ZapResult], inputs: [String], channels: Int, gop: Double, target: Double) -> String {
        let num = BenchReport.num
        let tools: [[String: Any]] = results.map { r in
            let s = r.ms.sorted()
            return ["tool": r.tool, "zapsMs": s.map(num), "medianMs": num(upperMedian(s)), "meanMs": num(r.mean),
                    "p90Ms": num(pct(s, 90)), "maxMs": num(s.last ?? .nan), "overTarget": s.filter { $0 > target }.count,
                    "afterKeyframeMs": r.afterKeyframeMs.map(num), "afterKeyframeMedianMs": num(upperMedian(r.afterKeyframeMs)),
                    "inProcessMedianMs": r.inProcessMs.isEmpty ? NSNull() : num(upperMedian(r.inProcessMs)),
                    "stagesMedianMs": r.stagesMs.mapValues { num(upperMedian($0)) }]
        }
        let object: [String: Any] = ["suite": "zap", "inputs": inputs, "channels": channels, "keyframeInterval": num(gop),
                                     "targetMs": num(target), "tools": tools]
        let data = try! JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }
}

/// One tool's channel changes.
struct ZapResult {
    var tool: String
    var ms: [Double] = []
    /// Scanout's own figure for each change (`firstFrame`'s `sinceRequest`).
    var inProcessMs: [Double] = []
    /// Scanout's preparation stages for each change (`firstFrame`'s `stages`).
    var stagesMs: [String: [Double]] = [:]
    /// Each change's time less the wait for the channel's next keyframe to be sent: what the
    /// player itself adds.
    var afterKeyframeMs: [Double] = []
    var mean: Double { ms.isEmpty ? .nan : ms.reduce(0, +) / Double(ms.count) }
}

/// The channel changes every tool makes, in order: which channel, and how far (a part of the
/// keyframe interval) its next keyframe is when the request is sent.
struct ZapPlan {
    struct Step { var channel: Int; var phase: Double }
    let steps: [Step]

    init(channels: Int, zaps: Int, seed: UInt64) {
        var state = seed
        steps = (0..<zaps).map { n in
            // SplitMix64: the same phases for every tool and every run with this seed.
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            z ^= z >> 31
            return Step(channel: n % channels, phase: Double(z >> 11) / Double(1 << 53))
        }
    }
}
