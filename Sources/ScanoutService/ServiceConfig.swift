import Foundation
import Logging
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutDisplay
import ScanoutAudio
import ScanoutOffline
import ScanoutPlayer
import ScanoutRender
import ScanoutSync

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
///     outputRefresh (Hz)                                 — headless: vblanks at that rate (paced as a screen)
///     schedule {timeZone, default, slots, events} | null — what plays when (`ScheduleConfig.swift`)
///     proofOfPlay {days}                                 — how long play records are kept (default 90)
///     sync {group, key, role, priority, address, port, interface, sendTo, clock} | null — play in
///                                                         lockstep with a group (`SyncConfig.swift`)
///     cec ("auto" | "off" | "/dev/cecN" | [paths])       — TVs switched through HDMI-CEC with the screens
///     hdr {mode, maxBpc, screens, mastering, lightLevel} — HDR content on KMS screens (`HDRConfig.swift`)
///     mqtt {url, clientId, groups, topicPrefix, username, password, tls, statsInterval} | null —
///                                                         one of a fleet through a broker (`MQTTConfig.swift`)
///     mode ("WxH" | "WxH@R")                             — KMS: the screens' mode (default: preferred)
///     capture (a directory)                              — KMS: every frame shown, through the
///                                                         writeback connector, as capture-NNNNNN.png;
///                                                         content whose policy denies capture is refused
///     playlist [ "path or URL" | {source, token, playerType, scaling, rotation, overlay} ], repeat ("none"|"one"|"all"), autoplay
///     layout {width, height, background, rotation, main, zones: [...]} | null — a screen of zones
///                                                         (docs/LAYOUTS.md); the playlist is then
///                                                         the main zone's, if the zone names none
///     overlay {image, opacity, position}                 — a logo over every item that names none
///     scaling ("fit"|"fill"|"stretch"|"none"), imageDuration (seconds), slate — runtime
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
    /// Headless: the refresh rate the output paces frames at, as a screen would; nil: none.
    public var outputRefresh: Double?
    /// The sync group this screen plays in lockstep with; nil: none.
    public var sync: SyncSettings?
    /// What plays when; nil: the playlist, always.
    public var schedule: Schedule?
    /// Days proof-of-play records are kept.
    public var proofOfPlayDays = 90
    /// The fleet's broker (`FleetLink`); nil: none.
    public var mqtt: FleetSettings?
    /// The TVs switched through HDMI-CEC with the screens.
    public var cec: CECSetting = .auto
    /// How HDR content goes to KMS screens (`HDRConfig.swift`).
    public var hdr = HDRSettings()
    /// KMS: the mode of every screen, `WIDTHxHEIGHT[@REFRESH]`; nil: each screen's preferred one.
    public var mode: String?
    /// KMS: the directory the writeback connector's captures go to; nil: no capture.
    public var capture: String?
    public var playlist: [PlaylistItem] = []
    /// A screen of zones, each with its own playlist; nil: one picture, the whole screen.
    public var layout: ScreenLayout?
    public var repeatMode: RepeatMode = .none
    public var autoplay = true
    public var scaling: ScalingMode = .fit
    /// Seconds a still image is shown when its item names no `duration`.
    public var imageDuration = PlayerConfiguration.defaultImageDuration
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

    /// Reads a config file; errors name the file and the field.
    public static func load(file: String) throws -> ServiceConfig {
        try readJSONFile(file) { data throws(APIError) in
            var c = ServiceConfig()
            try c.apply(json: data, runtimeOnly: false)
            c.file = file
            return c
        }
    }

    /// The JSON file `file` read by `parse`; a missing file, a syntax error (with its line and
    /// column) or a refused field is a `ConfigFileError` naming the file.
    static func readJSONFile<T>(_ file: String, _ parse: (Data) throws(APIError) -> T) throws -> T {
        guard let data = FileManager.default.contents(atPath: file) else {
            throw ConfigFileError(file: file, message: FileManager.default.fileExists(atPath: file) ? "cannot be read" : "does not exist")
        }
        if let syntax = RequestDecoder.syntaxError(in: data) {
            throw ConfigFileError(file: file, message: syntax.message, line: syntax.line, column: syntax.column)
        }
        do throws(APIError) {
            return try parse(data)
        } catch {
            throw ConfigFileError(file: file, message: error.message)
        }
    }

    /// Applies the fields of `json`, a JSON object of the config file's fields (`Wire.ConfigBody`);
    /// every refusal names the field, unknown fields included. With `runtimeOnly`, fields that
    /// need a restart are refused (`PUT /config`). Nothing is applied unless every field is
    /// accepted.
    public mutating func apply(json: Data, runtimeOnly: Bool) throws(APIError) {
        if runtimeOnly {
            apply(try RequestDecoder.decode(Wire.ConfigChange.self, json: json).body)
        } else {
            apply(try RequestDecoder.decode(Wire.ConfigBody.self, json: json))
        }
    }

    /// Sets the fields `body` gives.
    mutating func apply(_ body: Wire.ConfigBody) {
        applyService(body.service)
        applyLive(body.live)
        if let v = body.channels { channels = v }
        applyAdaptive(body.adaptive)
        if let v = body.buffering { applyBuffering(v) }
        applyAudio(body.audio)
        if let v = body.playerType { playerType = v }
        if let v = body.stateDir { stateDir = v }
        if let v = body.hwBackend { hwBackend = v }
        if let v = body.offline { applyOffline(v) }
        applySubtitles(body.subtitles)
        if let v = body.limits { applyLimits(v) }
        if let v = body.sync { sync = v?.settings }
        if let v = body.schedule { schedule = v?.schedule }
        if let v = body.proofOfPlay { proofOfPlayDays = v.days }
        if let v = body.mqtt { mqtt = v?.settings }
        if let v = body.cec { cec = v }
        if let v = body.hdr { hdr = v.settings }
    }

    private mutating func applyService(_ s: Wire.ConfigBody.Service) {
        if let v = s.host { host = v }
        if let v = s.port { port = v }
        if let v = s.unixSocket { unixSocket = v }
        if let v = s.token { token = v }
        if let v = s.keys { keys = v }
        if let v = s.allowedHosts { allowedHosts = v }
        if let v = s.rateLimit { rateLimit = v }
        if let v = s.output { output = v }
        if let v = s.mode { mode = v }
        if let v = s.outputSize { outputWidth = v.width; outputHeight = v.height }
        if let v = s.outputRefresh { outputRefresh = v }
        if let v = s.capture { capture = v }
        if let v = s.playlist { playlist = v }
        if let v = s.repeatMode { repeatMode = v }
        if let v = s.autoplay { autoplay = v }
        if let v = s.scaling { scaling = v }
        if let v = s.imageDuration { imageDuration = v }
        if let v = s.slate { slate = v }
        if let v = s.overlay { overlay = v }
        if let v = s.positionInterval { positionInterval = v }
        if let v = s.retryInterval { retryInterval = v }
        if let v = s.logLevel { logLevel = v }
        if let v = s.threads { threads = v }
        if let v = s.timeout { timeout = v }
        if let v = s.layout { layout = v }
    }

    /// The player's share of the settings.
    public var playerConfiguration: PlayerConfiguration {
        var p = PlayerConfiguration()
        p.positionInterval = .nanoseconds(inSeconds: positionInterval)
        p.retryInterval = .nanoseconds(inSeconds: retryInterval)
        p.slate = slate
        p.scaling = scaling
        p.imageDuration = imageDuration
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

    /// The fields of this file's keys, as `GET /config` shows them.
    func encodeService(into c: inout KeyedEncodingContainer<WireKey>) throws {
        try c.encode(host, forKey: "host"); try c.encode(port, forKey: "port"); try c.encodeNullable(unixSocket, forKey: "unixSocket")
        try c.encode(token != nil, forKey: "tokenSet"); try c.encode(allowedHosts, forKey: "allowedHosts")
        try c.encodeNullable(rateLimit.map { Wire.RateLimit(requestsPerSecond: $0.perSecond, burst: $0.burst) }, forKey: "rateLimit")
        try c.encodeNullable(keys, forKey: "keys"); try c.encode(output, forKey: "output")
        try c.encodeNullable(outputWidth.map { "\($0)x\(outputHeight!)" }, forKey: "outputSize")
        try c.encodeNullable(outputRefresh, forKey: "outputRefresh")
        try c.encodeNullable(mode, forKey: "mode"); try c.encodeNullable(capture, forKey: "capture")
        try c.encode(playlist.map(Wire.Item.init), forKey: "playlist"); try c.encode(repeatMode.rawValue, forKey: "repeat")
        try c.encode(autoplay, forKey: "autoplay"); try c.encode(scaling.rawValue, forKey: "scaling")
        try c.encode(imageDuration, forKey: "imageDuration"); try c.encodeNullable(slate, forKey: "slate")
        try c.encode(positionInterval, forKey: "positionInterval"); try c.encode(retryInterval, forKey: "retryInterval")
        try c.encode(logLevel.rawValue, forKey: "logLevel"); try c.encode(threads, forKey: "threads"); try c.encode(timeout, forKey: "timeout")
        try c.encode(playerType.rawValue, forKey: "playerType"); try c.encode(hwBackend.rawValue, forKey: "hwBackend")
        try c.encodeNullable(overlay.map(Wire.OverlayShown.init), forKey: "overlay"); try c.encodeNullable(stateDir, forKey: "stateDir")
        try c.encodeNullable(layout.map(Wire.Layout.init), forKey: "layout")
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

extension Error {
    var message: String { (self as? APIError)?.message ?? "\(self)" }
}
