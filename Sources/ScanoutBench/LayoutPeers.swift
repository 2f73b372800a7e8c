import Foundation
import ScanoutCore

/// The peers of `bench layout`: their command lines for N zones of one clip on the trial's grid,
/// and the parsing of what they print about their drops and their pace.
enum LayoutPeers {
    /// The peers `bench layout --compare` may name.
    static let known = ["gstreamer", "ffmpeg"]

    /// Every tool composes at this rate.
    static let fps = 30

    /// One output frame interval in nanoseconds (GStreamer's sink drops a frame later than that).
    static var intervalNanoseconds: Int { 1_000_000_000 / fps }

    /// What `gst-launch-1.0` prints once the pipeline has prerolled and starts playing.
    static let gstreamerPlayingMarker = "Setting pipeline to PLAYING"

    /// `gst-launch-1.0 -e -m -v`: `compositor` with a `decodebin` branch per zone, each pad placed
    /// and scaled to its zone's picture (`xpos`, `ypos`, `width`, `height`), into a 30 fps canvas,
    /// into `fpsdisplaysink` around a `fakesink` that syncs to the clock with QoS on and drops a
    /// frame more than one interval late. Each branch ends after `seconds` of the clip's frames
    /// (`identity eos-after`), and the pipeline with them: gst-launch cannot loop a file, so the
    /// clip must last that long. `-m` prints every QoS message (a frame dropped for lateness, by
    /// the sink, the compositor or a decoder), `-v` the sink's counts.
    static func gstreamer(clip: String, seconds: Double, grid: LayoutGrid, sourceWidth: Int, sourceHeight: Int) -> [String] {
        var argv = ["gst-launch-1.0", "-e", "-m", "-v", "compositor", "name=comp", "background=black"]
        for (i, p) in grid.pictures(sourceWidth: sourceWidth, sourceHeight: sourceHeight).enumerated() {
            argv += ["sink_\(i)::xpos=\(p.x)", "sink_\(i)::ypos=\(p.y)", "sink_\(i)::width=\(p.width)", "sink_\(i)::height=\(p.height)"]
        }
        argv += ["!", "video/x-raw,width=\(grid.width),height=\(grid.height),framerate=\(fps)/1",
                 "!", "fpsdisplaysink", "video-sink=\"fakesink sync=true qos=true max-lateness=\(intervalNanoseconds)\"",
                 "text-overlay=false", "signal-fps-measurements=true", "fps-update-interval=1000"]
        let frames = Int((seconds * Double(fps)).rounded())
        for i in 0..<grid.zones {
            argv += ["filesrc", "location=\"\(clip)\"", "!", "decodebin", "!", "identity", "eos-after=\(frames)", "!", "comp.sink_\(i)"]
        }
        return argv
    }

    /// `ffmpeg`: the clip as N inputs read at their own rate, looping (`-re -stream_loop -1`),
    /// each scaled to its zone's picture and stacked on the canvas (`xstack`, the space between
    /// pictures black; one zone: padded onto the canvas, xstack takes two inputs at least), for
    /// `seconds` of output into the null muxer.
    static func ffmpeg(clip: String, seconds: Double, grid: LayoutGrid, sourceWidth: Int, sourceHeight: Int) -> [String] {
        var argv = ["ffmpeg", "-hide_banner", "-nostdin"]
        for _ in 0..<grid.zones { argv += ["-re", "-stream_loop", "-1", "-i", clip] }
        return argv + ["-filter_complex", ffmpegFilter(grid: grid, sourceWidth: sourceWidth, sourceHeight: sourceHeight),
                       "-map", "[out]", "-t", formatFixed(seconds, 3), "-f", "null", "-"]
    }

    /// The filter graph of `ffmpeg(...)`: a `scale` per input, then `xstack` (and a `pad` to the
    /// canvas when the pictures do not reach its right or bottom edge).
    static func ffmpegFilter(grid: LayoutGrid, sourceWidth: Int, sourceHeight: Int) -> String {
        let pictures = grid.pictures(sourceWidth: sourceWidth, sourceHeight: sourceHeight)
        if pictures.count == 1 {
            let p = pictures[0]
            return "[0:v]scale=\(p.width):\(p.height),pad=\(grid.width):\(grid.height):\(p.x):\(p.y):black[out]"
        }
        let right = pictures.map { $0.x + $0.width }.max()!, bottom = pictures.map { $0.y + $0.height }.max()!
        let pad = right == grid.width && bottom == grid.height ? "" : ",pad=\(grid.width):\(grid.height):0:0:black"
        let scales = pictures.enumerated().map { i, p in "[\(i):v]scale=\(p.width):\(p.height)[v\(i)]" }
        let stack = pictures.indices.map { "[v\($0)]" }.joined()
            + "xstack=inputs=\(pictures.count):layout=\(xstackLayout(pictures)):fill=black\(pad)[out]"
        return (scales + [stack]).joined(separator: ";")
    }

    /// xstack's layout: each input's top-left corner, `x_y`, separated by `|`.
    static func xstackLayout(_ pictures: [LayoutGrid.Rect]) -> String {
        pictures.map { "\($0.x)_\($0.y)" }.joined(separator: "|")
    }
}

/// What GStreamer printed about a layout trial (`gst-launch-1.0 -m -v`).
struct GStreamerDrops: Equatable {
    /// Frames each element dropped for lateness: the `dropped` count of its last QoS message
    /// (the sink, the compositor, a decoder).
    var droppedByElement: [String: Int] = [:]
    /// QoS messages on the bus.
    var qosMessages = 0
    /// The last `rendered` and `dropped` counts `fpsdisplaysink` printed (each second).
    var sinkRendered: Int?
    var sinkDropped: Int?
    /// How long the pipeline played ("Execution ended after H:MM:SS.NNNNNNNNN").
    var playingSeconds: Double?

    /// Frames dropped for lateness anywhere in the pipeline.
    var dropped: Int { max(droppedByElement.values.reduce(0, +), sinkDropped ?? 0) }

    /// Reads the QoS messages, the sink's counts and the running time from `output`.
    init(_ output: String) {
        var messages: [String: Int] = [:]
        for line in output.split(whereSeparator: \.isNewline) {
            if line.hasPrefix("Got message #"), line.contains("(qos): GstMessageQOS") {
                let element = Self.field(line, after: "from element \"", upTo: "\"") ?? "?"
                qosMessages += 1
                messages[element, default: 0] += 1
                // An element that does not count its drops says -1 (the largest guint64): its
                // messages are counted instead.
                let count = Self.field(line, after: "dropped=(guint64)", upTo: ";").flatMap { Int($0) } ?? messages[element]!
                droppedByElement[element] = max(droppedByElement[element] ?? 0, count)
            } else if let message = Self.field(line, after: "last-message = rendered: ", upTo: nil) {
                let parts = message.split(separator: ",")
                sinkRendered = parts.first.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
                if parts.count > 1, let d = Self.field(parts[1], after: "dropped: ", upTo: nil) { sinkDropped = Int(d.trimmingCharacters(in: .whitespaces)) }
            } else if let time = Self.field(line, after: "Execution ended after ", upTo: nil) {
                playingSeconds = Self.seconds(time)
            }
        }
    }

    /// The text between `start` and `end` (the line's end when nil) in `line`, nil without `start`.
    private static func field<S: StringProtocol>(_ line: S, after start: String, upTo end: String?) -> String? {
        guard let a = line.range(of: start) else { return nil }
        let rest = line[a.upperBound...]
        guard let end else { return String(rest) }
        return rest.range(of: end).map { String(rest[..<$0.lowerBound]) } ?? String(rest)
    }

    /// "0:01:00.001234567" in seconds.
    static func seconds(_ time: String) -> Double? {
        let parts = time.trimmingCharacters(in: .whitespaces).split(separator: ":")
        guard parts.count == 3, let h = Double(parts[0]), let m = Double(parts[1]), let s = Double(parts[2]) else { return nil }
        return h * 3600 + m * 60 + s
    }
}

/// ffmpeg's pace at the end of a layout trial, from its last progress line.
struct FFmpegPace: Equatable {
    /// The output's media time (`time=`).
    var mediaSeconds: Double
    /// `speed=`: media time over ffmpeg's own time since it started.
    var speed: Double

    /// How far ffmpeg's own time ran past the media time: its time (media time over speed) less
    /// the media time.
    var lagSeconds: Double { speed > 0 ? mediaSeconds / speed - mediaSeconds : .infinity }

    /// From ffmpeg's stderr (progress lines end in carriage returns); nil before a line with both.
    init?(_ stderr: String) {
        guard let line = stderr.split(whereSeparator: { $0 == "\r" || $0 == "\n" }).last(where: { $0.contains("time=") && $0.contains("speed=") }),
              let t = line.range(of: "time="), let s = line.range(of: "speed=") else { return nil }
        let time = line[t.upperBound...].prefix { !$0.isWhitespace }
        let speed = line[s.upperBound...].drop { $0 == " " }.prefix { $0.isNumber || $0 == "." }
        guard let media = GStreamerDrops.seconds(String(time)), let x = Double(speed) else { return nil }
        mediaSeconds = media
        self.speed = x
    }

    init(mediaSeconds: Double, speed: Double) {
        self.mediaSeconds = mediaSeconds
        self.speed = speed
    }
}
