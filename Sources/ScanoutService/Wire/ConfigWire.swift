import Foundation
import Logging

// `GET|PUT /log-level`, and the refusals of every route. (`GET|PUT /config` read and answer with
// the config file's own reader, `ServiceConfig.apply` and `ServiceConfig.json`.)

extension Wire {
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
