import Foundation
import Logging
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ScanoutOffline
import ScanoutPlayer
import ScanoutRender

/// The service's settings: from the config file (`/etc/scanout/scanout.json` or `--config`), then
/// command-line options, then `PUT /config` at run time for the fields marked runtime.
///
/// JSON keys (all optional):
///
///     host, port, unixSocket (null: none), token        — where the API listens; bearer token for
///                                                         requests from non-local addresses
///     keys                                               — the content-token key file (also SCANOUT_KEYS)
///     allowedHosts [names], rateLimit {requestsPerSecond, burst} | null — request security
///     output ("auto" | "kms" | "headless"), outputSize ("WxH")   — the display
///     mode ("WxH" | "WxH@R")                             — KMS: the screens' mode (default: preferred)
///     capture (a directory)                              — KMS: every frame shown, through the
///                                                         writeback connector, as capture-NNNNNN.png;
///                                                         content whose policy denies capture is refused
///     playlist [ "path or URL" | {source, token, playerType, scaling, rotation, overlay} ], repeat ("none"|"one"|"all"), autoplay
///     overlay {image, opacity, position}                 — a logo over every item that names none
///     scaling ("fit"|"fill"|"stretch"|"none"), slate     — runtime
///     subtitleLanguages [tags], subtitles {enabled, delay, safeMargin} — runtime: subtitles of
///                                                         items that name none
///     positionInterval (s), retryInterval (s), logLevel  — runtime
///     threads, timeout (s)                               — decoding threads, source timeout
///     stateDir                                           — where the playlist position is kept
///                                                         (default $STATE_DIRECTORY, else /var/lib/scanout)
///     interface, sources [addresses], liveTimeout (s)    — UDP/RTP inputs: the interface to join
///                                                         on, source-specific senders, and the
///                                                         silence after which the service is down
///     timeshift {seconds, maxBytes, directory: null}     — what is kept of live inputs (pause, seeks)
///     maxHeight, maxBitrate (b/s), initialBandwidth (b/s), liveStartIndex — adaptive HLS
///     playerType ("auto"|"native"|"hw"|"sw"), hwBackend ("auto"|"vaapi"|"nvdec") — the decoder
///     channels {m3u, sap: true | {address, port, interface, timeout}} — the channel list
///     audioDevice, volume, mute, alang, aid              — sound (`AudioConfig.swift`; volume, mute: runtime)
///     presentLog (a file)                                — a line per frame shown: media time, when on screen
///     offline true | {keepAll, concurrentDownloads, minFreeBytes, maxHeight, maxBitrate} — the
///                                                         offline store (stateDir/offline.db)
///     limits {connections, eventStreams, headerTimeout, idleTimeout} — clients' share (`LimitsConfig.swift`)
public struct ServiceConfig: Sendable, Equatable {
    public var host = "127.0.0.1"
    public var port = 8480
    public var unixSocket: String? = ServiceConfig.defaultSocketPath
    public var token: String?
    /// The key file that verifies content tokens (and holds the default policy); nil: none.
    public var keys: String?
    /// Names besides loopback ones, the listening host and the address connected to, that `Host`
    /// and `Origin` may carry ("*": any).
    public var allowedHosts: [String] = []
    /// Requests per client: a bucket of `burst`, refilled at `perSecond`; nil: unlimited.
    public var rateLimit: RateLimit? = RateLimit(perSecond: 100, burst: 200)

    public struct RateLimit: Sendable, Equatable {
        public var perSecond: Double
        public var burst: Int
        public init(perSecond: Double, burst: Int) { self.perSecond = perSecond; self.burst = burst }
    }
    public var output = "auto"
    public var outputWidth: Int?
    public var outputHeight: Int?
    /// KMS: the mode of every screen, `WIDTHxHEIGHT[@REFRESH]`; nil: each screen's preferred one.
    public var mode: String?
    /// KMS: the directory the writeback connector's captures go to; nil: no capture.
    public var capture: String?
    public var playlist: [PlaylistItem] = []
    public var repeatMode: RepeatMode = .none
    public var autoplay = true
    public var scaling: ScalingMode = .fit
    /// The sound: ALSA device (`none` by default), volume, mute, track preference.
    public var audio = AudioSettings()
    /// A file that gets a line per frame shown, with when it reached the screen (`PresentLog`,
    /// lip-sync measurements); nil: none.
    public var presentLog: String?
    public var slate: String?
    /// Drawn over items that name no overlay of their own (and over the slate).
    public var overlay: Overlay?
    /// Subtitles for items that name none of their own (`subtitleLanguages`, `subtitles`).
    public var subtitles = SubtitleSelection()
    public var positionInterval = 1.0
    public var retryInterval = 5.0
    public var logLevel: Logger.Level = .info
    public var threads = 0
    public var timeout = 10.0
    /// How UDP/RTP inputs are received (`interface`, `sources`, `liveTimeout`).
    public var live = LiveInputOptions()
    /// What is kept of live inputs for pause and seeks behind the live edge (`timeshift`).
    public var timeshift = TimeshiftOptions()
    /// The channel list's sources (`channels`).
    public var channels = ChannelsConfig()
    /// How HLS variants are chosen (`maxHeight`, `maxBitrate`, `initialBandwidth`, `liveStartIndex`).
    public var adaptive = AdaptiveOptions()
    /// How network inputs with an end are read ahead (`buffering`).
    public var readAhead = ReadAheadOptions()
    public var playerType: PlayerType = .auto
    public var hwBackend: HardwareBackend = .auto
    /// The directory the playlist position is kept in across restarts; nil: `stateDirectory(environment:)`.
    public var stateDir: String?
    /// The offline store's settings (`offline`).
    public var offline = OfflineSettings()
    /// Connections, event streams and their timeouts (`limits`, `LimitsConfig.swift`).
    public var limits = ServiceLimits()
    /// Faults to inject at the hardware seams (`SCANOUT_FAULTS` of the service's environment; not
    /// a config key).
    public var faults = FaultPlan()
    /// The file the settings were read from (read again on SIGHUP); nil without one.
    public var file: String?

    public init() {}

    public static let defaultFile = "/etc/scanout/scanout.json"

    /// `/run/scanout/scanout.sock` for root, `$XDG_RUNTIME_DIR/scanout.sock` (or /tmp) otherwise.
    public static var defaultSocketPath: String {
        if getuid() == 0 { return "/run/scanout/scanout.sock" }
        let dir = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"] ?? "/tmp"
        return "\(dir)/scanout-\(getuid()).sock"
    }

    static let outputs = ["auto", "kms", "headless"]
    static let runtimeKeys: Set<String> = Set(["scaling", "slate", "positionInterval", "retryInterval", "logLevel", "repeat"]).union(audioRuntimeKeys).union(subtitleKeys)

    /// Reads a config file; errors name the file and the field.
    public static func load(file: String) throws -> ServiceConfig {
        guard let data = FileManager.default.contents(atPath: file) else {
            throw ConfigFileError(file: file, message: FileManager.default.fileExists(atPath: file) ? "cannot be read" : "does not exist")
        }
        if (try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])) == nil, let syntax = JSONSyntax.firstError(in: data) {
            throw ConfigFileError(file: file, message: syntax.message, line: syntax.line, column: syntax.column)
        }
        do {
            var c = ServiceConfig()
            var o = try JSONObject.parse(data)
            try c.apply(&o, runtimeOnly: false)
            try o.rejectUnknown()
            c.file = file
            return c
        } catch {
            throw ConfigFileError(file: file, message: error.message)
        }
    }

    /// Applies the fields present in `o`. With `runtimeOnly`, fields that need a restart are refused.
    public mutating func apply(_ o: inout JSONObject, runtimeOnly: Bool) throws(APIError) {
        if runtimeOnly, let fixed = o.values.keys.sorted().first(where: { !Self.runtimeKeys.contains($0) && Self.allKeys.contains($0) }) {
            throw APIError(.badRequest, "\(fixed): cannot change at run time (restart the service with a new config)", field: fixed)
        }
        if let v = try o.string("host") {
            guard !v.isEmpty else { throw .badRequest("host", "must not be empty") }
            host = v
        }
        if let v = try o.int("port", range: 0...65535) { port = v }
        if o.values.keys.contains("unixSocket") {
            unixSocket = try o.string("unixSocket", nullable: true)
        }
        if let v = try o.string("token") {
            guard !v.isEmpty else { throw .badRequest("token", "must not be empty") }
            token = v
        }
        if let v = try o.string("keys") {
            guard !v.isEmpty else { throw .badRequest("keys", "must not be empty") }
            keys = v
        }
        if let hosts = try o.array("allowedHosts") {
            allowedHosts = try hosts.enumerated().map { (i, h) throws(APIError) in
                guard let s = h as? String, !s.isEmpty else { throw .badRequest("allowedHosts[\(i)]", "must be a host name or address") }
                return s
            }
        }
        if o.values.keys.contains("rateLimit") {
            if o.values["rateLimit"] is NSNull {
                _ = try o.string("rateLimit", nullable: true)
                rateLimit = nil
            } else if var r = try o.object("rateLimit") {
                let perSecond = try r.double("requestsPerSecond", required: true, range: 0.001...100_000)!
                let burst = try r.int("burst", range: 1...100_000) ?? Int(max(1, perSecond * 2))
                try r.rejectUnknown()
                rateLimit = RateLimit(perSecond: perSecond, burst: burst)
            }
        }
        if let v = try o.string("output", allowed: Self.outputs) { output = v }
        if o.has("mode") {
            let v = try o.string("mode", nullable: true)
            if let v, v.wholeMatch(of: /[1-9][0-9]*x[1-9][0-9]*(@[1-9][0-9]*)?/) == nil {
                throw .badRequest("mode", "must be WIDTHxHEIGHT or WIDTHxHEIGHT@REFRESH, e.g. 1920x1080@60 (got \"\(v)\")")
            }
            mode = v
        }
        if let v = try o.string("outputSize") {
            let parts = v.split(separator: "x").compactMap { Int($0) }
            guard parts.count == 2, parts.allSatisfy({ (1...16384).contains($0) }) else {
                throw .badRequest("outputSize", "must be WIDTHxHEIGHT, e.g. 1920x1080 (got \"\(v)\")")
            }
            outputWidth = parts[0]
            outputHeight = parts[1]
        }
        if o.values.keys.contains("capture") {
            let v = try o.string("capture", nullable: true)
            if v?.isEmpty == true { throw .badRequest("capture", "must be a directory, or null for none") }
            capture = v
        }
        if let items = try o.array("playlist") { playlist = try parsePlaylist(items, field: "playlist") }
        if let v = try o.string("repeat", allowed: RepeatMode.allCases.map(\.rawValue)) { repeatMode = RepeatMode(rawValue: v)! }
        if let v = try o.bool("autoplay") { autoplay = v }
        if let v = try o.string("scaling", allowed: ScalingMode.allCases.map(\.rawValue)) { scaling = ScalingMode(rawValue: v)! }
        if o.values.keys.contains("slate") { slate = try o.string("slate", nullable: true) }
        if o.values.keys.contains("overlay") { overlay = try OverlayConfig.parse(&o, nullable: true) }
        if let v = try o.double("positionInterval", range: 0.05...3600) { positionInterval = v }
        if let v = try o.double("retryInterval", range: 0.1...3600) { retryInterval = v }
        if let v = try o.string("logLevel", allowed: Logger.Level.allCases.map(\.rawValue)) { logLevel = Logger.Level(rawValue: v)! }
        if let v = try o.int("threads", range: 0...64) { threads = v }
        if let v = try o.double("timeout", range: 0.1...600) { timeout = v }
        try applyLive(&o)
        try applyChannels(&o)
        try applyAdaptive(&o)
        try applyBuffering(&o)
        try applyAudio(&o)
        if let v = try o.string("playerType", allowed: PlayerType.allCases.map(\.rawValue)) { playerType = PlayerType(rawValue: v)! }
        if let v = try o.string("stateDir") {
            guard v.hasPrefix("/") else { throw .badRequest("stateDir", "must be an absolute directory path (got \"\(v)\")") }
            stateDir = v
        }
        if let v = try o.string("hwBackend", allowed: HardwareBackend.allCases.map(\.rawValue)) { hwBackend = HardwareBackend(rawValue: v)! }
        try applyOffline(&o)
        try applySubtitles(&o)
        try applyLimits(&o)
    }

    static let allKeys: Set<String> = Set(["host", "port", "unixSocket", "token", "keys", "output", "outputSize", "mode", "capture", "playlist", "repeat", "autoplay",
                                       "scaling", "slate", "positionInterval", "retryInterval", "logLevel", "threads", "timeout",
                                       "playerType", "hwBackend", "overlay", "allowedHosts", "rateLimit", "stateDir", "interface", "sources", "liveTimeout", "timeshift",
                                       "channels", "offline", "limits", "buffering"]).union(adaptiveKeys).union(audioKeys).union(subtitleKeys)

    /// The player's share of the settings.
    public var playerConfiguration: PlayerConfiguration {
        var p = PlayerConfiguration()
        p.positionInterval = .nanoseconds(inSeconds: positionInterval)
        p.retryInterval = .nanoseconds(inSeconds: retryInterval)
        p.slate = slate
        p.scaling = scaling
        p.overlay = overlay
        p.subtitles = subtitles
        p.demuxer = DemuxerOptions(timeoutSeconds: timeout, live: live, adaptive: adaptive)
        p.demuxer.readAhead = readAhead
        p.timeshift = timeshift
        p.audio = audio
        p.audio.failWritesAfter = faults.audioLostAt
        p.audio.failOpens = faults.audioOpenFailures
        p.decoder = DecoderOptions(threads: threads, playerType: playerType,
                                   environment: SelectorEnvironment(hwBackend: hwBackend, faults: faults))
        return p
    }

    /// As `GET /config` shows it (`Wire.Config`), parsed: the token itself is never shown.
    public var json: [String: Any] { WireJSON.object(Wire.Config(self)) as? [String: Any] ?? [:] }

    /// The fields of this file's keys, as `GET /config` shows them.
    func encodeService(into c: inout KeyedEncodingContainer<WireKey>) throws {
        try c.encode(host, forKey: "host"); try c.encode(port, forKey: "port"); try c.encodeNullable(unixSocket, forKey: "unixSocket")
        try c.encode(token != nil, forKey: "tokenSet"); try c.encode(allowedHosts, forKey: "allowedHosts")
        try c.encodeNullable(rateLimit.map { Wire.RateLimit(requestsPerSecond: $0.perSecond, burst: $0.burst) }, forKey: "rateLimit")
        try c.encodeNullable(keys, forKey: "keys"); try c.encode(output, forKey: "output")
        try c.encodeNullable(outputWidth.map { "\($0)x\(outputHeight!)" }, forKey: "outputSize")
        try c.encodeNullable(mode, forKey: "mode"); try c.encodeNullable(capture, forKey: "capture")
        try c.encode(playlist.map(Wire.Item.init), forKey: "playlist"); try c.encode(repeatMode.rawValue, forKey: "repeat")
        try c.encode(autoplay, forKey: "autoplay"); try c.encode(scaling.rawValue, forKey: "scaling"); try c.encodeNullable(slate, forKey: "slate")
        try c.encode(positionInterval, forKey: "positionInterval"); try c.encode(retryInterval, forKey: "retryInterval")
        try c.encode(logLevel.rawValue, forKey: "logLevel"); try c.encode(threads, forKey: "threads"); try c.encode(timeout, forKey: "timeout")
        try c.encode(playerType.rawValue, forKey: "playerType"); try c.encode(hwBackend.rawValue, forKey: "hwBackend")
        try c.encodeNullable(overlay.map(Wire.OverlayShown.init), forKey: "overlay"); try c.encodeNullable(stateDir, forKey: "stateDir")
    }
}

/// A config file that cannot be used: the file and what is wrong, in one line.
public struct ConfigFileError: Error, Equatable, CustomStringConvertible {
    public var file: String
    public var message: String
    /// Where a syntax error is (1-based line and column); nil for an error in a field.
    public var line: Int?
    public var column: Int?
    public init(file: String, message: String, line: Int? = nil, column: Int? = nil) {
        self.file = file
        self.message = message
        self.line = line
        self.column = column
    }
    /// `config FILE: field: message`, or for a syntax error `config FILE:LINE:COLUMN: message`.
    public var description: String {
        guard let line, let column else { return "config \(file): \(message)" }
        return "config \(file):\(line):\(column): \(message)"
    }
}

/// Playlist entries (`Wire.ItemRequest`): a string (the source) or an object {source, token,
/// playerType, scaling, rotation, overlay, ...}.
func parsePlaylist(_ items: [Any], field: String) throws(APIError) -> [PlaylistItem] {
    try RequestDecoder.decode([Wire.ItemRequest].self, from: items, path: [WireKey(stringValue: field)]).map(\.item)
}

extension Error {
    var message: String { (self as? APIError)?.message ?? "\(self)" }
}
