import CFFmpeg
import CScanoutShims
import Synchronization
import ScanoutCore

/// Where FFmpeg's own log lines go.
///
/// By default libav* prints nothing: Scanout reports errors itself, one line each. `--verbose`
/// raises the level so that FFmpeg's warnings reach stderr with their context ("[h264] ...").
/// Lines at error level from a decoder are also counted, because that is how libavcodec reports
/// concealed bitstream errors that its API calls do not return.
public enum FFmpegLog {
    public enum Level: Int32, Sendable, Comparable {
        case quiet = -8, panic = 0, fatal = 8, error = 16, warning = 24, info = 32, verbose = 40, debug = 48
        public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }
    }

    private static let printLevel = Atomic<Int32>(Level.quiet.rawValue)

    private static let installed = Atomic<Bool>(false)

    /// Installs the sink. Lines at `level` or more severe are printed on stderr; error lines
    /// are always seen so that decoders can count them.
    public static func install(printing level: Level = .quiet) {
        printLevel.store(level.rawValue, ordering: .relaxed)
        installed.store(true, ordering: .relaxed)
        scanout_install_log_sink(sink, max(level.rawValue, Level.error.rawValue))
    }

    /// Installs the sink at its quiet default unless `install(printing:)` already ran.
    package static func ensureInstalled() {
        if installed.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged {
            scanout_install_log_sink(sink, Level.error.rawValue)
        }
    }

    /// Whether a line at `level` is printed now: the libraries beside FFmpeg (libass) follow the
    /// level `install(printing:)` set, so that one switch (`--verbose`; quiet otherwise) rules them all.
    public static func prints(_ level: Level) -> Bool {
        level.rawValue <= printLevel.load(ordering: .relaxed)
    }

    /// Prints `line`, a message of `library` at `level`, on stderr as FFmpeg's lines are printed,
    /// when that level is printed now (`prints`). Safe from any thread.
    public static func write(_ line: String, from library: String, level: Level) {
        guard prints(level) else { return }
        StandardError.write(URLRedaction.redact("\(library): \(line)\n"))
    }

    private static let sink: scanout_log_sink = { level, context, line, owner in
        if level <= Level.error.rawValue, let owner, let line {
            Unmanaged<ErrorLines>.fromOpaque(owner).takeUnretainedValue().add(String(cString: line))
        }
        guard level <= FFmpegLog.printLevel.load(ordering: .relaxed), let line else { return }
        let ctx = context.map { String(cString: $0) } ?? ""
        let text = ctx.isEmpty ? "ffmpeg: \(String(cString: line))\n" : "ffmpeg [\(ctx)]: \(String(cString: line))\n"
        // FFmpeg names the URLs it opens: their userinfo is redacted as in the service's lines.
        StandardError.write(URLRedaction.redact(text))
    }
}

/// The error lines one codec or format context (and a codec's frame-threading copies) logs:
/// their count and the last one. The context's `opaque` points at it. Behind a mutex because
/// libavcodec logs from its worker threads.
///
/// It also carries why a hardware decoder's `get_format` refused the stream: `opaque` is the one
/// slot a codec callback can reach, so the refusal rides with the error lines.
package final class ErrorLines: Sendable {
    package init() {}
    private let state = Mutex<(count: Int, missingReferences: Int, last: String?)>((0, 0, nil))
    private let refusal = Mutex<String?>(nil)
    package func add(_ line: String) {
        let missing = Self.missingReferencePhrases.contains { line.contains($0) }
        state.withLock { $0.count += 1; $0.missingReferences += missing ? 1 : 0; $0.last = line }
    }
    package var count: Int { state.withLock { $0.count } }
    /// Lines about reference pictures the decoder does not hold (counted in `count` too).
    package var missingReferences: Int { state.withLock { $0.missingReferences } }
    /// How libavcodec's H.264 and HEVC decoders say that a picture names a reference they do not
    /// hold, which is what decoding from a keyframe that is not an IDR (an open GOP) meets.
    package static let missingReferencePhrases = [
        "mmco: unref short failure", "reference picture missing during reorder", "Missing reference picture",
        "co located POCs unavailable", "Could not find ref with POC",
    ]
    package var last: String? { state.withLock { $0.last } }
    /// Records why `get_format` chose no hardware format.
    package func refuse(_ reason: String) { refusal.withLock { $0 = reason } }
    package var formatRefusal: String? { refusal.withLock { $0 } }
}

/// Unbuffered writes to stderr, safe from any thread.
public enum StandardError {
    public static func write(_ text: String) {
        var t = text
        t.withUTF8 { buf in
            var off = 0
            while off < buf.count {
                let n = unistd_write(2, buf.baseAddress! + off, buf.count - off)
                if n <= 0 { break }
                off += n
            }
        }
    }
}

#if canImport(Glibc)
import Glibc
@inline(__always) func unistd_write(_ fd: Int32, _ p: UnsafeRawPointer, _ n: Int) -> Int { Glibc.write(fd, p, n) }
#elseif canImport(Darwin)
import Darwin
@inline(__always) func unistd_write(_ fd: Int32, _ p: UnsafeRawPointer, _ n: Int) -> Int { Darwin.write(fd, p, n) }
#endif
