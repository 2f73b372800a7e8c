import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio

/// One tool's figures on one input.
struct ToolFigures {
    var tool: String
    var values: [Double] = []
    var cpuMsPerUnit: [Double] = []
    var peakKiB = 0
    var internalFPS: [Double] = []

    var median: Double { upperMedian(values) }
    var cpuMedian: Double { upperMedian(cpuMsPerUnit) }
}

/// The middle value (the upper one of an even count), NaN for none.
func upperMedian(_ values: [Double]) -> Double {
    values.isEmpty ? .nan : values.sorted()[values.count / 2]
}

/// Everything measured on one input.
struct InputResult {
    var input: String
    var video: VideoStreamInfo
    var frames = 0
    var tools: [ToolFigures] = []
    var missing: [String] = []
    var noEquivalent: [String] = []
    /// Scanout's per-unit times (frame times, seek times or pacing deviations) from its last run, ms.
    var unitMs: [Double] = []
    var dropped: [Int] = []
    /// Play suite: each peer's dropped and delayed frames per run.
    var peerDrops: [String: [(dropped: Int, delayed: Int)]] = [:]
    var pacing: (p50: Double, p99: Double) = (0, 0)
    /// GL renderer: median ms per frame of upload, draw and readback, from the last run.
    var stageMs: [String: Double] = [:]
    /// GL renderer: how its frames were read back (`ChildReport.readback`).
    var readback = ""
    /// Scanout's copies of decoded pictures between CPU and GPU memory, from the last run.
    var copies = ""
    /// Startup and seek suites: Scanout's stages in its last run.
    var stages: [Stage] = []
    /// What decoded in Scanout's last run (the decision's player type and decoder).
    var decoder = ""
    /// Decode suite: how the ffmpeg peer decoded (its decoder arguments, and why when they differ
    /// in kind from Scanout's decoder).
    var peerDecoding = ""
    /// Decode suite: the streams decoded at once, per tool (Scanout's threads, a peer's processes).
    var streams: [String: StreamFigures] = [:]

    func ratio(to peer: String) -> Double? {
        guard let ours = tools.first, let theirs = tools.first(where: { $0.tool == peer }), theirs.median > 0 else { return nil }
        return ours.median / theirs.median
    }
}

/// Runs the suite: Scanout and the peers as child processes, interleaved run by run.
struct BenchRunner {
    let suite: BenchSuite
    let options: BenchOptions

    func run() throws {
        let decoding = try options.input.decoder
        if decoding.playerType == .hw || decoding.playerType == .native {
            // Measuring software decoding under a hardware label would mislead: say why not instead.
            for input in options.inputs {
                let demuxer = try Demuxer(input: input, options: options.input.demuxer)
                let verdict = DecoderSelector.verdicts(environment: decoding.environment, demuxer: demuxer).first { $0.type == decoding.playerType }
                if let verdict, !verdict.available {
                    throw BenchError("\(input): --player-type \(decoding.playerType) unavailable: \(verdict.reason)")
                }
            }
        }
        let peers = options.peers
        let progress = ProgressBar(total: options.inputs.count * (options.warmup + options.runs) * (1 + peers.count), quiet: options.json)
        var results: [InputResult] = []
        for input in options.inputs {
            let index = try FrameIndex.cached(input: input, options: options.input.demuxer)
            let demuxer = try Demuxer(input: input, options: options.input.demuxer)
            var result = InputResult(input: input, video: demuxer.video)
            result.tools = [ToolFigures(tool: "scanout")] + peers.map { ToolFigures(tool: $0) }
            let seekTimes = seekTargets(frameCount: index.frameCount, count: options.seeks).map {
                Double(index.timestamps[$0] - index.timestamps[0]) * demuxer.video.timeBase.doubleValue
            }
            for run in 0..<(options.warmup + options.runs) {
                let measured = run >= options.warmup
                // Scanout first, then each peer: the same conditions, interleaved.
                let ours = try runScanout(input: input)
                progress.step("\(short(input)) scanout run \(run + 1)")
                let units = ours.report.frames
                result.frames = units
                if measured {
                    record(&result.tools[0], wall: ours.child.wallSeconds, cpu: ours.child.cpuSeconds, units: units, peak: ours.child.maxRSSKiB)
                    result.tools[0].internalFPS.append(Double(units) / max(ours.report.internalSeconds, 1e-9))
                    result.unitMs = ours.report.unitMs
                    result.dropped.append(ours.report.dropped)
                    result.pacing = (ours.report.pacingP50Ms, ours.report.pacingP99Ms)
                    result.stageMs = ours.report.stageMs
                    result.readback = ours.report.readback
                    result.copies = ours.report.copies
                    result.stages = ours.report.stages
                    result.decoder = ours.report.decoder
                }
                // The ffmpeg peer decodes with the same kind of decoder as Scanout did.
                let ffmpegDecoding = suite == .decode ? PeerDecoding(scanoutDecoder: ours.report.decoderLabel) : .software
                if suite == .decode {
                    result.peerDecoding = describe(ffmpegDecoding, scanout: ours.report)
                    if measured {
                        result.streams["scanout", default: StreamFigures(processes: 1)].record(
                            frames: ours.report.streamFrames, seconds: ours.report.streamSeconds, wall: ours.report.streamsWallSeconds)
                    }
                }
                // --streams: each peer runs as that many processes at once.
                let copies = suite == .decode ? options.streams : 1
                for (i, peer) in peers.enumerated() {
                    defer { progress.step("\(short(input)) \(peer) run \(run + 1)") }
                    if result.missing.contains(peer) || result.noEquivalent.contains(peer) { continue }
                    guard let commands = Peer.commands(peer, suite: suite, input: input, threads: options.input.threads,
                                                       codec: demuxer.video.codecName, seekTimes: seekTimes, decoding: ffmpegDecoding) else {
                        result.noEquivalent.append(peer)
                        continue
                    }
                    var wall = 0.0, cpu = 0.0, peak = 0
                    var failed = false
                    for argv in commands {
                        let group = runConcurrently(argv, count: copies)
                        let children = group.children.compactMap { $0 }
                        guard children.count == copies, children.allSatisfy({ $0.status == 0 }) else { failed = true; break }
                        wall += group.wallSeconds
                        cpu += children.map(\.cpuSeconds).reduce(0, +)
                        // Several processes hold their memory at once: their peaks add up.
                        peak = max(peak, children.map(\.maxRSSKiB).reduce(0, +))
                        if suite == .play, measured {
                            guard let d = Peer.mpvDrops(children[0].stderr) else { failed = true; break }
                            result.peerDrops[peer, default: []].append(d)
                        }
                        // ffmpeg's own frame counts (its progress line), else Scanout's per stream.
                        let counts = children.map { peer == "ffmpeg" ? lastNumber(after: "frame=", in: $0.stderr) : nil }
                        if peer == "ffmpeg", suite == .decode || suite == .render, measured {
                            let rtimes = children.compactMap { lastNumber(after: "rtime=", in: $0.stderr) }
                            let frames = counts.compactMap { $0 }
                            if rtimes.count == copies, frames.count == copies {
                                result.tools[i + 1].internalFPS.append(frames.reduce(0, +) / max(rtimes.max()!, 1e-9))
                            }
                        }
                        if suite == .decode, measured {
                            let perStream = ours.report.streamFrames.first ?? units
                            result.streams[peer, default: StreamFigures(processes: copies)].record(
                                frames: counts.map { $0.map { Int($0) } ?? perStream }, seconds: children.map(\.wallSeconds), wall: group.wallSeconds)
                        }
                    }
                    if failed {
                        result.missing.append(peer)
                        continue
                    }
                    if measured { record(&result.tools[i + 1], wall: wall, cpu: cpu, units: units, peak: peak) }
                }
            }
            result.tools.removeAll { $0.tool != "scanout" && $0.values.isEmpty && result.peerDrops[$0.tool] == nil }
            results.append(result)
        }
        progress.finish()
        if options.json {
            print(BenchReport.json(suite: suite, options: options, results: results))
        } else {
            print(BenchReport.table(suite: suite, options: options, results: results))
        }
        if let path = options.plot {
            let svg = SVGPlot.render(suite: suite, results: results, threads: options.input.threads, streams: options.streams)
            guard FileManager.default.createFile(atPath: path, contents: Data(svg.utf8)) else {
                throw MediaError.outputFailed(path: path, reason: "cannot write the plot")
            }
            if !options.json { print("plot: \(path)") }
        }
    }

    /// One figure per run, in the suite's unit.
    private func record(_ f: inout ToolFigures, wall: Double, cpu: Double, units: Int, peak: Int) {
        let n = Double(max(units, 1))
        switch suite {
        case .decode, .render: f.values.append(n / max(wall, 1e-9))
        case .startup: f.values.append(wall * 1000)
        case .seek: f.values.append(wall * 1000 / n)
        case .play: break
        }
        f.cpuMsPerUnit.append(cpu * 1000 / n)
        f.peakKiB = max(f.peakKiB, peak)
    }

    private func runScanout(input: String) throws -> (child: ChildResult, report: ChildReport) {
        let reportPath = FileManager.default.temporaryDirectory.appendingPathComponent("scanout-bench-\(getpid())-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: reportPath) }
        var argv = [selfExecutable(), "bench", suite.rawValue, input, "--threads", String(options.input.threads), "--streams", String(options.streams),
                    "--timeout", String(options.input.timeout), "--seeks", String(options.seeks), "--renderer", options.renderer.rawValue,
                    "--readback-depth", String(options.readbackDepth), "--child-report", reportPath]
        if options.input.verbose { argv.append("--verbose") }
        argv += ["--player-type", options.input.playerType.rawValue, "--fallback-after", String(options.input.fallbackAfter)]
        if options.input.playerType == .hw || options.input.playerType == .native { argv.append("--no-fallback") }
        if let device = options.input.device { argv += ["--device", device] }
        guard let child = runChild(argv) else { throw BenchError("cannot start \(argv[0])") }
        guard child.status == 0, let data = FileManager.default.contents(atPath: reportPath) else {
            let line = child.stderr.split(separator: "\n").last.map(String.init) ?? "exit status \(child.status)"
            throw BenchError(line.hasPrefix("scanout: ") ? String(line.dropFirst(9)) : line)
        }
        return (child, try JSONDecoder().decode(ChildReport.self, from: data))
    }

    /// The ffmpeg peer's decoder arguments, and, when Scanout decoded with a hardware player type
    /// but not on VA-API or NVDEC (the software stand-in), that the peer decodes in software.
    private func describe(_ decoding: PeerDecoding, scanout report: ChildReport) -> String {
        let args = decoding.ffmpegArguments(threads: options.input.threads).joined(separator: " ")
        if decoding == .software && !report.decoder.hasPrefix("sw") {
            return "\(args) (software: Scanout's decoder is \(report.decoderLabel), no hardware for ffmpeg to match)"
        }
        return args
    }

    private func short(_ input: String) -> String { String(input.split(separator: "/").last ?? Substring(input)) }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

/// This program's own path (`/proc/self/exe`), to start benchmark children.
func selfExecutable() -> String {
    var buf = [CChar](repeating: 0, count: 4096)
    let n = readlink("/proc/self/exe", &buf, buf.count - 1)
    return n > 0 ? String(decoding: buf[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) : CommandLine.arguments[0]
}

/// A progress bar on stderr when it is a terminal; nothing otherwise.
final class ProgressBar {
    private let total: Int
    private var done = 0
    private let enabled: Bool

    init(total: Int, quiet: Bool) {
        self.total = max(total, 1)
        enabled = !quiet && isatty(2) != 0
    }

    func step(_ label: String) {
        done += 1
        guard enabled else { return }
        let width = 30
        let filled = done * width / total
        StandardError.write("\r\u{1B}[K[" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled) + "] \(done)/\(total) \(label)")
    }

    func finish() { if enabled { StandardError.write("\r\u{1B}[K") } }
}

/// The number after the last occurrence of `key` ("rtime=1.234s" → 1.234).
func lastNumber(after key: String, in text: String) -> Double? {
    guard let range = text.range(of: key, options: .backwards) else { return nil }
    let rest = text[range.upperBound...].drop(while: { $0 == " " })
    return Double(rest.prefix { $0.isNumber || $0 == "." })
}
