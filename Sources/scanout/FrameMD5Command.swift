import ArgumentParser
import ScanoutMedia
import ScanoutPolicy
import ScanoutRender

struct FrameMD5: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "framemd5",
        abstract: "Print one MD5 per decoded frame in ffmpeg's framemd5 layout.",
        discussion: "The md5 column equals `ffmpeg -i INPUT -map 0:v:0 -f framemd5 -` frame for frame."
    )

    @Argument(help: "File path or URL, - for standard input (may be left out when --token names the URL).") var input: String?
    @Option(name: [.customShort("o"), .customLong("out")], help: "File to write instead of stdout.") var output: String = "-"
    @Flag(help: "Hash frames as stored, ignoring rotation metadata (ffmpeg's -noautorotate).") var noAutorotate = false
    @OptionGroup var options: InputOptions
    @OptionGroup var policy: PolicyOptions

    func run() throws {
        options.installLog()
        try runReporting {
            // Before anything is opened or written: content whose policy denies capture is refused.
            let content = try policy.authorize(input: input, capture: .file)
            if content.authorization.token != nil { StandardError.write(describePolicy(content.authorization) + "\n") }
            let input = mediaInput(content.input)
            let reader = try FrameReader(input: input, demuxerOptions: options.demuxer, decoderOptions: options.decoder)
            var checksum = FrameChecksum(video: reader.video, formatStartTime: reader.demuxer.formatStartTime)
            let out = try TextOutput(path: output)
            let frame = VideoFrame()
            let orientation = noAutorotate ? Orientation.identity : reader.video.orientation
            var n: Int64 = 0
            let progress = ProgressLine(quiet: options.quiet, terminalOnly: true)
            let start = monotonicNanoseconds()
            defer { progress.finish() }
            do {
                while try reader.next(into: frame) {
                    let frame = try frame.upright(orientation)
                    if n == 0 { try out.write(checksum.header(width: frame.width, height: frame.height, sar: frame.sampleAspectRatio)) }
                    try out.write(checksum.line(for: frame, fallbackTimestamp: n))
                    n += 1
                    progress.update(frameProgressText(Int(n), of: reader.video.declaredFrameCount, since: start))
                }
            } catch {
                // The frames hashed before the failure are written: they say where it stopped.
                try? out.close()
                throw error
            }
            try out.close()
            if n == 0 { throw MediaError.noFrames(input: input) }
            if let damage = reader.damage() { throw damage }
        }
    }
}

/// Buffered text to a file or stdout through `writeFile`'s AVIO path.
final class TextOutput {
    private let path: String
    private var pending: [UInt8] = []
    private let writer: RawBytesWriter

    init(path: String) throws {
        self.path = path
        writer = try RawBytesWriter(path: path)
    }

    func write(_ s: String) throws {
        pending.append(contentsOf: s.utf8)
        if pending.count > 1 << 16 { try flush() }
    }

    func flush() throws {
        try writer.write(pending)
        pending.removeAll(keepingCapacity: true)
    }

    func close() throws {
        try flush()
        try writer.close()
    }
}
