import ArgumentParser
import ScanoutRender

/// The overlay options of `render`, `play` and `serve`: a logo or watermark drawn over the video
/// by either renderer.
struct OverlayOptions: ParsableArguments {
    @Option(name: .customLong("overlay"), help: ArgumentHelp("PNG (with alpha) drawn over the video at its own size: a logo or watermark.", valueName: "png"))
    var image: String?

    @Option(name: .customLong("overlay-opacity"), help: "Overlay opacity, 0...1 (scales the image's own alpha).")
    var opacity: Double = 1

    @Option(name: .customLong("overlay-position"), help: ArgumentHelp("Overlay position: \(OverlayPosition.syntax).", valueName: "x,y|corner[:margin]"))
    var positionText: String = "0,0"

    func validate() throws {
        guard (0...1).contains(opacity) else { throw ValidationError("--overlay-opacity: 0...1, not \(opacity)") }
        _ = try position
    }

    var position: OverlayPosition {
        get throws {
            guard let p = OverlayPosition(positionText) else { throw ValidationError("--overlay-position: \(OverlayPosition.syntax); not '\(positionText)'") }
            return p
        }
    }

    /// The overlay, its image read; nil without --overlay.
    func load() throws -> Overlay? {
        guard let image else { return nil }
        return try Overlay.load(path: image, position: try position, opacity: opacity)
    }
}
