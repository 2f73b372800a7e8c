import ArgumentParser
import ScanoutDisplay
import ScanoutMedia
import ScanoutPlayer
import ScanoutPolicy
#if canImport(Glibc)
import Glibc
#endif

struct Play: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Play a file or URL on the best output available, in real time.",
        discussion: "Shows a live progress line and ends with a summary: frames presented and dropped, decode speed, pacing."
    )

    @Argument(help: "File path or URL (may be left out when --token names the URL).") var input: String?
    @Option(help: "Output: auto (best available) or headless.") var output: String = "auto"
    @Flag(help: "Present every frame as fast as it decodes, with no pacing.") var untimed = false
    @Option(help: "Playback rate, 0.25...4.") var rate: Double = 1
    @OptionGroup var options: InputOptions
    @OptionGroup var policy: PolicyOptions

    func validate() throws {
        guard ["auto", "headless"].contains(output) else { throw ValidationError("--output must be auto or headless") }
        guard (0.25...4).contains(rate) else { throw ValidationError("--rate must be within 0.25...4") }
    }

    func run() throws {
        options.installLog()
        installStopSignals()
        if rate > 2 { StandardError.write("scanout: warning: rate \(rate)x is above 2x; frames will be dropped on slow machines\n") }
        try runReporting {
            // The token is verified before playback; its policy is what a KMS output's OutputGuard
            // enforces. The headless output shows nothing on a screen, so nothing is censored there.
            let content = try policy.authorize(input: input)
            let input = content.input
            let choice = OutputSelector.choose(requested: output)
            let reader = try FrameReader(input: input, demuxerOptions: options.demuxer, decoderOptions: options.decoder)
            let v = reader.video
            StandardError.write("playing \(input): \(v.codecName) \(v.width)x\(v.height) \(v.pixelFormat) \(v.frameRate.isValid ? format2(v.frameRate.doubleValue) + " fps" : "")\n")
            StandardError.write("output: \(choice.kind.rawValue) (\(choice.reason))\n")
            StandardError.write(describePolicy(content) + "\n")
            let display = HeadlessDisplay()
            let session = PlaybackSession(reader: reader, display: display, timed: !untimed, rate: rate)
            let line = ProgressLine()
            let stats = try session.run(shouldStop: { interrupted() }) { p in
                line.update(progressText(p))
            }
            line.finish()
            print(summary(stats: stats, display: display))
            if interrupted() { StandardError.write("scanout: stopped by signal\n") }
            if let damage = reader.damage() { throw damage }
        }
    }

    func summary(stats s: PlaybackStats, display: HeadlessDisplay) -> String {
        """
        summary: \(s.framesPresented) frames presented, \(s.framesDropped) dropped, \(s.framesDecoded) decoded, \(s.decodeErrors.errorCount) decode errors
        decode: \(format1(s.decodeFPS)) fps (\(format2(s.decodeSeconds * 1000 / Double(max(s.framesDecoded, 1)))) ms/frame); present: \(format2(s.presentSeconds * 1000 / Double(max(s.framesPresented, 1)))) ms/frame on \(display.description)
        time: \(format2(s.mediaSeconds)) s of media in \(format2(s.wallSeconds)) s\(untimed ? " (untimed)" : "; pacing p50 \(format2(s.pacingPercentile(50))) ms, p99 \(format2(s.pacingPercentile(99))) ms")
        """
    }
}

func progressText(_ p: PlaybackProgress) -> String {
    let dur = p.duration.map { " / " + clockTime($0) } ?? ""
    return "\(clockTime(p.position))\(dur)  frame \(p.stats.framesPresented)  dropped \(p.stats.framesDropped)  decode \(format1(p.stats.decodeFPS)) fps"
}

func clockTime(_ s: Double) -> String {
    let t = max(0, s)
    let m = Int(t) / 60
    let sec = t - Double(m * 60)
    let whole = Int(sec)
    let tenth = Int((sec - Double(whole)) * 10)
    return "\(m < 10 ? "0" : "")\(m):\(whole < 10 ? "0" : "")\(whole).\(tenth)"
}

func format1(_ v: Double) -> String { formatFixed(v, 1) }
func format2(_ v: Double) -> String { formatFixed(v, 2) }

func formatFixed(_ v: Double, _ digits: Int) -> String {
    guard v.isFinite else { return "-" }
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let r = (v * scale).rounded() / scale
    var s = String(r)
    if let dot = s.firstIndex(of: ".") {
        let decimals = s.distance(from: dot, to: s.endIndex) - 1
        if decimals < digits { s += String(repeating: "0", count: digits - decimals) }
    } else if digits > 0 {
        s += "." + String(repeating: "0", count: digits)
    }
    return s
}

/// A status line on stderr: rewritten in place on a terminal, one line a second otherwise.
final class ProgressLine {
    private let tty = isatty(2) != 0
    private var lastPlain: UInt64 = 0
    private var shown = false

    func update(_ text: String) {
        if tty {
            StandardError.write("\r\u{1B}[K" + text)
            shown = true
        } else {
            let now = monotonicNanoseconds()
            if now - lastPlain >= 1_000_000_000 {
                lastPlain = now
                StandardError.write(text + "\n")
            }
        }
    }

    func finish() {
        if tty && shown { StandardError.write("\n") }
    }
}

nonisolated(unsafe) private var stopRequested: sig_atomic_t = 0

/// Installs SIGINT/SIGTERM handlers that ask playback to stop at the next frame.
func installStopSignals() {
    signal(SIGINT) { _ in stopRequested = 1 }
    signal(SIGTERM) { _ in stopRequested = 1 }
}

func interrupted() -> Bool { stopRequested != 0 }
