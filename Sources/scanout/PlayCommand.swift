import ArgumentParser
import ScanoutDisplay
import ScanoutKMS
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ScanoutPipeline
import ScanoutPlayer
import ScanoutPolicy
import ScanoutRender
#if canImport(Glibc)
import Glibc
#endif

struct Play: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Play a file or URL on the best output available, in real time.",
        discussion: "Shows a live progress line and ends with a summary: frames presented and dropped, decode speed, pacing."
    )

    @Argument(help: "File path or URL, - for standard input (may be left out when --token names the URL).") var input: String?
    @Option(help: "Output: auto (a KMS screen when one is connected, else headless), kms or headless.") var output: OutputOption = .auto
    @Option(help: "KMS: the card to show on, e.g. /dev/dri/card0 (default: the first with a connected screen). --device names the VA-API render node.") var card: String?
    @Option(help: "KMS: a connector to show on, e.g. HDMI-A-1 (repeat for several; default: every connected one).")
    var connector: [String] = []
    @Option(help: "KMS: the mode, WIDTHxHEIGHT or WIDTHxHEIGHT@REFRESH (default: each screen's preferred mode).") var mode: String?
    @Option(help: "Who draws the frames: auto, gl or cpu. KMS auto: GLES, else CPU. Headless auto: GLES on a GPU, the CPU when GLES is a software rasteriser (llvmpipe) or unavailable.")
    var renderer: RendererOption = .auto
    @Option(help: "Headless GL: the EGL platform: auto (surfaceless, else the EGL device platform, else the default display), surfaceless, device or default.")
    var eglPlatform: EGLPlatformOption = .auto
    @Option(help: "KMS: HDR content: auto (HDR on a screen whose EDID declares the content's EOTF, tone mapped to SDR elsewhere) or off (always tone mapped).")
    var hdr: HDROutputMode = .auto
    @Option(help: "KMS: the most bits a channel asked of the link for HDR, 10...16 (lowered to 10 when the link refuses).") var maxBpc: Int = 10
    @Option(help: ArgumentHelp("HDR content drawn in SDR (headless, an SDR screen, --hdr off): tone mapped with this curve (hable, mobius, reinhard, clip, linear, bt2390), or none.", valueName: "curve"))
    var tonemap: ToneMapOption = .curve(.hable)
    @Option(help: "KMS: scaling: fit, fill, stretch or none.") var scale: ScalingMode = .fit
    @Option(help: "KMS: background colour RRGGBB around the picture.") var background: String = "000000"
    @Option(help: "KMS: capture every frame shown through the writeback connector into DIR (capture-NNNNNN.png). Frames are then shown once each, paced by the display, not the clock.")
    var capture: String?
    @Flag(help: "Present every frame as fast as it decodes, with no pacing.") var untimed = false
    @Option(help: "Playback rate, 0.25...4.") var rate: Double = 1
    @Option(help: "Seconds a still image (PNG, JPEG, WebP...) is shown.") var duration: Double = PlayerConfiguration.defaultImageDuration
    @Option(help: "A screen layout (JSON): zones, each playing its own playlist, composed on one screen.") var layout: String?
    @OptionGroup var overlay: OverlayOptions
    @OptionGroup var audio: AudioOptions
    @OptionGroup var subtitles: SubtitleOptions
    @OptionGroup var options: InputOptions
    @OptionGroup var policy: PolicyOptions
    @OptionGroup var channelList: ChannelOptions

    func validate() throws {
        if channelList.channels != nil && input != nil { throw ValidationError("give an input or --channels, not both") }
        if layout != nil && (input != nil || channelList.channels != nil) { throw ValidationError("--layout plays the zones' playlists: no input and no --channels") }
        guard (0.25...4).contains(rate) else { throw ValidationError("--rate must be within 0.25...4") }
        guard duration > 0, duration.isFinite else { throw ValidationError("--duration: seconds, more than 0") }
        guard RGBColor(hex: background) != nil else { throw ValidationError("--background: RRGGBB, e.g. 000000") }
        guard (10...16).contains(maxBpc) else { throw ValidationError("--max-bpc: 10...16") }
        if capture != nil && output == .headless { throw ValidationError("--capture needs a KMS output with a writeback connector") }
    }

    /// The output as the options describe it; the pipeline opens it.
    var outputSettings: OutputSettings {
        var o = OutputSettings(kind: OutputSettings.Kind(rawValue: output.rawValue)!, card: card, connectors: connector, mode: mode,
                       renderer: renderer.kms, eglPlatforms: eglPlatform.platform.map { [$0] } ?? HeadlessPlatform.allCases,
                       composition: Composition(scaling: scale, background: RGBColor(hex: background)!), capture: capture != nil)
        o.hdr = HDRSettings(mode: hdr, maxBPC: maxBpc, toneMapping: tonemap.mapping)
        return o
    }

    /// Plays through the player's engine, as `serve` does: the engine opens the item, shows its
    /// frames, plays its sound and subtitles, waits for the network, and falls back; this
    /// command parses, opens the output, runs the engine on this thread and prints.
    func run() throws {
        options.installLog()
        installStopSignals()
        try runReporting {
            if let layout { return try playLayout(layout) }
            // The token is verified before anything is shown; its policy is what each KMS output's
            // OutputGuard enforces, frame by frame.
            let item = try policy.authorize(input: try channelList.url(timeout: options.timeout) ?? input, capture: capture != nil ? .writeback : nil)
            let input = mediaInput(item.input)
            // Read before a screen is taken over, so that a bad image fails with the screen untouched.
            let logo = try overlay.load()
            let pipeline = try PlaybackPipeline.open(outputSettings) { StandardError.write($0 + "\n") }
            defer { if let report = pipeline.close() { StandardError.write("output: \(report)\n") } }
            let engine = pipeline.engine(configuration: try configuration(pipeline: pipeline, overlay: logo)) { reportPlayerEvent($0) }
            defer { if let line = audioSummary(engine.audio) { print(line) } }
            try engine.setRate(rate)
            let resume = format1(options.demuxer.readAhead.resumeSeconds)
            engine.onReadAheadWait = { waiting, level in
                StandardError.write(waiting ? "buffering: \(level.waitReason(source: URLRedaction.redact(input))); waiting for \(resume) s\n"
                                            : "buffering: resumed with \(format1(level.seconds)) s held\n")
            }
            engine.presentLog = try audio.presentLog.map { path in
                do { return try PresentLog(path: path, kms: pipeline.kms) } catch { throw ValidationError("--present-log: \(error)") }
            }
            report(pipeline)
            // The policy on every screen, every frame: the guard says show or censor per output.
            pipeline.apply(policy: item.policy)
            if let dir = capture { try pipeline.capture(to: dir) }
            let reader = try load(PlaylistItem(source: input, contentHint: item.contentHint), on: engine)
            let v = reader.video
            StandardError.write("playing \(input): \(v.codecName) \(v.width)x\(v.height) \(v.pixelFormat) \(v.frameRate.isValid ? format2(v.frameRate.doubleValue) + " fps" : "")\n")
            StandardError.write(describePolicy(item.authorization) + "\n")
            let line = ProgressLine(quiet: options.quiet)
            let cpuBefore = selfUsage().cpu
            let stats = try engine.run(shouldStop: { interrupted() || pipeline.captureError != nil }) { p in
                line.update(progressText(p))
            }
            line.finish()
            if let captureError = pipeline.captureError { throw captureError }
            // The sound plays to its last sample.
            if !interrupted() { engine.waitForTheSound(shouldStop: interrupted) }
            printSummary(stats, pipeline: pipeline, reader: engine.currentItem?.reader ?? reader, cpuSeconds: selfUsage().cpu - cpuBefore)
            if let status = signalExitStatus() {
                // The screen is restored (the defer above) and the summary printed; the status
                // is the one a shell expects of a program a signal stopped.
                StandardError.write("scanout: stopped by signal\n")
                throw ExitCode(status)
            }
            if let damage = (engine.currentItem?.reader ?? reader).damage() { throw damage }
        }
    }

    /// The engine's settings as the options give them, on `pipeline`'s output.
    func configuration(pipeline: PlaybackPipeline, overlay logo: Overlay?) throws -> PlayerConfiguration {
        var c = PlayerConfiguration()
        // On a screen, and headless with the GLES renderer, hardware frames stay in GPU memory
        // (a plane or the GLES renderer takes them as they are; the CPU renderer downloads
        // them); every copy between CPU and GPU memory is counted for the summary.
        c.decoder = try options.decoder(nativePlane: pipeline.nativePlane)
        // Audio-only input plays with a still picture (its cover, `--still`, else black).
        c.decoder.stillImage = audio.still
        // A network input with an end is read ahead on a thread of its own; when that runs
        // dry the clock pauses, so no frame is lost to the network.
        c.demuxer = options.demuxer
        // A live input that goes silent fails at its timeout (exit 1), as a file that cannot be read.
        c.waitsOutSilence = false
        c.timed = !untimed && capture == nil
        c.scaling = scale
        c.imageDuration = duration
        c.overlay = logo
        c.audio = try audio.settings()
        c.subtitles = subtitles.selection
        return c
    }

    /// Prints what the outputs report (censored outputs, HDCP), one stderr line each.
    func report(_ pipeline: PlaybackPipeline) {
        pipeline.onReport = { report in
            switch report {
            case let .censored(output, reason): StandardError.write("policy: outputRestricted \(output): \(reason)\n")
            case let .shown(output): StandardError.write("policy: \(output) shows the content again\n")
            case let .hdcpChanged(output, state): StandardError.write("policy: \(output) HDCP \(state.rawValue)\n")
            case let .failed(message): StandardError.write("policy: \(message)\n")
            case .captureFailed: break  // the run stops and throws it
            case .frameCensored: break
            case let .colourChanged(output, colour): StandardError.write("hdr: \(output): \(colour)\n")
            }
        }
    }

    /// Loads `item` on `engine` (opened, its first frame decoded, its sound and subtitles set up)
    /// and returns its reader. Throws what kept it from opening, as the input's own error.
    func load(_ item: PlaylistItem, on engine: PlayerEngine) throws -> FrameReader {
        do {
            try engine.load([item])
        } catch PlayerError.media(_, let e) {
            throw e
        }
        if let e = engine.subtitleFailure { throw e }
        guard let reader = engine.currentItem?.reader else { throw PlayerError.invalidState(command: "play", state: engine.state) }
        return reader
    }

    /// The closing lines on stdout: the summary, the network waits (when read ahead), the
    /// headless renderer, the decoder, the KMS counters.
    func printSummary(_ stats: PlaybackStats, pipeline: PlaybackPipeline, reader: FrameReader, cpuSeconds: Double) {
        print(summary(stats: stats, display: pipeline.display, cpuSeconds: cpuSeconds))
        if reader.readAheadSource != nil {
            print("buffering: \(stats.bufferingWaits) waits for the network, \(format2(stats.bufferingSeconds)) s in all; \(stats.networkLateFrames) frames late from the network shown (timeline moved back)")
        }
        if let headless = pipeline.headlessRenderer, let display = pipeline.display as? HeadlessDisplay {
            print("renderer: \(headless.renderer.detail); \(display.readbacks) readbacks; \(headless.reason)")
        }
        print(decoderLine(reader))
        if let kms = pipeline.kms {
            let c = kms.counters
            print("kms: \(c.composited) composited, \(c.native) native, \(c.nativeRejected) native refused, \(c.flips) flips, \(c.captures) captures, \(c.censored) output frames censored")
        }
    }

    /// The decision in one line, with the mid-stream switch when there was one.
    func decoderLine(_ reader: FrameReader) -> String {
        let decision = reader.decision.map(\.description) ?? "decoder: \(reader.decoder.kind)"
        return decision + (reader.fallback.map { "; then \($0)" } ?? "")
    }

    /// The closing summary. The rates are ones `bench` and ffmpeg's `-benchmark` can be compared
    /// with: frames over wall time, and the process's CPU time (every thread, libavcodec's
    /// included) per frame; the time spent waiting inside the decoder call is not a rate, since
    /// the decoder's threads work outside it.
    func summary(stats s: PlaybackStats, display: any Display, cpuSeconds: Double) -> String {
        let frames = Double(max(s.framesDecoded, 1))
        return """
        summary: \(s.framesPresented) frames presented, \(s.framesDropped) dropped, \(s.framesDecoded) decoded, \(s.decodeErrors.errorCount) decode errors
        rate: \(format1(s.wallSeconds > 0 ? Double(s.framesDecoded) / s.wallSeconds : 0)) fps (frames decoded / wall time), CPU \(format2(cpuSeconds * 1000 / frames)) ms/frame (all threads); waiting on the decoder \(format2(s.decodeSeconds * 1000 / frames)) ms/frame, present \(format2(s.presentSeconds * 1000 / Double(max(s.framesPresented, 1)))) ms/frame on \(display.description)
        time: \(format2(s.mediaSeconds)) s of media in \(format2(s.wallSeconds)) s\(untimed ? " (untimed)" : "; pacing p50 \(format2(s.pacingPercentile(50))) ms, p99 \(format2(s.pacingPercentile(99))) ms")
        copies: \(s.transfers.summary(frames: s.framesPresented))
        """
    }
}

func progressText(_ p: PlaybackProgress) -> String {
    let dur = p.duration.map { " / " + clockTime($0) } ?? ""
    let fps = p.stats.wallSeconds > 0 ? Double(p.stats.framesDecoded) / p.stats.wallSeconds : 0
    return "\(clockTime(p.position))\(dur)  frame \(p.stats.framesPresented)  dropped \(p.stats.framesDropped)  \(format1(fps)) fps"
}

func clockTime(_ s: Double) -> String {
    let t = max(0, s)
    let m = Int(t) / 60
    let sec = t - Double(m * 60)
    let whole = Int(sec)
    let tenth = Int((sec - Double(whole)) * 10)
    return "\(m < 10 ? "0" : "")\(m):\(whole < 10 ? "0" : "")\(whole).\(tenth)"
}

/// A status line on stderr: rewritten in place on a terminal, one line a second otherwise
/// (`terminalOnly`: nothing when stderr is not a terminal); nothing at all when `quiet`.
final class ProgressLine {
    private let tty = isatty(2) != 0
    private let enabled: Bool
    private var lastPlain = ClockTime.zero
    private var lastTTY = ClockTime.zero
    private var shown = false

    init(quiet: Bool = false, terminalOnly: Bool = false) {
        enabled = !quiet && (tty || !terminalOnly)
    }

    private var latest: String?

    func update(_ text: String) {
        guard enabled else { return }
        let now = ClockTime.now()
        if tty {
            latest = text
            // A terminal is redrawn at most ten times a second.
            guard !shown || now - lastTTY >= .milliseconds(100) else { return }
            lastTTY = now
            StandardError.write("\r\u{1B}[K" + text)
            shown = true
        } else if now - lastPlain >= .seconds(1) {
            lastPlain = now
            StandardError.write(text + "\n")
        }
    }

    /// Ends the line on a terminal, showing the last state.
    func finish() {
        if tty && shown { StandardError.write("\r\u{1B}[K" + (latest ?? "") + "\n") }
        shown = false
    }
}

/// "frame 120 / 300 (40%)  95.2 fps" for a job over many frames.
func frameProgressText(_ done: Int, of total: Int?, since start: ClockTime) -> String {
    let seconds = (ClockTime.now() - start).secondsValue
    let fps = seconds > 0 ? Double(done) / seconds : 0
    let of = total.map { $0 > 0 ? " / \($0) (\(min(100, done * 100 / $0))%)" : "" } ?? ""
    return "frame \(done)\(of)  \(format1(fps)) fps"
}

/// The signal that asked playback to stop (SIGINT or SIGTERM), 0 while none has.
nonisolated(unsafe) private var stopSignal: sig_atomic_t = 0

/// Installs SIGINT/SIGTERM handlers that ask playback to stop at the next frame, and unblocks the
/// two signals (a blocked mask is inherited from the parent across exec, and would keep them from
/// ever arriving).
func installStopSignals() {
    signal(SIGINT) { stopSignal = $0 }
    signal(SIGTERM) { stopSignal = $0 }
    var set = sigset_t()
    sigemptyset(&set)
    sigaddset(&set, SIGINT)
    sigaddset(&set, SIGTERM)
    pthread_sigmask(SIG_UNBLOCK, &set, nil)
}

func interrupted() -> Bool { stopSignal != 0 }

/// 128 + the number of the signal that stopped playback (130 for SIGINT, 143 for SIGTERM), as
/// shells report a program a signal ended; nil when no signal came.
func signalExitStatus() -> Int32? { stopSignal == 0 ? nil : 128 + stopSignal }
