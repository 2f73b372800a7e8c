import Foundation
import ScanoutDisplay
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutPlayer
import ScanoutRender

/// What one Scanout benchmark process did, written as JSON for the parent to read.
struct ChildReport: Codable, Equatable {
    /// Units of work: frames decoded/rendered/presented, seeks made, or 1 for startup.
    var frames: Int
    /// Time of the measured work inside the process (after start-up), seconds.
    var internalSeconds: Double
    /// Time of each unit of work (a frame, a seek), milliseconds.
    var unitMs: [Double]
    var dropped: Int = 0
    var pacingP50Ms: Double = 0
    var pacingP99Ms: Double = 0
    var decoder: String = "sw"
    /// The decision's decoder label (what the ffmpeg peer's decoder is chosen from).
    var decoderLabel: String = ""
    /// Decode suite (`--streams`): each stream's frames, its seconds from the start gate to its
    /// last frame, and the seconds from the gate to the last stream's end.
    var streamFrames: [Int] = []
    var streamSeconds: [Double] = []
    var streamsWallSeconds: Double = 0
    /// GL renderer only: median milliseconds per frame of each stage (upload, draw, readback).
    var stageMs: [String: Double] = [:]
    /// GL renderer only: how frames were read back ("pipelined, 3 deep" or "synchronous").
    var readback = ""
    /// Copies of decoded pictures between CPU and GPU memory (`TransferCounts.summary`).
    var copies = ""
    /// Startup and seek suites: where the time went, in order.
    var stages: [Stage] = []
}

/// A named part of a measured unit of work, milliseconds.
struct Stage: Codable, Equatable {
    var name: String
    var ms: Double
}

/// The work of one measured Scanout run, done in a child process so that it is timed exactly
/// like the peers (`BenchRunner` starts it as `scanout bench SUITE INPUT --child-report FILE`).
public struct BenchChild {
    let suite: BenchSuite
    let configuration: BenchConfiguration

    public init(suite: BenchSuite, configuration: BenchConfiguration) {
        self.suite = suite
        self.configuration = configuration
    }

    /// Measures the suite on the first input and writes the report (JSON) to `reportPath`.
    public func run(reportPath: String) throws {
        let input = configuration.inputs[0]
        let report: ChildReport
        switch suite {
        case .decode: report = try decodeStreams(input: input)
        case .render: report = try renderFrames(input: input)
        case .startup: report = try startup(input: input)
        case .seek: report = try seek(input: input)
        case .play: report = try play(input: input)
        }
        let data = try JSONEncoder().encode(report)
        guard FileManager.default.createFile(atPath: reportPath, contents: data) else {
            throw MediaError.outputFailed(path: reportPath, reason: "cannot write the benchmark report")
        }
    }

    /// A reader with the command's decoder options; its copies counted in `transfers`, and
    /// hardware frames left in GPU memory when `destination` says so.
    private func reader(_ input: String, destination: FrameDestination = .cpu, transfers: FrameTransfers? = nil) throws -> FrameReader {
        var decoder = configuration.decoder
        decoder.destination = destination
        decoder.transfers = transfers
        return try FrameReader(input: input, demuxerOptions: configuration.demuxer, decoderOptions: decoder)
    }

    /// "hw: VA-API /dev/dri/renderD128 (...)", with the fallback when one happened.
    static func decoderSummary(_ r: FrameReader) -> String {
        guard let d = r.decision else { return r.decoder.kind }
        return "\(d.chosen): \(d.decoder)" + (r.fallback.map { "; \($0)" } ?? "")
    }

    /// Render suite: decode and convert every frame, timing each.
    private func renderFrames(input: String) throws -> ChildReport {
        let t0 = monotonicSeconds()
        // The GLES renderer takes hardware frames in GPU memory; the CPU renderer needs planes.
        let transfers = FrameTransfers()
        let r = try reader(input, destination: configuration.renderer == .gl ? .gpu : .cpu, transfers: transfers)
        let cpu = CPURenderer()
        var gl: GLReadbackPipeline<Void>?
        var composition = Composition(orientation: r.video.orientation)
        let toneMapping = configuration.toneCurve.map { ToneMapping(curve: $0) }
        composition.toneMapping = toneMapping
        if configuration.renderer == .gl {
            // At the video's own size, upright: the same output as the CPU renderer's.
            let renderer = try GLRenderer()
            renderer.importer.transfers = transfers
            gl = try GLReadbackPipeline(renderer: renderer, depth: configuration.readbackDepth)
        }
        var image = RGBImage(width: 0, height: 0, bytes: [])
        let frame = VideoFrame()
        var times: [Double] = []
        var stages: [String: [Double]] = ["upload": [], "draw": [], "readback": []]
        times.reserveCapacity(4096)
        var last = monotonicSeconds()
        while try r.next(into: frame) {
            if let gl {
                // Frames come back up to depth - 1 submissions later; the last ones at `finish`.
                if let done = try gl.submit(.frame(frame), as: composition, tag: ()).last { image = done.image }
                stages["upload"]!.append(gl.lastStats.upload * 1000)
                stages["draw"]!.append(gl.lastStats.draw * 1000)
                stages["readback"]!.append(gl.lastStats.readback * 1000)
            } else {
                try cpu.render(frame, orientation: r.video.orientation, toneMapping: toneMapping, into: &image)
            }
            let now = monotonicSeconds()
            times.append((now - last) * 1000)
            last = now
        }
        if times.isEmpty { throw MediaError.noFrames(input: input) }
        if let gl {
            // The frames still in flight: their wait counts towards the last frame's time.
            if let done = try gl.finish().last { image = done.image }
            let now = monotonicSeconds()
            times[times.count - 1] += (now - last) * 1000
            last = now
        }
        var report = ChildReport(frames: times.count, internalSeconds: last - t0, unitMs: times)
        report.decoder = Self.decoderSummary(r)
        report.copies = transfers.counts.summary(frames: report.frames)
        if let gl {
            report.stageMs = stages.mapValues { pct($0.sorted(), 50) }
            report.readback = gl.isPipelined ? "pipelined, \(gl.depth) deep" : "synchronous"
        }
        return report
    }

    /// A player engine on the headless display, as `scanout serve` runs one (the next item is
    /// prepared on the caller's thread: a bench plays one item).
    private func engine(clock: any PlaybackClock = MonotonicClock(), display: any Display) -> PlayerEngine {
        var config = PlayerConfiguration()
        config.demuxer = configuration.demuxer
        config.decoder = configuration.decoder
        return PlayerEngine(display: display, clock: clock, configuration: config) { _ in }
    }

    /// Time to the first frame through the Player: load (open, decode frame 0), play, and the
    /// first frame rendered on the headless display. The stages: the player and display made,
    /// the header read, the streams probed, the decoder opened, frame 0 decoded, and presented.
    private func startup(input: String) throws -> ChildReport {
        let t0 = monotonicSeconds()
        let display = HeadlessDisplay()
        let timed = TimedDisplay(display)
        let player = engine(display: timed)
        let t1 = monotonicSeconds()
        try player.load([PlaylistItem(source: input)])
        let t2 = monotonicSeconds()
        try player.play()
        while display.framesPresented == 0 && player.isRunning { player.tick() }
        guard display.framesPresented > 0, let reader = player.currentItem?.reader else { throw MediaError.noFrames(input: input) }
        let t3 = monotonicSeconds()
        var report = ChildReport(frames: 1, internalSeconds: t3 - t0, unitMs: [(t3 - t0) * 1000])
        let open = reader.demuxer.openSeconds, probe = reader.demuxer.probeSeconds, decoder = reader.decoderOpenSeconds
        report.stages = [("setup", t1 - t0), ("open", open), ("probe", probe), ("decoder", decoder),
                         ("first frame", t2 - t1 - open - probe - decoder), ("present", t3 - t2),
                         ("of which drawing", timed.seconds)].map { Stage(name: $0.0, ms: $0.1 * 1000) }
        return report
    }

    /// Exact seeks through the Player (each lands on frame N, shown on the headless display),
    /// the picture then encoded as a PNG like the peer's. The frame index is built first (once
    /// per input: the player's seeker finds it in `FrameIndex.cached`), its time a stage.
    private func seek(input: String) throws -> ChildReport {
        let t0 = monotonicSeconds()
        let display = HeadlessDisplay()
        let timed = TimedDisplay(display)
        let player = engine(display: timed)
        try player.load([PlaylistItem(source: input)])
        let i0 = monotonicSeconds()
        let index = try FrameIndex.cached(input: input, options: configuration.demuxer)
        let indexSeconds = monotonicSeconds() - i0
        let tb = player.currentItem!.video.timeBase.doubleValue
        let targets = seekTargets(frameCount: index.frameCount, count: configuration.seeks)
        let png = PNGEncoder()
        var times: [Double] = [], shown: [Double] = [], encode: [Double] = []
        var present: [Double] = []
        for n in targets {
            let s0 = monotonicSeconds()
            timed.seconds = 0
            try player.seek(to: Double(index.timestamps[n] - index.timestamps[0]) * tb, exact: true)
            present.append(timed.seconds * 1000)
            let s1 = monotonicSeconds()
            guard let image = try display.snapshot() else { throw MediaError.noFrames(input: input) }
            _ = try png.encode(image)
            let s2 = monotonicSeconds()
            times.append((s2 - s0) * 1000)
            shown.append((s1 - s0) * 1000)
            encode.append((s2 - s1) * 1000)
        }
        var report = ChildReport(frames: targets.count, internalSeconds: monotonicSeconds() - t0, unitMs: times)
        report.stages = [Stage(name: "index (once)", ms: indexSeconds * 1000), Stage(name: "seek to frame shown p50", ms: pct(shown.sorted(), 50)),
                         Stage(name: "of which present p50", ms: pct(present.sorted(), 50)), Stage(name: "png p50", ms: pct(encode.sorted(), 50))]
        return report
    }

    /// Real-time playback through the Player to the end.
    private func play(input: String) throws -> ChildReport {
        let t0 = monotonicSeconds()
        let player = engine(display: HeadlessDisplay())
        player.session.deviationWindow = nil
        try player.load([PlaylistItem(source: input)])
        try player.play()
        while player.isRunning { player.tick() }
        let stats = player.session.currentStats()
        return ChildReport(frames: stats.framesPresented, internalSeconds: monotonicSeconds() - t0,
                           unitMs: stats.pacingDeviations.map { Double($0.nanosecondCount) / 1e6 }, dropped: stats.framesDropped,
                           pacingP50Ms: stats.pacingPercentile(50), pacingP99Ms: stats.pacingPercentile(99))
    }
}

/// `count` frame numbers spread over the stream in a fixed pseudo-random order (the same for
/// every tool and run): a 64-bit LCG, seeded once.
func seekTargets(frameCount: Int, count: Int) -> [Int] {
    guard frameCount > 0 else { return [] }
    var state: UInt64 = 0x5CA2_0071
    return (0..<count).map { _ in
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return Int((state >> 33) % UInt64(frameCount))
    }
}
