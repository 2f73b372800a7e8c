import Foundation

// Transport: `POST /seek`, `PUT /rate`, `POST /volume`, `POST /timeshift/seek` (the others take no
// body and answer with `Wire.State`).

extension Wire {
    /// `POST /seek {position, exact}`.
    struct SeekRequest: RequestBody {
        enum Field: String, CodingKey, CaseIterable { case position, exact }
        var position: Double
        var exact: Bool

        init(from decoder: any Swift.Decoder) throws {
            let c = try decoder.container(keyedBy: Field.self)
            position = try c.decode(Double.self, forKey: .position, in: 0...1e9)
            exact = try c.decodeIfPresent(Bool.self, forKey: .exact) ?? true
        }
    }

    /// `POST /timeshift/seek {relative | absolute}`: seconds from the frame on screen, or stream
    /// time in seconds.
    struct TimeshiftSeekRequest: RequestBody {
        enum Field: String, CodingKey, CaseIterable { case relative, absolute }
        var relative: Double?
        var absolute: Double?

        init(from decoder: any Swift.Decoder) throws {
            let c = try decoder.container(keyedBy: Field.self)
            relative = try c.decodeIfPresent(Double.self, forKey: .relative, in: -86400...86400)
            absolute = try c.decodeIfPresent(Double.self, forKey: .absolute, in: 0...1e12)
        }
    }

    /// `PUT /rate {rate}`.
    struct RateRequest: RequestBody {
        enum Field: String, CodingKey, CaseIterable { case rate }
        var rate: Double

        init(from decoder: any Swift.Decoder) throws {
            rate = try decoder.container(keyedBy: Field.self).decode(Double.self, forKey: .rate, in: 0.25...4)
        }
    }

    /// `POST /volume {volume, mute}`; a field left out is left as it is.
    struct VolumeRequest: RequestBody {
        enum Field: String, CodingKey, CaseIterable { case volume, mute }
        var volume: Int?
        var mute: Bool?

        init(from decoder: any Swift.Decoder) throws {
            let c = try decoder.container(keyedBy: Field.self)
            volume = try c.decodeIfPresent(Int.self, forKey: .volume, in: 0...100)
            mute = try c.decodeIfPresent(Bool.self, forKey: .mute)
        }
    }

    /// The answer of `POST /volume`.
    struct Volume: Encodable, Sendable {
        var volume: Int
        var mute: Bool
    }
}
