import Foundation
import Logging

// `GET|PUT /config`, `GET|PUT /log-level`, and the refusals of every route. (`PUT /config` reads
// its body as the config file is read: `Wire.ConfigChange`, `Wire.ConfigBody`.)

extension Wire {
    /// `GET|PUT /config`: the running settings, each section written by the file that reads it
    /// (`ServiceConfig.encodeService`, `encodeAudio`...); the token itself is never shown.
    struct Config: Encodable, Sendable {
        var config: ServiceConfig

        init(_ config: ServiceConfig) { self.config = config }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: WireKey.self)
            try config.encodeService(into: &c)
            try config.encodeLive(into: &c)
            try config.channels.encode(into: &c)
            try config.encodeAdaptive(into: &c)
            try config.encodeBuffering(into: &c)
            try config.encodeAudio(into: &c)
            try config.encodeOffline(into: &c)
            try config.encodeSubtitles(into: &c)
            try config.encodeLimits(into: &c)
            try config.encodeSync(into: &c)
            try config.encodeMQTT(into: &c)
            try config.encodeCEC(into: &c)
            try config.encodeHDR(into: &c)
            var pop = c.nestedContainer(keyedBy: WireKey.self, forKey: "proofOfPlay")
            try pop.encode(config.proofOfPlayDays, forKey: "days")
            if let s = config.schedule { try c.encode(ScheduleShown(schedule: s), forKey: "schedule") } else { try c.encodeNil(forKey: "schedule") }
        }
    }

    struct RateLimit: Encodable, Sendable {
        var requestsPerSecond: Double
        var burst: Int
    }

    /// `GET|PUT /log-level`: the answer, and the body of `PUT`.
    struct LogLevel: Encodable, Sendable {
        var level: String
    }

    struct LogLevelRequest: RequestBody {
        enum Field: String, CodingKey, CaseIterable { case level }
        var level: Logger.Level

        init(from decoder: any Swift.Decoder) throws {
            let c = try decoder.container(keyedBy: Field.self)
            guard let level = try c.decodeChoiceIfPresent(Logger.Level.self, forKey: .level) else {
                throw APIError.badRequest(c.name(.level), "is required")
            }
            self.level = level
        }
    }

    /// A refusal: what is wrong, in one line, and the field it concerns (left out when none).
    struct Refusal: Encodable, Sendable {
        var error: String
        var field: String?
    }
}
