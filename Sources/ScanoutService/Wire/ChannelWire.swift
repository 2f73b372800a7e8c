import Foundation
import ScanoutDemux
import ScanoutPlayer

// `GET /channels`, `POST /channel` (and the `channel` of the channel commands' answers).

extension Wire {
    /// A channel as the API shows it (the userinfo of its URLs redacted); `current` when it is
    /// the tuned channel and its stream is the current item.
    struct Channel: Encodable, Sendable {
        var id: String
        var name: String
        @Nullable var group: String?
        @Nullable var logo: String?
        var url: String
        var origin: String
        var current: Bool

        init(_ c: ScanoutDemux.Channel, snapshot s: PlayerSnapshot, tuned: String?) {
            id = c.id
            name = c.name
            group = c.group
            logo = c.logo?.redacted
            url = c.url.redacted
            origin = c.origin.rawValue
            current = c.id == tuned && s.index.map { s.playlist.indices.contains($0) && s.playlist[$0].source == c.url } == true
        }
    }

    /// `GET /channels`: the list and the id of the current channel (null: none).
    struct Channels: Encodable, Sendable {
        var channels: [Channel]
        @Nullable var current: String?
    }

    /// `POST /channel {id}`.
    struct ChannelRequest: RequestBody {
        enum Field: String, CodingKey, CaseIterable { case id }
        var id: String

        init(from decoder: any Swift.Decoder) throws {
            id = try decoder.container(keyedBy: Field.self).decode(String.self, forKey: .id)
        }
    }
}
