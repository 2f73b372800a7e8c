import ArgumentParser
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ScanoutPolicy
import ScanoutRender

struct FrameMD5: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "framemd5",
        abstract: "Print one MD5 per decoded frame in ffmpeg's framemd5 layout.",
        discussion: "The md5 column equals `ffmpeg -i INPUT -map 0:v:0 -f framemd5 -` frame for frame; of an HLS master playlist one variant is read (the first, as -map 0:v:0 does; --variant or --max-height chooses another)."
    )

    @Argument(help: "File path or URL, - for standard input (may be left out when --token names the URL).") var input: String?
    @Option(name: [.customShort("o"), .customLong("out")], help: "File to write instead of stdout.") var output: String?
    @OptionGroup var oldOutput: DeprecatedOutputOption
    @Flag(help: "Hash frames as stored, ignoring rotation metadata (ffmpeg's -noautorotate).") var noAutorotate = false
    @Option(help: "Only these frames, numbers and ranges (10-19 or 0,50-59): their lines are the same lines of the full output, found through the frame index (a seek to the first, not a decode from the start).")
    var frames: String?
    @OptionGroup var options: InputOptions
    @OptionGroup var variant: VariantOptions
    @OptionGroup var policy: PolicyOptions

    func validate() throws {
        if try parseFrameList(frames).contains(where: { $0 < 0 }) { throw ValidationError("--frames: frame numbers start at 0") }
        try oldOutput.check(beside: output, newSpelling: "-o/--out")
        try variant.check(with: options)
    }

    func run() throws {
        options.installLog()
        try runReporting {
            // Before anything is opened or written: content whose policy denies capture is refused.
            let content = try policy.authorize(input: input, capture: .file)
            if content.authorization.token != nil { StandardError.write(describePolicy(content.authorization) + "\n") }
            let input = mediaInput(content.input)
            let output = oldOutput.value(output, newSpelling: "-o/--out", command: "framemd5") ?? "-"
            let demuxerOptions = variant.demuxer(options)
            let wanted = frames == nil ? nil : Array(Set(try parseFrameList(frames))).sorted()
            if let wanted, input != standardInput {
                // Standard input cannot seek back to the index's keyframes: it is read forward.
                let seeker = try FrameSeeker(input: input, demuxerOptions: demuxerOptions, decoderOptions: options.decoder)
                variant.announce(seeker.reader.demuxer, quiet: options.quiet)
                var hashes = try hasher(seeker.reader, output: output, total: wanted.count)
                try hashes.run { emit in
                    for n in wanted { try emit(try seeker.frame(n), n) }
                }
                if let damage = seeker.reader.damage() { throw damage }
                return
            }
            let reader = try FrameReader(input: input, demuxerOptions: demuxerOptions, decoderOptions: options.decoder)
            variant.announce(reader.demuxer, quiet: options.quiet)
            var hashes = try hasher(reader, output: output, total: wanted?.count ?? reader.video.declaredFrameCount)
            try hashes.run { emit in
                let frame = VideoFrame()
                var n = 0
                let last = wanted?.last ?? Int.max
                var next = wanted?.makeIterator()
                var due = next?.next()
                while n <= last, try reader.next(into: frame) {
                    if wanted == nil || due == n {
                        try emit(frame, n)
                        due = next?.next()
                    }
                    n += 1
                }
                if let due { throw MediaError.frameOutOfRange(input: input, requested: due, frameCount: n) }
            }
            if wanted == nil, let damage = reader.damage() { throw damage }
        }
    }

    private func hasher(_ reader: FrameReader, output: String, total: Int?) throws -> FrameHasher {
        FrameHasher(output: try TextOutput(path: output), input: reader.input,
                    checksum: FrameChecksum(video: reader.video, formatStartTime: reader.demuxer.formatStartTime),
                    orientation: noAutorotate ? Orientation.identity : reader.video.orientation,
                    progress: ProgressLine(quiet: options.quiet, terminalOnly: true), total: total)
    }
}

/// Writes the framemd5 text of the frames it is handed: the header before the first, one line
/// per frame, the progress line meanwhile.
struct FrameHasher {
    let output: TextOutput
    let input: String
    var checksum: FrameChecksum
    let orientation: Orientation
    let progress: ProgressLine
    let total: Int?

    /// Calls `body` with the function that hashes one frame (the frame, its number); writes what
    /// was hashed even when `body` fails, since those lines say where it stopped.
    mutating func run(_ body: ((VideoFrame, Int) throws -> Void) throws -> Void) throws {
        let start = ClockTime.now()
        var written = 0
        defer { progress.finish() }
        do {
            try body { frame, number in
                let frame = try frame.upright(orientation)
                if written == 0 { try output.write(checksum.header(width: frame.width, height: frame.height, sar: frame.sampleAspectRatio)) }
                // A frame without a timestamp is numbered, as the ffmpeg tool numbers it.
                try output.write(checksum.line(for: frame, fallbackTimestamp: Int64(number)))
                written += 1
                progress.update(frameProgressText(written, of: total, since: start))
            }
        } catch {
            try? output.close()
            throw error
        }
        try output.close()
        if written == 0 { throw MediaError.noFrames(input: input) }
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
