import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutDecode

/// Runs the suite: Scanout and the peers as child processes, interleaved run by run.
public struct BenchRunner {
    let suite: BenchSuite
    let configuration: BenchConfiguration

    public init(suite: BenchSuite, configuration: BenchConfiguration) {
        self.suite = suite
        self.configuration = configuration
    }

    /// Measures every input with every tool, prints the table (or the JSON) on stdout and writes
    /// the plot where one was asked for.
    public func run() throws {
        try checkHardwareDecoder()
        let c = configuration
        let progress = ProgressBar(total: c.inputs.count * (c.warmup + c.runs) * (1 + c.peers.count), quiet: c.json)
        var results: [InputResult] = []
        for input in c.inputs {
            results.append(try measure(input, progress: progress))
        }
        progress.finish()
        try report(results)
    }

    /// With player type hw or native, its decoder must be available for every input: measuring
    /// software decoding under a hardware label would mislead, so say why not instead.
    private func checkHardwareDecoder() throws {
        let decoding = configuration.decoder
        guard decoding.playerType == .hw || decoding.playerType == .native else { return }
        for input in configuration.inputs {
            let demuxer = try Demuxer(input: input, options: configuration.demuxer)
            let verdict = DecoderSelector.verdicts(environment: decoding.environment, demuxer: demuxer).first { $0.type == decoding.playerType }
            if let verdict, !verdict.available {
                throw BenchError("\(input): --player-type \(decoding.playerType) unavailable: \(verdict.reason)")
            }
        }
    }

    /// Every run of every tool on `input`: Scanout first, then each peer, run by run.
    private func measure(_ input: String, progress: ProgressBar) throws -> InputResult {
        let c = configuration
        let index = try FrameIndex.cached(input: input, options: c.demuxer)
        let demuxer = try Demuxer(input: input, options: c.demuxer)
        var result = InputResult(input: input, video: demuxer.video)
        result.tools = [ToolFigures(tool: "scanout")] + c.peers.map { ToolFigures(tool: $0) }
        let seekTimes = seekTargets(frameCount: index.frameCount, count: c.seeks).map {
            Double(index.timestamps[$0] - index.timestamps[0]) * demuxer.video.timeBase.doubleValue
        }
        for run in 0..<(c.warmup + c.runs) {
            let measured = run >= c.warmup
            // Scanout first, then each peer: the same conditions, interleaved.
            let ours = try runScanout(input: input)
            progress.step("\(short(input)) scanout run \(run + 1)")
            record(ours, measured: measured, into: &result)
            // The ffmpeg peer decodes with the same kind of decoder as Scanout did.
            let ffmpegDecoding = suite == .decode ? PeerDecoding(scanoutDecoder: ours.report.decoderLabel) : .software
            if suite == .decode { result.peerDecoding = describe(ffmpegDecoding, scanout: ours.report) }
            for (i, peer) in c.peers.enumerated() {
                defer { progress.step("\(short(input)) \(peer) run \(run + 1)") }
                if result.missing.contains(peer) || result.noEquivalent.contains(peer) { continue }
                guard let commands = Peer.commands(peer, suite: suite, input: input, threads: c.threads,
                                                   codec: demuxer.video.codecName, seekTimes: seekTimes, decoding: ffmpegDecoding,
                                                   toneCurve: c.toneCurve?.rawValue) else {
                    result.noEquivalent.append(peer)
                    continue
                }
                measurePeer(peer, tool: i + 1, commands: commands, scanout: ours.report, measured: measured, into: &result)
            }
        }
        result.tools.removeAll { $0.tool != "scanout" && $0.values.isEmpty && result.peerDrops[$0.tool] == nil }
        return result
    }

    /// Scanout's run: the units it counted, and when measured its figure and what its report says.
    private func record(_ ours: (child: ChildResult, report: ChildReport), measured: Bool, into result: inout InputResult) {
        let report = ours.report
        result.frames = report.frames
        guard measured else { return }
        record(&result.tools[0], wall: ours.child.wallSeconds, cpu: ours.child.cpuSeconds, units: report.frames, peak: ours.child.maxRSSKiB)
        result.tools[0].internalFPS.append(Double(report.frames) / max(report.internalSeconds, 1e-9))
        result.unitMs = report.unitMs
        result.dropped.append(report.dropped)
        result.pacing = (report.pacingP50Ms, report.pacingP99Ms)
        result.stageMs = report.stageMs
        result.readback = report.readback
        result.copies = report.copies
        result.stages = report.stages
        result.decoder = report.decoder
        if suite == .decode {
            result.streams["scanout", default: StreamFigures(processes: 1)].record(
                frames: report.streamFrames, seconds: report.streamSeconds, wall: report.streamsWallSeconds)
        }
    }

    /// One run of `peer` (`result.tools[tool]`): each of its commands, as `--streams` processes at
    /// once in the decode suite. A peer that fails (or, playing, reports no drops) is missing
    /// from then on.
    private func measurePeer(_ peer: String, tool: Int, commands: [[String]], scanout report: ChildReport, measured: Bool,
                             into result: inout InputResult) {
        // --streams: each peer runs as that many processes at once.
        let copies = suite == .decode ? configuration.streams : 1
        var wall = 0.0, cpu = 0.0, peak = 0
        for argv in commands {
            let group = runConcurrently(argv, count: copies)
            let children = group.children.compactMap { $0 }
            guard children.count == copies, children.allSatisfy({ $0.status == 0 }) else {
                result.missing.append(peer)
                return
            }
            wall += group.wallSeconds
            cpu += children.map(\.cpuSeconds).reduce(0, +)
            // Several processes hold their memory at once: their peaks add up.
            peak = max(peak, children.map(\.maxRSSKiB).reduce(0, +))
            guard measured else { continue }
            if suite == .play {
                guard let d = Peer.mpvDrops(children[0].stderr) else {
                    result.missing.append(peer)
                    return
                }
                result.peerDrops[peer, default: []].append(d)
            }
            recordCounts(peer, tool: tool, children: children, wall: group.wallSeconds, scanout: report, into: &result)
        }
        if measured { record(&result.tools[tool], wall: wall, cpu: cpu, units: report.frames, peak: peak) }
    }

    /// A measured peer command's frame counts: ffmpeg's in-process fps (its frame counts over
    /// its -benchmark rtime) and, in the decode suite, the peer's streams, counted by ffmpeg's
    /// progress line, else as many frames per stream as Scanout's.
    private func recordCounts(_ peer: String, tool: Int, children: [ChildResult], wall: Double, scanout report: ChildReport,
                              into result: inout InputResult) {
        let counts = children.map { peer == "ffmpeg" ? lastNumber(after: "frame=", in: $0.stderr) : nil }
        if peer == "ffmpeg", suite == .decode || suite == .render {
            let rtimes = children.compactMap { lastNumber(after: "rtime=", in: $0.stderr) }
            let frames = counts.compactMap { $0 }
            if rtimes.count == children.count, frames.count == children.count {
                result.tools[tool].internalFPS.append(frames.reduce(0, +) / max(rtimes.max()!, 1e-9))
            }
        }
        if suite == .decode {
            let perStream = report.streamFrames.first ?? report.frames
            result.streams[peer, default: StreamFigures(processes: children.count)].record(
                frames: counts.map { $0.map { Int($0) } ?? perStream }, seconds: children.map(\.wallSeconds), wall: wall)
        }
    }

    /// The table or the JSON on stdout, and the plot.
    private func report(_ results: [InputResult]) throws {
        let c = configuration
        if c.json {
            print(BenchReport.json(suite: suite, configuration: c, results: results))
        } else {
            print(BenchReport.table(suite: suite, configuration: c, results: results))
        }
        if let path = c.plot {
            let svg = SVGPlot.render(suite: suite, results: results, threads: c.threads, streams: c.streams)
            guard FileManager.default.createFile(atPath: path, contents: Data(svg.utf8)) else {
                throw MediaError.outputFailed(path: path, reason: "cannot write the plot")
            }
            if !c.json { print("plot: \(path)") }
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

    /// A measured run of this executable's `bench SUITE INPUT --child-report FILE`, with the
    /// decoding settings, and the report it wrote.
    private func runScanout(input: String) throws -> (child: ChildResult, report: ChildReport) {
        let c = configuration
        let reportPath = FileManager.default.temporaryDirectory.appendingPathComponent("scanout-bench-\(getpid())-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: reportPath) }
        var argv = [selfExecutable(), "bench", suite.rawValue, input, "--threads", String(c.threads), "--streams", String(c.streams),
                    "--timeout", String(c.timeout), "--seeks", String(c.seeks), "--renderer", c.renderer.rawValue,
                    "--readback-depth", String(c.readbackDepth), "--child-report", reportPath]
        if c.verbose { argv.append("--verbose") }
        if let curve = c.toneCurve { argv += ["--tonemap", curve.rawValue] }
        argv += ["--player-type", c.playerType.rawValue, "--fallback-after", String(c.fallbackAfter)]
        if c.playerType == .hw || c.playerType == .native { argv.append("--no-fallback") }
        if let device = c.device { argv += ["--device", device] }
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
        let args = decoding.ffmpegArguments(threads: configuration.threads).joined(separator: " ")
        if decoding == .software && !report.decoder.hasPrefix("sw") {
            return "\(args) (software: Scanout's decoder is \(report.decoderLabel), no hardware for ffmpeg to match)"
        }
        return args
    }

    private func short(_ input: String) -> String { String(input.split(separator: "/").last ?? Substring(input)) }
}

/// A benchmark that cannot go on, in one line: what failed (the input, the tool) and why.
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
