import ArgumentParser
import Foundation
import Logging
import ScanoutDisplay
import ScanoutKMS
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ScanoutPipeline
import ScanoutPlayer
import ScanoutService

struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the player as a service: HTTP/JSON control API, event stream (SSE), Prometheus metrics.",
        discussion: """
        Settings come from the config file (--config, else \(ServiceConfig.defaultFile) when it exists), then \
        from these options. The API listens on 127.0.0.1:PORT and on a Unix socket; requests from other \
        addresses need `Authorization: Bearer TOKEN` (token from the config file or SCANOUT_TOKEN). \
        SIGTERM or SIGINT stop it gracefully. The API is described in docs/openapi.json.
        """
    )

    @Argument(help: "Files or URLs to play (the playlist; replaces the config file's).") var sources: [String] = []
    @Option(help: "Config file (JSON).") var config: String?
    @Option(help: "UDP/RTP inputs: the interface to join multicast groups on (a name or an IPv4 address).") var interface: String?
    @Option(help: "UDP/RTP inputs: seconds without a packet before the service reports the source gone.") var liveTimeout: Double?
    @Option(help: "Channel list: an M3U playlist (a file or an http(s) URL), served by GET /channels and tuned by POST /channel. With no playlist the service starts on the channel tuned last (kept in the state directory), else the list's first.") var channels: String?
    @Flag(help: "Add the sessions announced over SAP (224.2.127.254:9875) to the channel list.") var sap = false
    @Option(help: "HLS: play no variant taller than this many pixels.") var maxHeight: Int?
    @Option(help: "HLS: play no variant whose advertised bitrate exceeds this many bits a second.") var maxBitrate: Int?
    @Option(help: "Address to listen on.") var host: String?
    @Option(help: "TCP port (0: any free port).") var port: Int?
    @Option(help: "Unix socket path.") var socket: String?
    @Flag(help: "Do not listen on a Unix socket.") var noSocket = false
    @Option(help: "Output: auto (a KMS screen when one is connected), kms or headless.", completion: CompletionWords.output) var output: String?
    @Option(help: "Output size for layout, WIDTHxHEIGHT.") var outputSize: String?
    @Option(help: "Headless: pace frames at this refresh rate (Hz), as a screen would.") var outputRefresh: Double?
    @Option(help: "KMS: the mode, WIDTHxHEIGHT or WIDTHxHEIGHT@REFRESH (default: each screen's preferred mode).") var mode: String?
    @Option(help: "KMS: capture every frame shown through the writeback connector into DIR (capture-NNNNNN.png); content whose policy denies capture is refused.")
    var capture: String?
    @Option(help: "Who draws the frames: auto, gl or cpu. KMS auto: GLES, else CPU. Headless auto: GLES on a GPU, the CPU on a software rasteriser (llvmpipe).")
    var renderer: RendererOption = .auto
    @Option(name: .customLong("repeat"), help: "Repeat: none, one or all.", completion: CompletionWords.repeatMode) var repeatMode: String?
    @Option(help: "Image shown when nothing can be played.") var slate: String?
    @Option(help: "ALSA PCM device for the sound (`scanout probe` lists them); none (the default): silent.") var audioDevice: String?
    @Option(help: ArgumentHelp("Write one line per frame shown: its media time (s) and the CLOCK_MONOTONIC ns it was presented at: on KMS the vblank of its page flip (lip-sync measurements).", valueName: "file"))
    var presentLog: String?
    @Option(help: "Audio track by language, in order of preference (comma-separated: de,en), for items that name none.") var alang: String?
    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.", completion: CompletionWords.logLevel) var logLevel: String?
    @Option(help: "Decoder: auto (native, then hw, then sw), native, hw or sw.") var playerType: PlayerType?
    @Option(help: "Hardware decoder for hw: auto (VA-API, else NVDEC), vaapi or nvdec.") var hwBackend: HardwareBackend?
    @Option(help: "Key file that verifies the items' content tokens (default: the config's keys, else $SCANOUT_KEYS).") var keys: String?
    @Flag(help: "Load the playlist without starting it.") var paused = false
    @Option(help: "Directory the playlist position (and the channel tuned last) is kept in, to resume at the same item after a restart (default: $STATE_DIRECTORY, else /var/lib/scanout when writable).")
    var stateDir: String?
    @OptionGroup var overlay: OverlayOptions

    /// The server runs on the concurrency pool; the main thread waits for it to finish.
    func run() throws {
        let command = self
        try waitFor { try await command.serve() }
    }

    func serve() async throws {
        let settings: ServiceConfig
        do {
            settings = try makeConfig()
        } catch {
            StandardError.write("scanout: \(error)\n")
            throw ExitCode(Exit.failure)
        }
        FFmpegLog.install(printing: .quiet)
        let control = LogLevelControl(settings.logLevel)
        let logger = Logger.controlled("scanout", control: control)
        logger.notice("scanout \(ScanoutVersion.string)")
        let w = settings.outputWidth, h = settings.outputHeight
        var configured = OutputSettings(kind: OutputSettings.Kind(rawValue: settings.output) ?? .auto, mode: settings.mode, renderer: renderer.kms,
                                    capture: settings.capture != nil, headlessWidth: w, headlessHeight: h,
                                    headlessRefresh: settings.outputRefresh)
        configured.hdr = settings.hdr
        let output = configured
        let captureDirectory = settings.capture
        let server = ScanoutServer(config: settings, logLevel: control, logger: logger) {
            // Made on the player's thread, which owns the pipeline from then on. A service keeps
            // its API up: an output that cannot be opened is logged, and the headless one used.
            do {
                let pipeline = try PlaybackPipeline.open(output) { logger.notice("\($0)") }
                pipeline.kms?.onOutputsChanged = { logger.notice("output: \($0)") }
                let reportColour = pipeline.kms?.onColourChanged
                pipeline.kms?.onColourChanged = { reportColour?($0, $1); logger.notice("hdr: \($0): \($1)") }
                if let captureDirectory {
                    try pipeline.capture(to: captureDirectory)
                    logger.notice("capture: every frame shown goes to \(captureDirectory)")
                }
                return pipeline
            } catch {
                logger.error("output unavailable (\(error)); playing on the headless output with the CPU renderer")
                return PlaybackPipeline(display: HeadlessDisplay(outputWidth: w, outputHeight: h, refresh: settings.outputRefresh))
            }
        } makeScreenOutput: { layout in
            // A screen of zones (`layout`): opened on its compositor's thread, as a picture's
            // output is opened; one that cannot be opened is logged, and the headless one used.
            do {
                let out = try LayoutOutput.open(output, layout: layout, gl: renderer == .gl) { logger.notice("\($0)") }
                out.pipeline?.kms?.onOutputsChanged = { logger.notice("output: \($0)") }
                out.pipeline?.kms?.onTurnChosen = { name, path in logger.notice("rotation: \(path) on \(name)") }
                if let captureDirectory, let pipeline = out.pipeline {
                    try pipeline.capture(to: captureDirectory)
                    logger.notice("capture: every frame shown goes to \(captureDirectory)")
                }
                return out
            } catch {
                logger.error("output unavailable (\(error)); composing on the headless output with the CPU compositor")
                return try LayoutOutput.open(OutputSettings(kind: .headless, headlessWidth: w, headlessHeight: h), layout: layout, gl: false) { _ in }
            }
        }
        do {
            try await server.run()
        } catch {
            removeOfflineKeyPlaylists()
            logger.critical("\(error)")
            throw ExitCode(Exit.failure)
        }
        removeOfflineKeyPlaylists()
        // Stopped in order: playback ended, listeners drained, the log written (one write(2) per
        // line, nothing buffered). The process ends here, without the exit-time destructors of
        // the C libraries it loaded (Mesa and LLVM through EGL, libva), which ran while threads
        // the runtime keeps (dispatch workers, NIO's event loops) were still alive: about one
        // SIGTERM in ninety crashed there ("corrupted double-linked list", the main thread
        // unmapping in exit, a dispatch worker in free).
        fflush(nil)
        _exit(0)
    }

    /// The config file, then the options; every mistake named by its option or field.
    func makeConfig() throws -> ServiceConfig {
        var c = ServiceConfig()
        if let config {
            c = try ServiceConfig.load(file: config)
        } else if FileManager.default.fileExists(atPath: ServiceConfig.defaultFile) {
            c = try ServiceConfig.load(file: ServiceConfig.defaultFile)
        }
        // After the file: it holds no faults, and loading it must not drop the environment's.
        c.faults = try FaultPlan.fromEnvironment(ProcessInfo.processInfo.environment)
        var o: [String: ConfigValue] = [:]
        if let host { o["host"] = .string(host) }
        if let port { o["port"] = .int(port) }
        if let socket { o["unixSocket"] = .string(socket) }
        if noSocket { o["unixSocket"] = .null }
        if let output { o["output"] = .string(output) }
        if let outputSize { o["outputSize"] = .string(outputSize) }
        if let outputRefresh { o["outputRefresh"] = .number(outputRefresh) }
        if let mode { o["mode"] = .string(mode) }
        if let capture { o["capture"] = .string(capture) }
        if let repeatMode { o["repeat"] = .string(repeatMode) }
        if let slate { o["slate"] = .string(slate) }
        if let audioDevice { o["audioDevice"] = .string(audioDevice) }
        if let presentLog { o["presentLog"] = .string(presentLog) }
        if let alang { o["alang"] = .string(alang) }
        if let interface { o["interface"] = .string(interface) }
        if let liveTimeout { o["liveTimeout"] = .number(liveTimeout) }
        if let maxHeight { o["maxHeight"] = .int(maxHeight) }
        if let maxBitrate { o["maxBitrate"] = .int(maxBitrate) }
        if let image = overlay.image {
            o["overlay"] = .object(["image": .string(image), "opacity": .number(overlay.opacity), "position": .string(overlay.positionText)])
        }
        if let logLevel { o["logLevel"] = .string(logLevel) }
        if paused { o["autoplay"] = .bool(false) }
        if let stateDir { o["stateDir"] = .string(stateDir.hasPrefix("/") ? stateDir : FileManager.default.currentDirectoryPath + "/" + stateDir) }
        if !sources.isEmpty { o["playlist"] = .strings(sources) }
        if let token = ProcessInfo.processInfo.environment["SCANOUT_TOKEN"], !token.isEmpty { o["token"] = .string(token) }
        if let keys {
            o["keys"] = .string(keys)
        } else if c.keys == nil, let env = ProcessInfo.processInfo.environment["SCANOUT_KEYS"], !env.isEmpty {
            o["keys"] = .string(env)
        }
        do throws(APIError) {
            try c.apply(json: try ConfigValue.json(o), runtimeOnly: false)
        } catch {
            let field = error.field ?? ""
            let message = error.message.hasPrefix(field + ": ") ? String(error.message.dropFirst(field.count + 2)) : error.message
            throw ValidationError("--\(optionName(field)): \(message)")
        }
        if noSocket { c.unixSocket = nil }
        if let channels { c.channels.m3u = channels }
        if sap, c.channels.sap == nil { c.channels.sap = SAPListenerOptions() }
        if let hwBackend { c.hwBackend = hwBackend }
        if let playerType { c.playerType = playerType }
        return c
    }

    private func optionName(_ field: String) -> String {
        switch field {
        case "unixSocket": return "socket"
        case "outputSize": return "output-size"
        case "outputRefresh": return "output-refresh"
        case "audioDevice": return "audio-device"
        case "presentLog": return "present-log"
        case "stateDir": return "state-dir"
        case "logLevel": return "log-level"
        case "playlist": return "sources"
        case "overlay.image": return "overlay"
        case "overlay.opacity": return "overlay-opacity"
        case "overlay.position": return "overlay-position"
        default: return field
        }
    }
}

/// A value of the config file's JSON as `serve`'s options give it: the options become config
/// fields and go through the config's own checks and messages (`ServiceConfig.apply(json:)`).
private enum ConfigValue: Encodable {
    case string(String), int(Int), number(Double), bool(Bool), null, strings([String]), object([String: ConfigValue])

    /// `fields` as a JSON object; a number JSON cannot hold is refused as the config refuses one.
    static func json(_ fields: [String: ConfigValue]) throws(APIError) -> Data {
        if let bad = fields.first(where: { $0.value.isNonFinite }) { throw .badRequest(bad.key, "must be a finite number") }
        do {
            return try JSONEncoder().encode(fields)
        } catch {
            throw APIError(.badRequest, "options: \(error)", field: "options")
        }
    }

    /// A number that is infinite or NaN (`--live-timeout inf`): JSON has none.
    private var isNonFinite: Bool {
        if case .number(let d) = self { return !d.isFinite }
        return false
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .string(let s): try c.encode(s)
        case .int(let i): try c.encode(i)
        case .number(let d): try c.encode(d)
        case .bool(let b): try c.encode(b)
        case .null: try c.encodeNil()
        case .strings(let list): try c.encode(list)
        case .object(let fields): try c.encode(fields)
        }
    }
}
