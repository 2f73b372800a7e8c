import ArgumentParser
import Foundation
import ScanoutLoopback
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio

struct BenchZap: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "zap",
        abstract: "Channel change: the time from a tune request to the new channel's first frame on screen, on live MPEG-TS channels.",
        discussion: """
        Each input is sent as a live channel to 127.0.0.1 over UDP in real time (paced by its PCR, \
        looping); one input makes two channels of the same file, half its length apart. Each tool \
        then changes channel --zaps times in turn, staying at least 1 s on each; every request is \
        sent when the next keyframe of the channel asked for is a seeded random part of the \
        keyframe interval away, the same for every tool, so that the tools wait for the same \
        keyframes. "After keyframe" is a zap's time less that wait: what the player adds. Scanout: `scanout serve --output headless --renderer cpu`, \
        POST /load {"source": "udp://..."} to the `firstFrame` event on GET /events. mpv: \
        `mpv --idle --vo=null --ao=null` with its JSON IPC, `loadfile` to the `playback-restart` \
        event. Target: every zap within the keyframe interval + 100 ms.
        """)

    @Argument(help: "MPEG-TS files, one channel each (one file: two channels of it).") var inputs: [String]
    @Option(help: "Measured channel changes per tool.") var zaps: Int = 20
    @Option(help: "Unmeasured channel changes per tool first (the first tune starts the player's pipeline).") var warmup: Int = 2
    @Option(help: "Peers to run on the same channels: mpv.") var compare: String?
    @Option(help: "Seed of the waits between channel changes.") var seed: UInt64 = 1
    @Flag(help: "Print the results as JSON.") var json = false

    var peers: [String] { compare.map { $0.split(separator: ",").map { String($0).trimmingSpaces } } ?? [] }

    func validate() throws {
        guard !inputs.isEmpty else { throw ValidationError("give at least one MPEG-TS file") }
        guard (1...1000).contains(zaps) else { throw ValidationError("--zaps must be 1...1000") }
        guard (0...100).contains(warmup) else { throw ValidationError("--warmup must be 0...100") }
        for p in peers where p != "mpv" { throw ValidationError("--compare: bench zap compares with mpv only, not '\(p)'") }
    }

    func run() throws {
        try runReporting {
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
                player.stop()
                results.append(result)
            }
            let target = (gop + 0.1) * 1000
            if json {
                print(Self.json(results, inputs: inputs, channels: channels.count, gop: gop, target: target))
            } else {
                print(Self.table(results, inputs: inputs, channels: channels.count, gop: gop, target: target))
            }
        }
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
        func num(_ v: Double) -> Any { v.isFinite ? (v * 1000).rounded() / 1000 : NSNull() }
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

/// A player that changes channel on request and says when the new channel's first frame is shown.
protocol ZapPlayer {
    /// Tunes to `url`; returns the seconds from the request to the first frame on screen, as seen
    /// from outside, and the player's own figure where it gives one.
    func tune(_ url: String) throws -> ZapTiming
    func stop()
}

/// One channel change as a player saw it.
struct ZapTiming {
    /// From the request to the first frame on screen, seen from outside.
    var seconds: Double
    /// The player's own figure, where it gives one.
    var inProcess: Double? = nil
    /// The player's stages, where it gives them (seconds by name).
    var stages: [String: Double] = [:]
}

/// `scanout serve` (this executable) on a loopback port, tuned with POST /load and watched on
/// GET /events.
final class ScanoutZapPlayer: ZapPlayer {
    private let process = Process()
    private let endpoint: HTTPEndpoint
    private let events: SSEReader
    private let scratch: URL

    init() throws {
        let port = try unusedLoopbackPort(Int32(SOCK_STREAM.rawValue))
        endpoint = .tcp(host: "127.0.0.1", port: port)
        scratch = FileManager.default.temporaryDirectory.appendingPathComponent("scanout-bench-zap-\(getpid())")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        let config = scratch.appendingPathComponent("scanout.json")
        try Data("{}\n".utf8).write(to: config)  // defaults only, not /etc/scanout/scanout.json
        process.executableURL = URL(fileURLWithPath: selfExecutable())
        process.arguments = ["serve", "--config", config.path, "--output", "headless", "--renderer", "cpu",
                             "--host", "127.0.0.1", "--port", String(port), "--no-socket"]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        let log = scratch.appendingPathComponent("serve.log")
        FileManager.default.createFile(atPath: log.path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: log)
        try process.run()
        let deadline = Date().addingTimeInterval(20)
        while (try? LoopbackHTTP.request(endpoint, "GET", "/version", timeout: 1))?.status != 200 {
            guard process.isRunning, Date() < deadline else {
                throw BenchError("scanout serve did not answer on 127.0.0.1:\(port) within 20 s; its log: \(log.path)")
            }
            usleep(50_000)
        }
        events = try SSEReader(endpoint, path: "/events")
    }

    func tune(_ url: String) throws -> ZapTiming {
        let t0 = monotonicSeconds()
        let answer = try LoopbackHTTP.request(endpoint, "POST", "/load", body: #"{"source": "\#(url)"}"#, timeout: 30)
        guard answer.status == 200 else { throw BenchError("scanout: POST /load \(url) answered \(answer.status): \(answer.text)") }
        var shown: SSEMessage?
        _ = events.read(timeout: 30) { m in
            guard m.event == "firstFrame", m.json?["source"] as? String == url else { return false }
            shown = m
            return true
        }
        guard let shown else { throw BenchError("scanout: no firstFrame event for \(url) within 30 s") }
        let t1 = monotonicSeconds()
        return ZapTiming(seconds: t1 - t0, inProcess: shown.json?["sinceRequest"] as? Double,
                         stages: (shown.json?["stages"] as? [String: Double]) ?? [:])
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: scratch)
    }
}

/// mpv idle with its JSON IPC on a Unix socket, tuned with `loadfile`.
final class MPVZapPlayer: ZapPlayer {
    private let process = Process()
    private let ipc: LineConnection
    private let socketPath: String

    init() throws {
        socketPath = FileManager.default.temporaryDirectory.appendingPathComponent("scanout-bench-zap-mpv-\(getpid()).sock").path
        guard let mpv = Peer.path(of: "mpv") else { throw BenchError("mpv is not installed (tools/setup-bench.sh installs it)") }
        process.executableURL = URL(fileURLWithPath: mpv)
        process.arguments = ["--no-config", "--idle=yes", "--really-quiet", "--vo=null", "--ao=null", "--aid=no",
                             "--input-ipc-server=\(socketPath)"]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        ipc = try LineConnection(.unix(path: socketPath), wait: 10)
    }

    func tune(_ url: String) throws -> ZapTiming {
        let t0 = monotonicSeconds()
        try ipc.send(line: #"{"command": ["loadfile", "\#(url)"]}"#)
        let deadline = t0 + 30
        while monotonicSeconds() < deadline {
            guard let line = ipc.readLine(timeout: deadline - monotonicSeconds()) else { break }
            if line.contains(#""event":"playback-restart""#) { return ZapTiming(seconds: monotonicSeconds() - t0) }
            if line.contains(#""event":"end-file""#), line.contains(#""reason":"error""#) {
                throw BenchError("mpv could not play \(url): \(line)")
            }
        }
        throw BenchError("mpv: no playback-restart for \(url) within 30 s")
    }

    func stop() {
        try? ipc.send(line: #"{"command": ["quit"]}"#)
        process.waitUntilExit()
        unlink(socketPath)
    }
}
