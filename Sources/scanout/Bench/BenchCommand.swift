import ArgumentParser
import ScanoutBench
import ScanoutRender

struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure Scanout and compare it with FFmpeg, mpv and GStreamer on the same inputs in the same run.",
        discussion: """
        Every tool, Scanout included, runs as its own process on the same file, interleaved run by run, \
        and is timed the same way: wall-clock time of the whole process (wait4 gives CPU time and peak \
        memory). Figures are medians over --runs after --warmup unmeasured runs; ratios are \
        Scanout/peer of the medians. A peer that is not installed is reported as missing.
        """,
        subcommands: [BenchDecode.self, BenchRender.self, BenchPlay.self, BenchSeek.self, BenchStartup.self, BenchZap.self, BenchLayout.self]
    )
}

/// Options every suite shares.
struct BenchOptions: ParsableArguments {
    @Argument(help: "Files to measure (each is a row group in the table and the plot).") var inputs: [String]
    @Option(help: "Measured runs per tool and input.") var runs: Int = 3
    @Option(help: "Unmeasured warm-up runs per tool and input.") var warmup: Int = 1
    @Option(help: "Peers to run on the same inputs, comma-separated: ffmpeg,mpv,gstreamer.") var compare: String?
    @Flag(help: "Print the results as JSON.") var json = false
    @Option(help: "Write an SVG plot of the results here.") var plot: String?
    @Option(help: "Renderer for the render suite: cpu (bit-exact) or gl (GLES; upload, draw and readback timed apart).") var renderer: BenchRenderer = .cpu
    @Option(help: "Render suite, gl: frames whose readback is in flight at once (0: each read back synchronously as drawn).") var readbackDepth: Int = 3
    @Option(help: ArgumentHelp("Render suite: PQ and HLG frames tone mapped with this curve (hable, mobius, reinhard, clip, linear, bt2390); ffmpeg then runs zscale,tonemap,zscale with the same curve.", valueName: "curve"))
    var tonemap: ToneCurve?
    @Option(help: "Seek suite: exact seeks per run.") var seeks: Int = 8
    @Option(parsing: .unconditional, help: "Decode suite: concurrent decodes of each input in one Scanout process (a thread each, started together); each peer runs as that many processes at once. --threads is per stream.")
    var streams: Int = 1
    @Option(help: .hidden) var childReport: String?
    @OptionGroup var input: InputOptions

    var peers: [String] { compare.map { $0.split(separator: ",").map { String($0).trimmingSpaces } } ?? [] }

    func validate() throws {
        guard !inputs.isEmpty else { throw ValidationError("give at least one input") }
        guard (1...100).contains(runs) else { throw ValidationError("--runs must be 1...100") }
        guard warmup >= 0 else { throw ValidationError("--warmup must be 0 or more") }
        guard (1...1000).contains(seeks) else { throw ValidationError("--seeks must be 1...1000") }
        guard (1...64).contains(streams) else { throw ValidationError("--streams must be 1...64 (concurrent decodes of each input), not \(streams)") }
        for p in peers where !Peer.known.contains(p) {
            throw ValidationError("--compare: unknown peer '\(p)' (known: \(Peer.known.joined(separator: ", ")))")
        }
        guard (0...16).contains(readbackDepth) else { throw ValidationError("--readback-depth must be 0...16") }
    }

    /// What the harness runs: these options, and the decoding options made once (with the
    /// faults of `SCANOUT_FAULTS`).
    func configuration() throws -> BenchConfiguration {
        var c = BenchConfiguration(inputs: inputs, demuxer: input.demuxer, decoder: try input.decoder)
        c.runs = runs
        c.warmup = warmup
        c.peers = peers
        c.json = json
        c.plot = plot
        c.renderer = renderer
        c.readbackDepth = readbackDepth
        c.toneCurve = tonemap
        c.seeks = seeks
        c.streams = streams
        c.threads = input.threads
        c.playerType = input.playerType
        c.device = input.device
        c.fallbackAfter = input.fallbackAfter
        c.timeout = input.timeout
        c.verbose = input.verbose
        return c
    }
}

protocol BenchSuiteCommand: ParsableCommand {
    static var suite: BenchSuite { get }
    var bench: BenchOptions { get }
}

extension BenchSuiteCommand {
    func validate() throws {
        if bench.streams != 1 && Self.suite != .decode {
            throw ValidationError("--streams applies to bench decode only")
        }
    }

    func run() throws {
        bench.input.installLog()
        try runReporting {
            let configuration = try bench.configuration()
            if let report = bench.childReport {
                try BenchChild(suite: Self.suite, configuration: configuration).run(reportPath: report)
            } else {
                try BenchRunner(suite: Self.suite, configuration: configuration).run()
            }
        }
    }
}

struct BenchDecode: BenchSuiteCommand {
    static let configuration = CommandConfiguration(commandName: "decode",
        abstract: "Demux + decode every frame: fps, CPU ms per frame, peak memory.",
        discussion: "Peers: ffmpeg -threads N -i X -f null - (with Scanout's hardware decoder: -hwaccel vaapi or cuda instead); mpv --no-config --vo=null --ao=null --untimed; gst-launch-1.0 filesrc ! parsebin ! avdec_* ! fakesink sync=false. With --streams N: N decodes at once in one Scanout process, N processes of each peer.")
    static let suite = BenchSuite.decode
    @OptionGroup var bench: BenchOptions
}

struct BenchRender: BenchSuiteCommand {
    static let configuration = CommandConfiguration(commandName: "render",
        abstract: "Decode + convert every frame to RGB (the bit-exact CPU renderer).",
        discussion: "Peers: ffmpeg ... -pix_fmt rgb24 -f null -; gst-launch-1.0 ... ! videoconvert ! video/x-raw,format=RGB ! fakesink.")
    static let suite = BenchSuite.render
    @OptionGroup var bench: BenchOptions
}

struct BenchPlay: BenchSuiteCommand {
    static let configuration = CommandConfiguration(commandName: "play",
        abstract: "Real-time headless playback through the Player: frames dropped and pacing jitter (p50/p99 deviation from each frame's due time).",
        discussion: "Peer: mpv --no-config --vo=null --ao=null (real time), its frame-drop-count + decoder-frame-drop-count and vo-delayed-frame-count read by a script at the end.")
    static let suite = BenchSuite.play
    @OptionGroup var bench: BenchOptions
}

struct BenchSeek: BenchSuiteCommand {
    static let configuration = CommandConfiguration(commandName: "seek",
        abstract: "Exact-seek latency through the Player: time to the exact frame N shown and written as a PNG, per seek.",
        discussion: "Targets are the same pseudo-random frames for every tool. Peer: ffmpeg -ss T -i X -frames:v 1 (one process per seek; note that -ss lands on the wrong frame in MPEG-TS). Scanout's stages (in process): the index scan (once per input), seek to frame shown, PNG.")
    static let suite = BenchSuite.seek
    @OptionGroup var bench: BenchOptions
}

struct BenchStartup: BenchSuiteCommand {
    static let configuration = CommandConfiguration(commandName: "startup",
        abstract: "Time to first frame: start the process, load the input into the Player, play, frame 0 rendered, exit.",
        discussion: "Peers: ffmpeg -i X -frames:v 1 -pix_fmt rgb24 -f null -; mpv --frames=1 --vo=null. Scanout's stages (in process): setup, open (header), probe, decoder, first frame decoded, presented.")
    static let suite = BenchSuite.startup
    @OptionGroup var bench: BenchOptions
}
