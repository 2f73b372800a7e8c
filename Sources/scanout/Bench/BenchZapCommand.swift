import ArgumentParser
import ScanoutBench

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
            try ZapBench(inputs: inputs, zaps: zaps, warmup: warmup, peers: peers, seed: seed, json: json).run()
        }
    }
}
