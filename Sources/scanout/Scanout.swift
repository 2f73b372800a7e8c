import ArgumentParser
import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ScanoutService

/// Synchronous at the root on purpose: every command but `serve` runs on the main thread, which
/// may block (decode loops, waiting for an async step such as token verification) without taking
/// a thread from Swift's concurrency pool, which has one thread per core: on a one-core machine a
/// command blocking a pool thread would wait for work that can never run.
@main
struct Scanout: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scanout",
        abstract: "Decode video and put it on a screen with no desktop; exact frames and checksums for tests.",
        discussion: """
        Exit status: 0 success; 1 the job could not be done (bad input, I/O error, or a usage error: \
        an unknown option, a bad value); 2 the job was done but the input was damaged (errors \
        concealed, truncated data); 130 or 143 `play` stopped by SIGINT or SIGTERM (screen restored, \
        summary printed).
        """,
        version: ScanoutVersion.string,
        subcommands: [Play.self, Serve.self, Decode.self, FrameMD5.self, Render.self, Probe.self, Bench.self, ScheduleCommand.self, SnapshotCommand.self, Selftest.self],
        defaultSubcommand: nil
    )

    /// ArgumentParser's `main`, except for the status of usage errors (an unknown option, a bad
    /// value, a failed `validate()`): 1, as the help and README document, instead of
    /// ArgumentParser's EX_USAGE (64). The message and usage hint are printed as ArgumentParser
    /// prints them.
    static func main() {
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch {
            if exitCode(for: error) == .validationFailure {
                StandardError.write(fullMessage(for: error) + "\n")
                Foundation.exit(Exit.failure)
            }
            exit(withError: error)
        }
    }
}

/// Options every command that reads media shares.
struct InputOptions: ParsableArguments {
    @Option(help: "Seconds to wait for a source that does not answer (open, probe, each read).")
    var timeout: Double = 10

    @Option(help: "Decoding threads (0: one per core).")
    var threads: Int = 0

    @Flag(name: .shortAndLong, help: "Print FFmpeg's warnings and errors as they happen, and the decoder decision.")
    var verbose = false

    @Flag(name: .shortAndLong, help: "No progress line (shown only when stderr is a terminal, except by play).")
    var quiet = false

    @Option(help: "Decoder: auto (native, then hw, then sw, the first available), native, hw (VA-API or NVDEC), sw. Wins over the input's ?playerType= hint.")
    var playerType: PlayerType = .auto

    @Option(help: "Hardware decoder for hw: auto (VA-API where a render node works, else NVDEC where CUDA initialises), vaapi, nvdec.")
    var hwBackend: HardwareBackend = .auto

    @Option(help: "Render node for VA-API (default: the first /dev/dri/renderD* that initialises, vgem skipped), or a CUDA device number for NVDEC (default 0).")
    var device: String?

    @Option(help: "Consecutive hardware decode errors after which decoding switches to software.")
    var fallbackAfter: Int = 3

    @Flag(help: "With --player-type hw or native: fail (exit 1) instead of falling back to software.")
    var noFallback = false

    @Option(help: "UDP/RTP inputs: the interface to receive on and join the multicast group on (a name, or its IPv4 address).")
    var interface: String?

    @Option(name: .customLong("ssm-source"), help: "UDP/RTP inputs: receive only from this sender (source-specific multicast); repeatable.")
    var ssmSources: [String] = []

    @Option(help: "UDP/RTP inputs: seconds without a packet before the source counts as gone.")
    var liveTimeout: Double = 5

    @Option(help: "HLS: play no variant taller than this many pixels.")
    var maxHeight: Int?

    @Option(help: "HLS: play no variant whose advertised bitrate exceeds this many bits a second.")
    var maxBitrate: Int?

    @Option(help: "HLS: the bandwidth assumed before the first segment is measured, bits a second (picks the start variant).")
    var initialBandwidth: Int = AdaptiveOptions().initialBandwidth

    @Option(help: "HLS live: start this many segments from the live edge (negative).")
    var liveStartIndex: Int = AdaptiveOptions().liveStartIndex

    @Option(help: "Network inputs with an end (HTTP files, HLS VOD): seconds of media read ahead on a thread of their own (0: off). When it runs dry playback pauses, not drops.")
    var readAhead: Double = ReadAheadOptions().seconds

    @Option(help: "After the read-ahead ran dry, resume once this many seconds of media are held again (or the input ended).")
    var resumeAfter: Double = ReadAheadOptions().resumeSeconds

    var demuxer: DemuxerOptions {
        var d = DemuxerOptions(timeoutSeconds: timeout, live: LiveInputOptions(interface: interface, sources: ssmSources, timeoutSeconds: liveTimeout),
                               adaptive: AdaptiveOptions(initialBandwidth: initialBandwidth, maxHeight: maxHeight, maxBitrate: maxBitrate,
                                                         liveStartIndex: liveStartIndex))
        d.readAhead = ReadAheadOptions(enabled: readAhead > 0, seconds: max(readAhead, 0.1), resumeSeconds: max(resumeAfter, 0))
        return d
    }

    /// The decoding options, with the faults of `SCANOUT_FAULTS` and an observer that prints
    /// each fallback (always) and the decision (with --verbose) as one stderr line.
    var decoder: DecoderOptions {
        get throws { try decoder(nativePlane: .unavailable("no KMS display")) }
    }

    /// The decoding options, with what the output says of `native` (a KMS display with planes).
    func decoder(nativePlane: Capability) throws -> DecoderOptions {
        do {
            let faults = try FaultPlan.fromEnvironment(ProcessInfo.processInfo.environment)
            let verbose = self.verbose
            return DecoderOptions(threads: threads, playerType: playerType,
                                  fallbackAfter: fallbackAfter, allowFallback: !noFallback,
                                  environment: SelectorEnvironment(nativePlane: nativePlane, device: device, hwBackend: hwBackend, faults: faults)) { event in
                switch event {
                case .selected(let decision):
                    if verbose { StandardError.write("scanout: \(decision)\n") }
                case .decoderFallback(let f):
                    StandardError.write("scanout: \(f)\n")
                }
            }
        }
    }

    func installLog() {
        FFmpegLog.install(printing: verbose ? .warning : .quiet)
    }

    func validate() throws {
        guard timeout > 0 else { throw ValidationError("--timeout must be above 0") }
        guard liveTimeout >= 1 else { throw ValidationError("--live-timeout must be 1 or more") }
        guard threads >= 0 && threads <= 64 else { throw ValidationError("--threads must be 0...64") }
        guard fallbackAfter >= 1 else { throw ValidationError("--fallback-after must be 1 or more") }
        guard readAhead >= 0 && readAhead <= 3600 else { throw ValidationError("--read-ahead must be 0...3600 seconds (0: off)") }
        guard resumeAfter >= 0 && resumeAfter <= 600 else { throw ValidationError("--resume-after must be 0...600 seconds") }
        if noFallback && playerType != .hw && playerType != .native {
            throw ValidationError("--no-fallback needs --player-type hw or native")
        }
    }
}

/// Exit codes, as documented in the command's help.
enum Exit {
    static let failure: Int32 = 1
    static let damaged: Int32 = 2
}

/// Prints the error as one line and exits with the matching status.
func fail(_ error: any Error) -> ExitCode {
    if let e = error as? ExitCode { return e }
    if let m = error as? MediaError {
        StandardError.write("scanout: \(m.description)\(pipeHint(m))\n")
        switch m {
        case .corruptBitstream, .truncated, .damagedPackets: return ExitCode(Exit.damaged)
        default: return ExitCode(Exit.failure)
        }
    }
    StandardError.write("scanout: \(error)\n")
    return ExitCode(Exit.failure)
}

/// Why standard input may fail where the file would not: it cannot seek back, and an MP4 or MOV
/// whose index (moov) comes after the frames cannot be read from it.
func pipeHint(_ error: MediaError) -> String {
    switch error {
    case .readFailed(standardInput, _), .openFailed(standardInput, _):
        "; standard input cannot seek back: an MP4 or MOV read from it needs its index at the start (ffmpeg -movflags +faststart)"
    default: ""
    }
}

/// Runs `body`, turning thrown errors into one stderr line and an exit status.
func runReporting(_ body: () throws -> Void) throws {
    do { try body() } catch { throw fail(error) }
}
