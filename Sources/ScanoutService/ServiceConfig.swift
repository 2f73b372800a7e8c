import Foundation
import Logging
import ScanoutMedia
import ScanoutPlayer
import ScanoutRender

/// The service's settings: from the config file (`/etc/scanout/scanout.json` or `--config`), then
/// command-line options, then `PUT /config` at run time for the fields marked runtime.
///
/// JSON keys (all optional):
///
///     host, port, unixSocket (null: none), token        — where the API listens; bearer token for
///                                                         requests from non-local addresses
///     output ("auto" | "kms" | "headless"), outputSize ("WxH")   — the display
///     playlist [ "path or URL" | {source, scaling, rotation} ], repeat ("none"|"one"|"all"), autoplay
///     scaling ("fit"|"fill"|"stretch"|"none"), slate     — runtime
///     positionInterval (s), retryInterval (s), logLevel  — runtime
///     threads, timeout (s)                               — decoding threads, source timeout
///     playerType ("auto"|"native"|"hw"|"sw"), hwBackend ("auto"|"vaapi"|"nvdec") — the decoder
public struct ServiceConfig: Sendable, Equatable {
    public var host = "127.0.0.1"
    public var port = 8480
    public var unixSocket: String? = ServiceConfig.defaultSocketPath
    public var token: String?
    public var output = "auto"
    public var outputWidth: Int?
    public var outputHeight: Int?
    public var playlist: [PlaylistItem] = []
    public var repeatMode: RepeatMode = .none
    public var autoplay = true
    public var scaling: ScalingMode = .fit
    public var slate: String?
    public var positionInterval = 1.0
    public var retryInterval = 5.0
    public var logLevel: Logger.Level = .info
    public var threads = 0
    public var timeout = 10.0
    public var playerType: PlayerType = .auto
    public var hwBackend: HardwareBackend = .auto
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
    static let runtimeKeys: Set<String> = ["scaling", "slate", "positionInterval", "retryInterval", "logLevel", "repeat"]

    /// Reads a config file; errors name the file and the field.
    public static func load(file: String) throws -> ServiceConfig {
        guard let data = FileManager.default.contents(atPath: file) else {
            throw ConfigFileError(file: file, message: FileManager.default.fileExists(atPath: file) ? "cannot be read" : "does not exist")
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
        if let v = try o.string("output", allowed: Self.outputs) { output = v }
        if let v = try o.string("outputSize") {
            let parts = v.split(separator: "x").compactMap { Int($0) }
            guard parts.count == 2, parts.allSatisfy({ (1...16384).contains($0) }) else {
                throw .badRequest("outputSize", "must be WIDTHxHEIGHT, e.g. 1920x1080 (got \"\(v)\")")
            }
            outputWidth = parts[0]
            outputHeight = parts[1]
        }
        if let items = try o.array("playlist") { playlist = try parsePlaylist(items, field: "playlist") }
        if let v = try o.string("repeat", allowed: RepeatMode.allCases.map(\.rawValue)) { repeatMode = RepeatMode(rawValue: v)! }
        if let v = try o.bool("autoplay") { autoplay = v }
        if let v = try o.string("scaling", allowed: ScalingMode.allCases.map(\.rawValue)) { scaling = ScalingMode(rawValue: v)! }
        if o.values.keys.contains("slate") { slate = try o.string("slate", nullable: true) }
        if let v = try o.double("positionInterval", range: 0.05...3600) { positionInterval = v }
        if let v = try o.double("retryInterval", range: 0.1...3600) { retryInterval = v }
        if let v = try o.string("logLevel", allowed: Logger.Level.allCases.map(\.rawValue)) { logLevel = Logger.Level(rawValue: v)! }
        if let v = try o.int("threads", range: 0...64) { threads = v }
        if let v = try o.double("timeout", range: 0.1...600) { timeout = v }
        if let v = try o.string("playerType", allowed: PlayerType.allCases.map(\.rawValue)) { playerType = PlayerType(rawValue: v)! }
        if let v = try o.string("hwBackend", allowed: HardwareBackend.allCases.map(\.rawValue)) { hwBackend = HardwareBackend(rawValue: v)! }
    }

    static let allKeys: Set<String> = ["host", "port", "unixSocket", "token", "output", "outputSize", "playlist", "repeat", "autoplay",
                                       "scaling", "slate", "positionInterval", "retryInterval", "logLevel", "threads", "timeout",
                                       "playerType", "hwBackend"]

    /// The player's share of the settings.
    public var playerConfiguration: PlayerConfiguration {
        var p = PlayerConfiguration()
        p.positionInterval = UInt64(positionInterval * 1e9)
        p.retryInterval = UInt64(retryInterval * 1e9)
        p.slate = slate
        p.scaling = scaling
        p.demuxer = DemuxerOptions(timeoutSeconds: timeout)
        p.decoder = DecoderOptions(threads: threads, playerType: playerType,
                                   environment: SelectorEnvironment(hwBackend: hwBackend, faults: faults))
        return p
    }

    /// As JSON for `GET /config` (the token itself is never shown).
    public var json: [String: Any] {
        [
            "host": host, "port": port, "unixSocket": unixSocket ?? NSNull(), "tokenSet": token != nil,
            "output": output, "outputSize": outputWidth.map { "\($0)x\(outputHeight!)" } ?? NSNull(),
            "playlist": playlist.map(itemJSON), "repeat": repeatMode.rawValue, "autoplay": autoplay,
            "scaling": scaling.rawValue, "slate": slate ?? NSNull(), "positionInterval": positionInterval,
            "retryInterval": retryInterval, "logLevel": logLevel.rawValue, "threads": threads, "timeout": timeout,
            "playerType": playerType.rawValue, "hwBackend": hwBackend.rawValue,
        ]
    }
}

/// A config file that cannot be used: the file and what is wrong, in one line.
public struct ConfigFileError: Error, Equatable, CustomStringConvertible {
    public var file: String
    public var message: String
    public init(file: String, message: String) {
        self.file = file
        self.message = message
    }
    public var description: String { "config \(file): \(message)" }
}

/// Playlist entries: a string (the source) or an object {source, scaling, rotation}.
func parsePlaylist(_ items: [Any], field: String) throws(APIError) -> [PlaylistItem] {
    var out: [PlaylistItem] = []
    for (i, entry) in items.enumerated() {
        let path = "\(field)[\(i)]"
        if let s = entry as? String {
            guard !s.isEmpty else { throw .badRequest(path, "must not be empty") }
            out.append(PlaylistItem(source: s))
            continue
        }
        guard let d = entry as? [String: Any] else { throw .badRequest(path, "must be a string or an object with \"source\"") }
        var o = JSONObject(values: d, path: path)
        let source = try o.string("source", required: true)!
        guard !source.isEmpty else { throw .badRequest("\(path).source", "must not be empty") }
        let scaling = try o.string("scaling", allowed: ScalingMode.allCases.map(\.rawValue)).map { ScalingMode(rawValue: $0)! }
        let rotation = try o.int("rotation") ?? 0
        guard [0, 90, 180, 270].contains(rotation) else { throw .badRequest("\(path).rotation", "must be 0, 90, 180 or 270 (got \(rotation))") }
        try o.rejectUnknown()
        out.append(PlaylistItem(source: source, scaling: scaling, rotation: rotation))
    }
    return out
}

func itemJSON(_ item: PlaylistItem) -> [String: Any] {
    ["source": item.source, "scaling": item.scaling?.rawValue ?? NSNull(), "rotation": item.rotation]
}

extension Error {
    var message: String { (self as? APIError)?.message ?? "\(self)" }
}
