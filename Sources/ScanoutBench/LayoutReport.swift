import Foundation
import ScanoutCore

/// One trial of one tool in `bench layout`: N zones for the trial's seconds, and whether every
/// frame was composed in time.
public struct LayoutTrial: Codable, Equatable, Sendable {
    public var zones: Int
    public var passed: Bool
    /// Frames dropped for lateness: Scanout's zones' drops summed, GStreamer's QoS drops (sink,
    /// compositor, decoders); ffmpeg drops none (it reads its inputs at their rate and falls
    /// behind instead: `lagSeconds`).
    public var dropped: Int
    /// Scanout: composes that started more than an interval late.
    public var lateComposes: Int?
    /// ffmpeg: how far its own time ran past the media time at the end, seconds.
    public var lagSeconds: Double?
    /// The whole process: wall and CPU seconds, peak resident memory.
    public var wallSeconds: Double
    public var cpuSeconds: Double
    public var peakKiB: Int
    /// What the tool said of the trial, in a line (its drops, pace and where its time went).
    public var detail: String

    public init(zones: Int, passed: Bool, dropped: Int, lateComposes: Int? = nil, lagSeconds: Double? = nil,
                wallSeconds: Double, cpuSeconds: Double, peakKiB: Int, detail: String) {
        self.zones = zones; self.passed = passed; self.dropped = dropped; self.lateComposes = lateComposes
        self.lagSeconds = lagSeconds.map(LayoutReport.rounded); self.wallSeconds = LayoutReport.rounded(wallSeconds)
        self.cpuSeconds = LayoutReport.rounded(cpuSeconds); self.peakKiB = peakKiB; self.detail = detail
    }
}

/// One tool's search at one size.
public struct LayoutToolResult: Codable, Equatable, Sendable {
    public var tool: String
    /// The most zones that passed (0: not even one); nil when the tool did not run.
    public var zones: Int?
    /// Its trials, in the order they ran.
    public var trials: [LayoutTrial]
    /// Why the tool did not run (not installed), nil when it did.
    public var missing: String?

    public init(tool: String, zones: Int?, trials: [LayoutTrial], missing: String? = nil) {
        self.tool = tool; self.zones = zones; self.trials = trials; self.missing = missing
    }
}

/// Every tool's figure for one clip size.
public struct LayoutSizeResult: Codable, Equatable, Sendable {
    /// "1080p30".
    public var size: String
    public var clip: String
    public var codec: String
    public var width: Int
    public var height: Int
    /// Scanout first, then the peers.
    public var tools: [LayoutToolResult]
    /// Scanout's zones over GStreamer's; nil when either has no figure or GStreamer's is 0.
    public var ratioToGStreamer: Double?

    public init(size: String, clip: String, codec: String, width: Int, height: Int, tools: [LayoutToolResult]) {
        self.size = size; self.clip = clip; self.codec = codec; self.width = width; self.height = height; self.tools = tools
        let ours = tools.first { $0.tool == "scanout" }?.zones, theirs = tools.first { $0.tool == "gstreamer" }?.zones
        if let ours, let theirs, theirs > 0 { ratioToGStreamer = LayoutReport.rounded(Double(ours) / Double(theirs)) }
    }

    func zones(_ tool: String) -> String {
        guard let t = tools.first(where: { $0.tool == tool }) else { return "-" }
        return t.zones.map(String.init) ?? "missing"
    }
}

/// The results of `bench layout`, as the table and as JSON (`Codable`: it reads back as written).
public struct LayoutReport: Codable, Equatable, Sendable {
    public var suite = "layout"
    public var canvasWidth: Int
    public var canvasHeight: Int
    public var fps: Int
    /// Seconds each trial ran for, and the most zones tried.
    public var seconds: Double
    public var maxZones: Int
    /// The machine: its cores and its load average (1 min) at the start and the end of the run.
    public var cores: Int
    public var loadAverageStart: Double
    public var loadAverageEnd: Double
    public var sizes: [LayoutSizeResult]

    /// `v` to 3 decimals, as the JSON of every suite gives its figures.
    static func rounded(_ v: Double) -> Double { v.isFinite ? (v * 1000).rounded() / 1000 : 0 }

    public func json() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }

    public static func read(json: String) throws -> LayoutReport {
        try JSONDecoder().decode(LayoutReport.self, from: Data(json.utf8))
    }

    /// The summary (a row per size), then every trial of every tool.
    public func table() -> String {
        let tools = sizes.first?.tools.map(\.tool) ?? ["scanout"]
        var lines = ["bench layout: the most zones of one clip composed into \(canvasWidth)x\(canvasHeight) at \(fps) fps with no frame dropped for \(formatSeconds(seconds)) s"
                     + " (a grid of ⌈√N⌉ columns, pictures fitted; N = 1, 2, 4, ... to the first failure, then bisected; at most \(maxZones))",
                     "machine: \(cores) cores, load average \(format2(loadAverageStart)) at the start, \(format2(loadAverageEnd)) at the end",
                     "",
                     pad("size", 9) + tools.map { pad("\($0) N", 13) }.joined() + "ratio scanout/gstreamer"]
        for s in sizes {
            lines.append(pad(s.size, 9) + tools.map { pad(s.zones($0), 13) }.joined() + (s.ratioToGStreamer.map { formatFixed($0, 3) } ?? "-"))
        }
        for s in sizes {
            lines += ["", "\(s.size): \(s.clip) (\(s.codec) \(s.width)x\(s.height))"]
            for t in s.tools {
                if let missing = t.missing {
                    lines.append("  \(t.tool): missing (\(missing))")
                    continue
                }
                for trial in t.trials {
                    let cores = trial.cpuSeconds / max(trial.wallSeconds, 1e-9)
                    lines.append("  " + pad(t.tool, 10) + pad("\(trial.zones) zone\(trial.zones == 1 ? "" : "s")", 10) + pad(trial.passed ? "pass" : "FAIL", 6)
                                 + "wall \(format1(trial.wallSeconds)) s, cpu \(format1(trial.cpuSeconds)) s (\(format2(cores)) cores), peak \(format1(Double(trial.peakKiB) / 1024)) MiB; \(trial.detail)")
                }
            }
        }
        return lines.joined(separator: "\n")
    }

    private func formatSeconds(_ s: Double) -> String { s == s.rounded() ? String(Int(s)) : formatFixed(s, 1) }
}
