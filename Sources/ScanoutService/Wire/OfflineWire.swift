import Foundation
import ScanoutOffline
import ScanoutPolicy

// `/downloads` and `/assets`: the offline store's downloads, and those kept under a client's id
// with a licence.

extension Wire {
    /// A download as the API shows it; the userinfo of its URLs redacted. `licence` only in the
    /// answers of `/assets` (null there when it has none).
    struct Download: Encodable, Sendable {
        var id: String
        var source: String
        var kind: String
        var mediaURL: String
        var state: String
        @Nullable var reason: String?
        var bytes: Int64
        var total: Int64
        var estimate: Int64
        var percent: Double
        var rate: Double
        @Nullable var eta: Double?
        var segments: Int
        var segmentsDone: Int
        @Nullable var variant: DownloadVariant?
        var created: Double
        @Nullable var completed: Double?
        var licence: Nullable<AssetLicence>?

        init(_ s: DownloadStatus) {
            let r = s.record
            id = r.id
            source = r.source.redacted
            kind = r.kind.rawValue
            mediaURL = r.mediaURL.redacted
            state = r.state.rawValue
            reason = r.reason?.redacted
            bytes = s.bytes
            total = s.total
            estimate = r.estimate
            percent = s.percent
            rate = s.rate
            eta = s.eta
            segments = s.segmentCount
            segmentsDone = s.segmentsDone
            variant = r.bitrate.map { DownloadVariant(bitrate: $0, height: r.height ?? 0) }
            created = r.created
            completed = r.completed
        }
    }

    /// The variant an HLS download keeps.
    struct DownloadVariant: Encodable, Sendable {
        var bitrate: Int
        var height: Int
    }

    /// An asset's licence and where it stands: `valid` (with the time left, null for no limit)
    /// or `expired` (when).
    struct AssetLicence: Encodable, Sendable {
        var kind: String
        @Nullable var expires: Double?
        @Nullable var playDuration: Double?
        @Nullable var firstPlay: Double?
        var state: String
        @Nullable var remaining: Double?
        @Nullable var expiredAt: Double?

        init(_ l: LicenceStatus) {
            kind = l.licence.kind.rawValue
            expires = l.licence.expires
            playDuration = l.licence.playDuration
            firstPlay = l.firstPlay
            switch l.verdict {
            case .valid(let left):
                state = "valid"
                remaining = left
                expiredAt = nil
            case .expired(let at):
                state = "expired"
                remaining = 0
                expiredAt = at
            }
        }
    }

    /// `GET /downloads`.
    struct Downloads: Encodable, Sendable {
        var downloads: [Download]
    }

    /// The answer of `DELETE /downloads/ID` and `DELETE /assets/ID`.
    struct Removed: Encodable, Sendable {
        var id: String
        var state = DownloadState.cancelled.rawValue
    }

    /// `POST /downloads {source, token?, maxBitrate? | maxHeight?}`.
    struct DownloadRequest: RequestBody {
        enum Field: String, CodingKey, CaseIterable { case source, token, maxBitrate, maxHeight }
        var source: String
        var token: String?
        var maxBitrate: Int?
        var maxHeight: Int?

        init(from decoder: any Swift.Decoder) throws {
            let c = try decoder.container(keyedBy: Field.self)
            source = try c.decode(String.self, forKey: .source)
            token = try c.decodeIfPresent(String.self, forKey: .token)
            (maxBitrate, maxHeight) = try Wire.caps(c, bitrate: .maxBitrate, height: .maxHeight)
        }
    }

    /// `POST /assets {id, source?, token, maxBitrate? | maxHeight?}`.
    struct AssetRequest: RequestBody {
        enum Field: String, CodingKey, CaseIterable { case id, source, token, maxBitrate, maxHeight }
        var id: String
        var source: String?
        var token: String
        var maxBitrate: Int?
        var maxHeight: Int?

        init(from decoder: any Swift.Decoder) throws {
            let c = try decoder.container(keyedBy: Field.self)
            id = try c.decode(String.self, forKey: .id)
            source = try c.decodeIfPresent(String.self, forKey: .source)
            token = try c.decode(String.self, forKey: .token)
            let bitrate = try c.decodeIfPresent(Int.self, forKey: .maxBitrate, in: 1...1_000_000_000)
            let height = try c.decodeIfPresent(Int.self, forKey: .maxHeight, in: 1...16384)
            guard Self.isID(id) else {
                throw APIError.badRequest("id", "must be 1 to 64 letters, digits, '-', '_' or '.', not starting with '.'")
            }
            (maxBitrate, maxHeight) = try Wire.caps(bitrate, height)
        }

        static func isID(_ id: String) -> Bool {
            (1...64).contains(id.count) && !id.hasPrefix(".")
                && id.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == ".") }
        }
    }

    /// `POST /assets/ID/refresh {token}`.
    struct RefreshRequest: RequestBody {
        enum Field: String, CodingKey, CaseIterable { case token }
        var token: String

        init(from decoder: any Swift.Decoder) throws {
            token = try decoder.container(keyedBy: Field.self).decode(String.self, forKey: .token)
        }
    }

    /// `maxBitrate` and `maxHeight` of a download: one or the other.
    static func caps<K: CodingKey>(_ c: KeyedDecodingContainer<K>, bitrate: K, height: K) throws -> (Int?, Int?) {
        try caps(try c.decodeIfPresent(Int.self, forKey: bitrate, in: 1...1_000_000_000),
                 try c.decodeIfPresent(Int.self, forKey: height, in: 1...16384))
    }

    static func caps(_ bitrate: Int?, _ height: Int?) throws -> (Int?, Int?) {
        if bitrate != nil && height != nil { throw APIError.badRequest("maxHeight", "give maxBitrate or maxHeight, not both") }
        return (bitrate, height)
    }
}
