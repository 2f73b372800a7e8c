import ArgumentParser
import ScanoutBench
import ScanoutDemux

struct BenchLayout: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "layout",
        abstract: "Screens of many zones: the most zones of one clip composed into 1920x1080 at 30 fps with no frame dropped, per clip size, against GStreamer and ffmpeg.",
        discussion: """
        For each size, the H.264 clip layout-<size>p30.mp4 in --clips (tools/make-clips.sh makes them, \
        70 s long). N zones sit in the smallest near-square grid (ceil(sqrt N) columns), each picture \
        fitted into its cell; every tool plays the clip in every zone, composing a 30 fps canvas for \
        --seconds (at most the clip's length: gst-launch cannot loop a file). Each tool searches N: 1, 2, 4, ... until a trial fails (or --max-zones), then \
        bisects; the tools take turns, a trial each, every trial a process of its own. \
        Scanout: a ScreenLayout of N zones on ScreenPlayer with the CPU compositor \
        (HeadlessCanvasOutput), composing every 1/30 s; it passes when no zone's player dropped a \
        frame and no compose started more than an interval late. GStreamer: gst-launch-1.0 with \
        compositor and a decodebin branch per zone, the pads placed and scaled to the pictures, \
        into fpsdisplaysink around fakesink sync=true qos=true max-lateness=<one interval>; it \
        passes when it played --seconds (each branch ends after that many seconds of frames, \
        identity eos-after) and no element posted a QoS message with a drop (sink, compositor or \
        decoder). ffmpeg: N inputs -re -stream_loop -1, each scaled, \
        xstack, -t SECONDS -f null -; it passes when its own time at the end (time= over speed=) \
        is at most 0.5 s past the media time.
        """)

    @Option(help: "Clip sizes, comma-separated (each needs layout-<size>p30.mp4 in --clips).") var sizes: String = "1080,720,360"
    @Option(help: "Seconds each trial composes for.") var seconds: Double = 60
    @Option(help: "The most zones tried.") var maxZones: Int = 16
    @Option(help: "Peers to run in the same run, comma-separated: gstreamer,ffmpeg (\"\": none).") var compare: String = "gstreamer,ffmpeg"
    @Option(help: "The directory of the clips (tools/make-clips.sh DIR layout-1080p30.mp4 layout-720p30.mp4 layout-360p30.mp4).")
    var clips: String = ".clips"
    @Flag(help: "Print the results as JSON.") var json = false
    @Option(help: .hidden) var zones: Int?
    @Option(help: .hidden) var clip: String?
    @Option(help: .hidden) var childReport: String?

    var sizeList: [Int] { sizes.split(separator: ",").compactMap { Int(String($0).trimmingSpaces) } }
    var peers: [String] { compare.split(separator: ",").map { String($0).trimmingSpaces }.filter { !$0.isEmpty } }

    func validate() throws {
        let listed = sizes.split(separator: ",")
        guard !listed.isEmpty, sizeList.count == listed.count, sizeList.allSatisfy({ $0 > 0 }) else {
            throw ValidationError("--sizes: heights such as 1080,720,360, not '\(sizes)'")
        }
        guard seconds >= 1 && seconds <= 3600 else { throw ValidationError("--seconds must be 1...3600") }
        guard (1...64).contains(maxZones) else { throw ValidationError("--max-zones must be 1...64") }
        for p in peers where !["gstreamer", "ffmpeg"].contains(p) {
            throw ValidationError("--compare: bench layout compares with gstreamer and ffmpeg, not '\(p)'")
        }
        if childReport != nil && (zones == nil || clip == nil) { throw ValidationError("a layout trial needs --zones and --clip") }
        if let zones, !(1...64).contains(zones) { throw ValidationError("--zones must be 1...64") }
    }

    func run() throws {
        FFmpegLog.install(printing: .quiet)
        try runReporting {
            if let report = childReport, let zones, let clip {
                try LayoutChild(clip: clip, zones: zones, seconds: seconds).run(reportPath: report)
            } else {
                try LayoutBench(sizes: sizeList, seconds: seconds, maxZones: maxZones, peers: peers, clipDirectory: clips, json: json).run()
            }
        }
    }
}
