import Foundation
@testable import ScanoutService
import ScanoutPlayer
import ScanoutRender
import ScanoutTestSupport
import Testing

@Suite("the overlay key: config file, playlist entries, /load")
struct OverlayConfigTests {
    @Test("global and per-item overlays are read with their image; GET /config shows them")
    func readsConfig() throws {
        let scratch = try Scratch()
        let logo = try makeLogoPNG(in: scratch)
        let file = scratch.path("scanout.json")
        let json = """
        {"overlay": {"image": "\(logo)", "opacity": 0.75, "position": "bottom-right:24"},
         "playlist": ["a.mp4", {"source": "b.mp4", "overlay": {"image": "\(logo)", "position": "10,20"}}]}
        """
        try json.write(toFile: file, atomically: true, encoding: .utf8)
        let c = try ServiceConfig.load(file: file)
        let global = try #require(c.overlay)
        #expect(global.position == .corner(.bottomRight, margin: 24) && global.opacity == 0.75 && global.path == logo)
        #expect(global.image.width == 20 && global.image.height == 10 && Array(global.image.bytes[0..<4]) == [255, 0, 0, 255])
        #expect(c.playlist[0].overlay == nil)
        let item = try #require(c.playlist[1].overlay)
        #expect(item.position == .point(x: 10, y: 20) && item.opacity == 1)
        #expect(c.playerConfiguration.overlay == global)
        let shown = try #require(c.json["overlay"] as? [String: Any])
        #expect(shown["image"] as? String == logo && shown["opacity"] as? Double == 0.75 && shown["position"] as? String == "bottom-right:24")
        #expect(c.json["playlist"].flatMap { ($0 as? [[String: Any]])?[0]["overlay"] } is NSNull)
    }

    @Test("refusals name the field: a missing image, a bad position, an opacity out of range, an unknown field",
          arguments: [
            (#"{"image": "/nonexistent/logo.png"}"#, "overlay.image", "cannot be read as an image"),
            (#"{"image": "LOGO", "position": "middle"}"#, "overlay.position", "top-left, top-right"),
            (#"{"image": "LOGO", "opacity": 1.5}"#, "overlay.opacity", "within 0...1"),
            (#"{"image": "LOGO", "size": 3}"#, "overlay.size", "unknown field"),
            (#"{"opacity": 0.5}"#, "overlay.image", "is required"),
          ])
    func refusals(overlay: String, field: String, says: String) throws {
        let scratch = try Scratch()
        let logo = try makeLogoPNG(in: scratch)
        let text = overlay.replacingOccurrences(of: "LOGO", with: logo)
        var c = ServiceConfig()
        #expect { try c.apply(json: Data(#"{"overlay": \#(text)}"#.utf8), runtimeOnly: false) } throws: { e in
            guard let e = e as? APIError else { return false }
            return e.field == field && e.message.contains(says)
        }
        // The same object on a playlist entry is named by its path.
        let entry = try JSONSerialization.jsonObject(with: Data(#"[{"source": "a.mp4", "overlay": \#(text)}]"#.utf8)) as! [Any]
        #expect { _ = try parsePlaylist(entry, field: "playlist") } throws: { e in
            guard let e = e as? APIError else { return false }
            return e.field == "playlist[0].\(field)" && e.message.contains(says)
        }
    }

    @Test("overlay cannot change at run time (PUT /config): restart")
    func notRuntime() throws {
        var c = ServiceConfig()
        #expect { try c.apply(json: Data(#"{"overlay": null}"#.utf8), runtimeOnly: true) } throws: { e in (e as? APIError)?.field == "overlay" }
    }
}
