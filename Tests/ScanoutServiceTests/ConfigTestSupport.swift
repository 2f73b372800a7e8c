import Foundation
import ScanoutPlayer
import ScanoutTestSupport
@testable import ScanoutService

extension ServiceConfig {
    /// The settings a config file of `json` gives (written to a scratch directory and loaded).
    static func parse(_ json: String) throws -> ServiceConfig {
        let scratch = try Scratch()
        let file = scratch.path("c.json")
        try Data(json.utf8).write(to: URL(fileURLWithPath: file))
        return try ServiceConfig.load(file: file)
    }

    /// The settings as `GET /config` shows them (`Wire.Config`), parsed into dictionaries for
    /// the tests' checks.
    var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: WireJSON.data(Wire.Config(self)))) as? [String: Any] ?? [:]
    }
}

/// Playlist entries (`items`, as JSONSerialization reads them) as the config file's `field`
/// reads them.
func parsePlaylist(_ items: [Any], field: String) throws -> [PlaylistItem] {
    try RequestDecoder.decode([Wire.ItemRequest].self, from: items, path: [WireKey(stringValue: field)]).map(\.item)
}
