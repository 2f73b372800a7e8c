import Foundation
import ScanoutRender

/// The `overlay` object of the config file, of playlist entries and of `POST /load`:
/// `{"image": "PATH", "opacity": 0...1, "position": "X,Y" | "CORNER[:MARGIN]"}`; the image is read
/// when the object is, so that a missing or unreadable file is refused with the field named.
enum OverlayConfig {
    /// The overlay `key` of `o` (nil when absent, or null where `nullable`).
    static func parse(_ o: inout JSONObject, key: String = "overlay", nullable: Bool = false) throws(APIError) -> Overlay? {
        if nullable, o.values[key] is NSNull {
            _ = try o.string(key, nullable: true)
            return nil
        }
        return try o.decode(key, as: Wire.OverlayRequest.self)?.load()
    }
}
