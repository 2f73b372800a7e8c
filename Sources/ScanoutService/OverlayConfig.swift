import Foundation
import ScanoutRender

/// The `overlay` object of the config file, of playlist entries and of `POST /load`:
/// `{"image": "PATH", "opacity": 0...1, "position": "X,Y" | "CORNER[:MARGIN]"}`; the image is read
/// when the object is, so that a missing or unreadable file is refused with the field named.
enum OverlayConfig {
    static let fields = ["image", "opacity", "position"]

    /// The overlay `key` of `o` (nil when absent, or null where `nullable`).
    static func parse(_ o: inout JSONObject, key: String = "overlay", nullable: Bool = false) throws(APIError) -> Overlay? {
        if nullable, o.values[key] is NSNull {
            _ = try o.string(key, nullable: true)
            return nil
        }
        guard var d = try o.object(key) else { return nil }
        let path = try d.string("image", required: true)!
        guard !path.isEmpty else { throw .badRequest(d.name("image"), "must not be empty") }
        let opacity = try d.double("opacity", range: 0...1) ?? 1
        var position = OverlayPosition.point(x: 0, y: 0)
        if let text = try d.string("position") {
            guard let p = OverlayPosition(text) else {
                throw .badRequest(d.name("position"), "must be \(OverlayPosition.syntax) (got \"\(text)\")")
            }
            position = p
        }
        try d.rejectUnknown()
        do {
            return try Overlay.load(path: path, position: position, opacity: opacity)
        } catch {
            throw .badRequest(d.name("image"), "\(path) cannot be read as an image: \(error)")
        }
    }

    /// As JSON, for `GET /config` and playlist listings.
    static func json(_ overlay: Overlay?) -> Any {
        guard let o = overlay else { return NSNull() }
        return ["image": o.path ?? NSNull(), "opacity": o.opacity, "position": o.position.description] as [String: Any]
    }
}
