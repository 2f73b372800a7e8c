import ArgumentParser
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ScanoutPolicy
import ScanoutRender

struct Decode: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Decode every frame to raw planar video (.yuv) or YUV4MPEG2 (.y4m).",
        discussion: "Frames are written in the stream's pixel format unless --pixel-format names another (converted bit-exactly with libswscale). Of an HLS master playlist one variant is read (the first, as ffmpeg -map 0:v:0 does; --variant or --max-height chooses another)."
    )

    @Argument(help: "File path or URL, - for standard input (may be left out when --token names the URL).") var input: String?
    @Option(name: [.customShort("o"), .customLong("out")], help: "File to write: .y4m for YUV4MPEG2, anything else raw; '-' for stdout (raw, or Y4M with --y4m).")
    var output: String?
    @OptionGroup var oldOutput: DeprecatedOutputOption
    @Option(help: "Pixel format of the output (ffmpeg's names: yuv420p, nv12, yuv420p10le, ...).")
    var pixelFormat: String?
    @Flag(help: "Write YUV4MPEG2 to stdout when --output is '-'.") var y4m = false
    @Option(help: "Stop after this many frames.") var frames: Int?
    @Flag(help: "Write frames as stored, ignoring rotation metadata (ffmpeg's -noautorotate).") var noAutorotate = false
    @OptionGroup var options: InputOptions
    @OptionGroup var variant: VariantOptions
    @OptionGroup var policy: PolicyOptions

    func validate() throws {
        try oldOutput.check(beside: output, newSpelling: "-o/--out")
        if output == nil && oldOutput.legacy == nil { throw ValidationError("give the file to write: -o/--out FILE (- for stdout)") }
        try variant.check(with: options)
    }

    func run() throws {
        options.installLog()
        try runReporting {
            // Before anything is opened or written: content whose policy denies capture is refused.
            let content = try policy.authorize(input: input, capture: .file)
            if content.authorization.token != nil { StandardError.write(describePolicy(content.authorization) + "\n") }
            let input = mediaInput(content.input)
            let output = oldOutput.value(output, newSpelling: "-o/--out", command: "decode") ?? "-"
            var target: PixelFormat?
            if let name = pixelFormat {
                guard let f = PixelFormat(name: name) else { throw MediaError.unsupportedPixelFormat(name: name) }
                target = f
            }
            let reader = try FrameReader(input: input, demuxerOptions: variant.demuxer(options), decoderOptions: options.decoder)
            variant.announce(reader.demuxer, quiet: options.quiet)
            let scaler = Scaler()
            let converted = VideoFrame()
            let frame = VideoFrame()
            var writer: (any FrameWriter)?
            let orientation = noAutorotate ? Orientation.identity : reader.video.orientation
            var count = 0
            let path = (output == "-" && y4m) ? "pipe:.y4m" : output
            let progress = ProgressLine(quiet: options.quiet, terminalOnly: true)
            let start = ClockTime.now()
            defer { progress.finish() }
            let total = frames.map { min($0, reader.video.declaredFrameCount ?? $0) } ?? reader.video.declaredFrameCount
            while count < (frames ?? Int.max), try reader.next(into: frame) {
                var out = try frame.upright(orientation)
                if let target, target != frame.pixelFormat {
                    try scaler.convert(out, to: target, into: converted)
                    out = converted
                }
                if writer == nil {
                    writer = try makeFrameWriter(path: path == "pipe:.y4m" ? "-.y4m" : path, video: reader.video, firstFrame: out)
                }
                try writer!.write(out)
                count += 1
                progress.update(frameProgressText(count, of: total, since: start))
            }
            try writer?.finish()
            progress.finish()
            if count == 0 { throw MediaError.noFrames(input: input) }
            // Damage is reported in its own single line instead of the summary.
            if let damage = reader.damage() { throw damage }
            StandardError.write("decoded \(count) frame\(count == 1 ? "" : "s") of \(reader.video.codecName) \(reader.video.width)x\(reader.video.height) to \(output)\n")
        }
    }
}
