import Foundation
import ScanoutCore
import ScanoutDemux

/// `bench layout`: the most zones of one clip that Scanout and its peers compose into a
/// 1920x1080 canvas at 30 fps with no frame dropped, per clip size, in the same run. Every trial
/// is a process of its own (Scanout: this executable's `bench layout --zones N`), timed with
/// `wait4`; the tools' searches (`ZoneSearch`) take turns, a trial each, so that changes of load
/// on the machine reach every tool alike.
public struct LayoutBench {
    /// Clip heights to measure (1080, 720, 360): `layout-<size>p30.mp4` in `clipDirectory`.
    let sizes: [Int]
    /// Seconds each trial runs for.
    let seconds: Double
    /// The most zones tried.
    let maxZones: Int
    /// Peers (`LayoutPeers.known`).
    let peers: [String]
    let clipDirectory: String
    /// Print the results as JSON instead of a table.
    let json: Bool

    /// ffmpeg keeps real time when its own time at the end is at most this far past the media
    /// time (its start: opening N inputs, the decoders' first pictures).
    static let ffmpegLagTolerance = 0.5

    public init(sizes: [Int], seconds: Double, maxZones: Int, peers: [String], clipDirectory: String, json: Bool) {
        self.sizes = sizes
        self.seconds = seconds
        self.maxZones = maxZones
        self.peers = peers
        self.clipDirectory = clipDirectory
        self.json = json
    }

    /// The clip of `size` in `directory`, and what it is.
    struct Clip {
        var size: Int
        var path: String
        var video: VideoStreamInfo
        var seconds: Double

        init(directory: String, size: Int) throws {
            self.size = size
            path = (directory as NSString).appendingPathComponent("layout-\(size)p30.mp4")
            let name = (path as NSString).lastPathComponent
            guard FileManager.default.fileExists(atPath: path) else {
                throw BenchError("no \(path): make it with tools/make-clips.sh \(directory) \(name)")
            }
            let demuxer = try Demuxer(input: path)
            let video = demuxer.video
            guard video.codecName == "h264", video.height == size else {
                throw BenchError("\(path): \(video.codecName) \(video.width)x\(video.height), not H.264 \(size)p (tools/make-clips.sh makes it)")
            }
            self.video = video
            seconds = video.duration.map { Double($0) * video.timeBase.doubleValue } ?? 10
        }
    }

    public func run() throws {
        let clips = try sizes.map { try Clip(directory: clipDirectory, size: $0) }
        if peers.contains("gstreamer"), let short = clips.first(where: { $0.seconds < seconds }) {
            throw BenchError("\(short.path) lasts \(formatFixed(short.seconds, 1)) s, less than --seconds \(formatFixed(seconds, 1)): gst-launch-1.0 cannot loop a file (tools/make-clips.sh makes the layout clips 70 s long)")
        }
        let loadStart = Self.loadAverage()
        var results: [LayoutSizeResult] = []
        for clip in clips { results.append(try measure(clip)) }
        status(nil)
        let report = LayoutReport(canvasWidth: 1920, canvasHeight: 1080, fps: LayoutPeers.fps, seconds: seconds, maxZones: maxZones,
                                  cores: ProcessInfo.processInfo.activeProcessorCount, loadAverageStart: LayoutReport.rounded(loadStart),
                                  loadAverageEnd: LayoutReport.rounded(Self.loadAverage()), sizes: results)
        print(json ? try report.json() : report.table())
    }

    /// Every tool's search on `clip`, a trial of each in turn.
    private func measure(_ clip: Clip) throws -> LayoutSizeResult {
        let tools = ["scanout"] + peers
        var searches = tools.map { _ in ZoneSearch(maxZones: maxZones) }
        var trials: [[LayoutTrial]] = tools.map { _ in [] }
        var missing: [String?] = tools.map { $0 == "scanout" ? nil : Self.notInstalled($0) }
        var ran = true
        while ran {
            ran = false
            for (i, tool) in tools.enumerated() where missing[i] == nil {
                guard let n = searches[i].next else { continue }
                ran = true
                status("\(clip.size)p30: \(tool), \(n) zone\(n == 1 ? "" : "s") for \(formatFixed(seconds, 0)) s")
                guard let trial = try self.trial(tool, zones: n, clip: clip) else {
                    missing[i] = "it could not be started"
                    continue
                }
                searches[i].record(n, passed: trial.passed)
                trials[i].append(trial)
            }
        }
        let results = tools.indices.map { i in
            LayoutToolResult(tool: tools[i], zones: missing[i] == nil ? searches[i].best : nil, trials: trials[i], missing: missing[i])
        }
        return LayoutSizeResult(size: "\(clip.size)p30", clip: clip.path, codec: clip.video.codecName, width: clip.video.width,
                                height: clip.video.height, tools: results)
    }

    /// Why `peer` cannot run: its program is not on PATH; nil when it is.
    static func notInstalled(_ peer: String) -> String? {
        let program = peer == "gstreamer" ? "gst-launch-1.0" : peer
        return Peer.path(of: program) == nil ? "\(program) is not installed (tools/setup-bench.sh installs it)" : nil
    }

    /// One trial of `tool` with `zones` zones; nil when the peer's program cannot be started.
    private func trial(_ tool: String, zones: Int, clip: Clip) throws -> LayoutTrial? {
        let grid = LayoutGrid(zones: zones)
        switch tool {
        case "scanout":
            return try scanoutTrial(zones: zones, clip: clip)
        case "gstreamer":
            let argv = LayoutPeers.gstreamer(clip: clip.path, seconds: seconds, grid: grid, sourceWidth: clip.video.width,
                                             sourceHeight: clip.video.height)
            // It ends by itself after the trial's frames; interrupted (EOS) should it hang, then killed.
            return runChild(argv, interruptAfter: seconds + 60, from: LayoutPeers.gstreamerPlayingMarker, startTimeout: 120, grace: 30)
                .map { gstreamerTrial($0, zones: zones) }
        default:
            let argv = LayoutPeers.ffmpeg(clip: clip.path, seconds: seconds, grid: grid, sourceWidth: clip.video.width, sourceHeight: clip.video.height)
            return runChild(argv).map { ffmpegTrial($0, zones: zones) }
        }
    }

    /// This executable's `bench layout --zones N --clip FILE --seconds S --child-report FILE`, and
    /// the report it wrote. Scanout failing to run is an error, not a failed trial.
    private func scanoutTrial(zones: Int, clip: Clip) throws -> LayoutTrial {
        let reportPath = FileManager.default.temporaryDirectory.appendingPathComponent("scanout-bench-layout-\(getpid())-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: reportPath) }
        let argv = [selfExecutable(), "bench", "layout", "--zones", String(zones), "--clip", clip.path, "--seconds", String(seconds),
                    "--child-report", reportPath]
        guard let child = runChild(argv) else { throw BenchError("cannot start \(argv[0])") }
        guard child.status == 0, let data = FileManager.default.contents(atPath: reportPath) else {
            let line = child.stderr.split(separator: "\n").last.map(String.init) ?? "exit status \(child.status)"
            throw BenchError(line.hasPrefix("scanout: ") ? String(line.dropFirst(9)) : line)
        }
        let r = try JSONDecoder().decode(LayoutChildReport.self, from: data)
        return LayoutTrial(zones: zones, passed: r.passed, dropped: r.zonesDropped.reduce(0, +), lateComposes: r.lateComposes,
                           wallSeconds: child.wallSeconds, cpuSeconds: child.cpuSeconds, peakKiB: child.maxRSSKiB, detail: Self.describe(r))
    }

    /// What Scanout's child said, in a line: drops, late composes, the compose's time, decoding,
    /// and the CPU of its threads.
    static func describe(_ r: LayoutChildReport) -> String {
        let dropping = r.zonesDropped.filter { $0 > 0 }.count
        let decode = upperMedian(r.zonesDecodeMs), present = upperMedian(r.zonesPresentMs)
        let threads = r.threadCPUSeconds.sorted { $0.value > $1.value }.map { "\($0.key) \(format1($0.value))" }.joined(separator: ", ")
        return "dropped \(r.zonesDropped.reduce(0, +)) (\(dropping) of \(r.zonesDropped.count) zones), late composes \(r.lateComposes) of \(r.composed)"
            + ", compose p50 \(format2(r.composeP50Ms)) ms, p99 \(format2(r.composeP99Ms)) ms, max \(format2(r.composeMaxMs)) ms"
            + "; zone median: decode \(format2(decode)) ms/frame, present \(format2(present)) ms/frame, \(r.zonesPresented.min() ?? 0) frames at least"
            + "; first frames after \(format2(r.startSeconds)) s; cpu s by thread: \(threads)"
    }

    /// GStreamer passes when it played the trial's seconds and nothing in the pipeline dropped a
    /// frame for lateness (no QoS drop: the sink's, the compositor's, a decoder's).
    private func gstreamerTrial(_ child: ChildResult, zones: Int) -> LayoutTrial {
        let drops = GStreamerDrops(child.stderr)
        let played = drops.playingSeconds ?? 0
        var detail = "QoS drops \(drops.dropped)"
        if !drops.droppedByElement.isEmpty {
            detail += " (" + drops.droppedByElement.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ") + ")"
        }
        detail += ", sink rendered \(drops.sinkRendered.map(String.init) ?? "-") dropped \(drops.sinkDropped.map(String.init) ?? "-"), played \(format2(played)) s"
        if child.status != 0 { detail += "; exit status \(child.status): " + Self.lastLine(child.stderr) }
        let passed = child.status == 0 && drops.dropped == 0 && played >= seconds - 0.5
        return LayoutTrial(zones: zones, passed: passed, dropped: drops.dropped, wallSeconds: child.wallSeconds, cpuSeconds: child.cpuSeconds,
                           peakKiB: child.maxRSSKiB, detail: detail)
    }

    /// ffmpeg passes when it wrote the trial's seconds and its own time at the end ran at most
    /// `ffmpegLagTolerance` past the media time.
    private func ffmpegTrial(_ child: ChildResult, zones: Int) -> LayoutTrial {
        let pace = FFmpegPace(child.stderr)
        var detail = pace.map { "time \(format2($0.mediaSeconds)) s at speed \(formatFixed($0.speed, 3))x: \(format2($0.lagSeconds)) s behind" } ?? "no progress line"
        if child.status != 0 { detail += "; exit status \(child.status): " + Self.lastLine(child.stderr) }
        let passed = child.status == 0 && pace.map { $0.mediaSeconds >= seconds - 0.05 && $0.lagSeconds <= Self.ffmpegLagTolerance } == true
        return LayoutTrial(zones: zones, passed: passed, dropped: 0, lagSeconds: pace?.lagSeconds, wallSeconds: child.wallSeconds,
                           cpuSeconds: child.cpuSeconds, peakKiB: child.maxRSSKiB, detail: detail)
    }

    private static func lastLine(_ text: String) -> String {
        text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }).last.map(String.init) ?? ""
    }

    /// The 1-minute load average.
    static func loadAverage() -> Double {
        var load = [0.0, 0.0, 0.0]
        return getloadavg(&load, 3) > 0 ? load[0] : .nan
    }

    /// The trial running, on stderr when it is a terminal and the table is printed.
    private func status(_ line: String?) {
        guard !json, isatty(2) != 0 else { return }
        StandardError.write("\r\u{1B}[K" + (line.map { "bench layout: \($0)" } ?? ""))
    }
}
