import Foundation
import Logging
import ScanoutCore
import ScanoutDecode
import ScanoutPlayer
import ScanoutRender

// The configuration as the config file, the body of `PUT /config` and `serve`'s options give it
// (`ServiceConfig` lists the fields), read by `RequestDecoder`; `ServiceConfig.apply(_:)` then
// sets what was given. The sections with a file of their own are read there (`LiveConfig.swift`,
// `ChannelsConfig.swift`, `AdaptiveConfig.swift`...).

extension Wire {
    /// Every field of the configuration, each optional. The fields are checked as they are read,
    /// in the order below (images and directories too), so that the first mistake is the one
    /// named; the fields given that nothing read are then refused as unknown. `mode`, `alang`
    /// and `presentLog` are read only when they are not null: null is not a value of theirs.
    struct ConfigBody: RequestBody {
        enum Field: String, CodingKey, CaseIterable {
            case host, port, unixSocket, token, keys, allowedHosts, rateLimit, output, mode, outputSize, outputRefresh, capture, playlist
            case `repeat`, autoplay, scaling, imageDuration, slate, overlay, positionInterval, retryInterval, logLevel, threads, timeout
            case interface, sources, liveTimeout, timeshift
            case channels
            case maxHeight, maxBitrate, initialBandwidth, liveStartIndex, minBufferForUp, starvationMargin, abandonSegments
            case buffering
            case audioDevice, volume, mute, alang, aid, presentLog
            case playerType, stateDir, hwBackend
            case offline
            case subtitleLanguages, subtitles
            case limits
            case layout
            case sync
            case schedule
            case proofOfPlay
            case mqtt
            case cec
            case hdr
        }

        /// The top level's fields, as each section reads them.
        typealias Fields = KeyedDecodingContainer<Field>

        /// The fields `PUT /config` may change; the others take a restart.
        static let runtimeFields: Set<Field> = [.scaling, .imageDuration, .slate, .positionInterval, .retryInterval, .logLevel, .repeat,
                                                .volume, .mute, .subtitleLanguages, .subtitles]

        /// The fields given (null ones too), in byte order.
        var given: [String]
        var service: Service
        var live: Live
        /// The channel list's sources; null gives none.
        var channels: ChannelsConfig?
        var adaptive: Adaptive
        var buffering: Buffering?
        var audio: Audio
        var playerType: PlayerType?
        var stateDir: String?
        var hwBackend: HardwareBackend?
        var offline: Offline?
        var subtitles: Subtitles
        var limits: Limits?
        /// The sync group; null: none.
        var sync: Sync??
        /// What plays when; null: no schedule.
        var schedule: ScheduleRequest??
        var proofOfPlay: ProofOfPlayRequest?
        /// The fleet's broker; null: none.
        var mqtt: MQTT??
        /// The TVs switched through HDMI-CEC.
        var cec: CECSetting?
        /// How HDR content goes to KMS screens.
        var hdr: HDR?

        init(from decoder: any Swift.Decoder) throws {
            let c = try decoder.container(keyedBy: Field.self)
            given = Field.allCases.filter { c.contains($0) }.map(\.stringValue).sorted()
            service = try Service(c)
            live = try Live(c)
            channels = try c.decodeNullable(Channels.self, forKey: .channels).map { $0?.config ?? ChannelsConfig() }
            adaptive = try Adaptive(c)
            buffering = try c.decodeIfPresent(Buffering.self, forKey: .buffering)
            audio = try Audio(c)
            playerType = try c.decodeChoiceIfPresent(PlayerType.self, forKey: .playerType)
            stateDir = try c.decodeIfPresent(String.self, forKey: .stateDir)
            if let stateDir, !stateDir.hasPrefix("/") {
                throw APIError.badRequest(c.name(.stateDir), "must be an absolute directory path (got \"\(stateDir)\")")
            }
            hwBackend = try c.decodeChoiceIfPresent(HardwareBackend.self, forKey: .hwBackend)
            offline = try Offline.field(c)
            subtitles = try Subtitles(c)
            limits = try c.decodeIfPresent(Limits.self, forKey: .limits)
            sync = try c.decodeNullable(Sync.self, forKey: .sync)
            schedule = try c.decodeNullable(ScheduleRequest.self, forKey: .schedule)
            proofOfPlay = try c.decodeIfPresent(ProofOfPlayRequest.self, forKey: .proofOfPlay)
            mqtt = try c.decodeNullable(MQTT.self, forKey: .mqtt)
            cec = try Self.cec(c)
            hdr = try c.decodeIfPresent(HDR.self, forKey: .hdr)
        }

        /// Where the API listens, who may reach it, the output, the playlist and the player's
        /// timings (`ServiceConfig`'s own fields). A double optional is a field that null clears.
        struct Service {
            var host: String?
            var port: Int?
            var unixSocket: String??
            var token: String?
            var keys: String?
            var allowedHosts: [String]?
            var rateLimit: ServiceConfig.RateLimit??
            var output: String?
            var mode: String?
            var outputSize: (width: Int, height: Int)?
            var outputRefresh: Double?
            var capture: String??
            var playlist: [PlaylistItem]?
            var repeatMode: RepeatMode?
            var autoplay: Bool?
            var scaling: ScalingMode?
            var imageDuration: Double?
            var slate: String??
            var overlay: Overlay??
            var positionInterval: Double?
            var retryInterval: Double?
            var logLevel: Logger.Level?
            var threads: Int?
            var timeout: Double?
            var layout: ScreenLayout??

            init(_ c: Fields) throws {
                host = try Self.nonEmpty(c, .host)
                port = try c.decodeIfPresent(Int.self, forKey: .port, in: 0...65535)
                unixSocket = try c.decodeNullable(String.self, forKey: .unixSocket)
                token = try Self.nonEmpty(c, .token)
                keys = try Self.nonEmpty(c, .keys)
                allowedHosts = try c.decodeStrings(forKey: .allowedHosts, each: "must be a host name or address")
                rateLimit = try c.decodeNullable(RateLimit.self, forKey: .rateLimit).map { $0?.limit }
                output = try c.decodeIfPresent(String.self, forKey: .output, oneOf: ServiceConfig.outputs)
                if c.has(.mode) {
                    let v = try c.decode(String.self, forKey: .mode)
                    guard v.wholeMatch(of: /[1-9][0-9]*x[1-9][0-9]*(@[1-9][0-9]*)?/) != nil else {
                        throw APIError.badRequest(c.name(.mode), "must be WIDTHxHEIGHT or WIDTHxHEIGHT@REFRESH, e.g. 1920x1080@60 (got \"\(v)\")")
                    }
                    mode = v
                }
                if let v = try c.decodeIfPresent(String.self, forKey: .outputSize) {
                    let parts = v.split(separator: "x").compactMap { Int($0) }
                    guard parts.count == 2, parts.allSatisfy({ (1...16384).contains($0) }) else {
                        throw APIError.badRequest(c.name(.outputSize), "must be WIDTHxHEIGHT, e.g. 1920x1080 (got \"\(v)\")")
                    }
                    outputSize = (parts[0], parts[1])
                }
                outputRefresh = try c.decodeIfPresent(Double.self, forKey: .outputRefresh, in: 1...1000)
                capture = try c.decodeNullable(String.self, forKey: .capture)
                if capture??.isEmpty == true { throw APIError.badRequest(c.name(.capture), "must be a directory, or null for none") }
                playlist = try c.decodeIfPresent([ItemRequest].self, forKey: .playlist)?.map(\.item)
                repeatMode = try c.decodeChoiceIfPresent(RepeatMode.self, forKey: .repeat)
                autoplay = try c.decodeIfPresent(Bool.self, forKey: .autoplay)
                scaling = try c.decodeChoiceIfPresent(ScalingMode.self, forKey: .scaling)
                imageDuration = try c.decodeIfPresent(Double.self, forKey: .imageDuration, in: ItemRequest.durations)
                slate = try c.decodeNullable(String.self, forKey: .slate)
                overlay = try c.nullable(.overlay) { try c.decode(OverlayRequest.self, forKey: .overlay).load() }
                positionInterval = try c.decodeIfPresent(Double.self, forKey: .positionInterval, in: 0.05...3600)
                retryInterval = try c.decodeIfPresent(Double.self, forKey: .retryInterval, in: 0.1...3600)
                logLevel = try c.decodeChoiceIfPresent(Logger.Level.self, forKey: .logLevel)
                threads = try c.decodeIfPresent(Int.self, forKey: .threads, in: 0...64)
                timeout = try c.decodeIfPresent(Double.self, forKey: .timeout, in: 0.1...600)
                layout = try c.decodeNullable(LayoutRequest.self, forKey: .layout).map { $0?.layout }
            }

            static func nonEmpty(_ c: Fields, _ key: Field) throws -> String? {
                let v = try c.decodeIfPresent(String.self, forKey: key)
                if v?.isEmpty == true { throw APIError.badRequest(c.name(key), "must not be empty") }
                return v
            }
        }

        /// `rateLimit {requestsPerSecond, burst}`: a bucket of `burst` (default: twice the rate,
        /// at least 1), refilled at `requestsPerSecond`.
        struct RateLimit: Decodable {
            enum Field: String, CodingKey, CaseIterable { case requestsPerSecond, burst }
            var limit: ServiceConfig.RateLimit

            init(from decoder: any Swift.Decoder) throws {
                let c = try decoder.container(keyedBy: Field.self)
                let perSecond = try c.decode(Double.self, forKey: .requestsPerSecond, in: 0.001...100_000)
                let burst = try c.decodeIfPresent(Int.self, forKey: .burst, in: 1...100_000) ?? Int(max(1, perSecond * 2))
                limit = ServiceConfig.RateLimit(perSecond: perSecond, burst: burst)
            }
        }
    }

    /// `PUT /config`: the runtime fields (`ConfigBody.runtimeFields`). A field that takes a
    /// restart is refused, the first in byte order named, before any field is checked.
    struct ConfigChange: RequestBody {
        typealias Field = ConfigBody.Field
        var body: ConfigBody

        init(from decoder: any Swift.Decoder) throws {
            let c = try decoder.container(keyedBy: Field.self)
            let fixed = Field.allCases.filter { c.contains($0) && !ConfigBody.runtimeFields.contains($0) }.map(\.stringValue)
            if let first = fixed.sorted().first {
                throw APIError.badRequest(first, "cannot change at run time (restart the service with a new config)")
            }
            body = try ConfigBody(from: decoder)
        }
    }
}
