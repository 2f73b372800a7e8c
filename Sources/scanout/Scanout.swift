import ArgumentParser
import ScanoutMedia
import ScanoutService

@main
struct Scanout: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scanout",
        abstract: "Decode video and put it on a screen with no desktop; exact frames and checksums for tests.",
        discussion: """
        Exit status: 0 success; 1 the job could not be done (bad input, bad option, I/O error); \
        2 the job was done but the input was damaged (errors concealed, truncated data).
        """,
        version: ScanoutVersion.string,
        subcommands: [Play.self, Serve.self, Decode.self, FrameMD5.self, Render.self, Probe.self, Bench.self, Selftest.self],
        defaultSubcommand: nil
    )
}

/// Options every command that reads media shares.
struct InputOptions: ParsableArguments {
    @Option(help: "Seconds to wait for a source that does not answer (open, probe, each read).")
    var timeout: Double = 10

    @Option(help: "Decoding threads (0: one per core).")
    var threads: Int = 0

    @Flag(name: .shortAndLong, help: "Print FFmpeg's warnings and errors as they happen.")
    var verbose = false

    var demuxer: DemuxerOptions { DemuxerOptions(timeoutSeconds: timeout) }
    var decoder: DecoderOptions { DecoderOptions(threads: threads) }

    func installLog() {
        FFmpegLog.install(printing: verbose ? .warning : .quiet)
    }

    func validate() throws {
        guard timeout > 0 else { throw ValidationError("--timeout must be above 0") }
        guard threads >= 0 && threads <= 64 else { throw ValidationError("--threads must be 0...64") }
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
        StandardError.write("scanout: \(m.description)\n")
        switch m {
        case .corruptBitstream, .truncated, .damagedPackets: return ExitCode(Exit.damaged)
        default: return ExitCode(Exit.failure)
        }
    }
    StandardError.write("scanout: \(error)\n")
    return ExitCode(Exit.failure)
}

/// Runs `body`, turning thrown errors into one stderr line and an exit status.
func runReporting(_ body: () throws -> Void) throws {
    do { try body() } catch { throw fail(error) }
}
