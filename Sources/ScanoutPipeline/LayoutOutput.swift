import ScanoutDisplay
import ScanoutKMS
import ScanoutPlayer
import ScanoutRender

/// Where a screen of zones is composed, opened as `play` and `serve` open a picture's output:
/// the KMS screen `PlaybackPipeline.open` opens when one is asked for or found (its mode the
/// canvas, a layout of its own size scaled in), else headless at the layout's own size (or
/// `headlessWidth`×`headlessHeight`, else 1920×1080), with GLES or the CPU compositor. Call it on
/// the screen's compositor thread (`ScreenPlayer(layout:…opening:)`): a GLES context is current
/// where it was made.
public struct LayoutOutput {
    public var screen: ScreenOutput
    /// The KMS screen's pipeline (its policy, captures, restore); nil headless.
    public var pipeline: PlaybackPipeline?
    /// The headless output; nil on a screen.
    public var headless: HeadlessCanvasOutput?

    public init(screen: ScreenOutput, pipeline: PlaybackPipeline? = nil, headless: HeadlessCanvasOutput? = nil) {
        self.screen = screen
        self.pipeline = pipeline
        self.headless = headless
    }

    /// Opens it; `note` gets one line per choice made (output, renderer, the canvas: "layout
    /// `name`: 4 zones on a …"). Headless, a layout that gives no size of its own (nor the
    /// settings) is composed at `headlessSize`; nil refuses it (`LayoutOutputError`).
    public static func open(_ settings: OutputSettings, layout: ScreenLayout, named name: String? = nil, gl: Bool,
                            headlessSize: (width: Int, height: Int)? = (1920, 1080), note: (String) -> Void) throws -> LayoutOutput {
        let label = "layout" + (name.map { " \($0)" } ?? "")
        let choice = OutputSelector.choose(requested: settings.kind.rawValue, directory: settings.directory)
        if settings.kind != .headless && (choice.kind != .headless || settings.explicitKMS) {
            var settings = settings
            // A wall opens its screens (unless the outputs are named otherwise).
            if let wall = layout.wall, settings.connectors.isEmpty { settings.connectors = wall.local }
            let pipeline = try PlaybackPipeline.open(settings, note: note)
            if let kms = pipeline.kms {
                let size = try canvasSize(of: layout, on: kms)
                let canvas = layout.fitted(outputWidth: size.width, outputHeight: size.height).canvasSize(outputWidth: size.width, outputHeight: size.height)
                note("\(label): \(layout.zones.count) zones on a \(canvas.width)x\(canvas.height) canvas"
                     + "\(layout.rotation != 0 ? " turned \(layout.rotation)°" : "")\(layout.wall.map { " across \($0.outputs.count) screens" + ($0.local.count < $0.outputs.count ? " (\($0.local.count) of them here)" : "") } ?? ""), \(kms.description)")
                return LayoutOutput(screen: ScreenOutput(output: kms, width: size.width, height: size.height, description: "kms"), pipeline: pipeline)
            }
        }
        guard let w = layout.width ?? settings.headlessWidth ?? headlessSize?.width,
              let h = layout.height ?? settings.headlessHeight ?? headlessSize?.height else {
            throw LayoutOutputError("a headless screen has no mode; give width and height in the layout")
        }
        let size = layout.rotation % 180 == 0 ? (w, h) : (h, w)
        let out = gl ? HeadlessCanvasOutput(makeGL: { try GLRenderer() }) : HeadlessCanvasOutput()
        note("\(label): \(layout.zones.count) zones on a \(size.0)x\(size.1) headless screen (\(gl ? "gl" : "cpu"))")
        return LayoutOutput(screen: ScreenOutput(output: out, width: size.0, height: size.1, description: "headless \(gl ? "gl" : "cpu")"),
                            headless: out)
    }

    /// The canvas's output size on `kms`: its (first) mode; for a wall, the screens side by side
    /// with the bezels between them, each output set to show its rectangle (`KMSDisplay.wall`).
    /// A turned wall is of turned screens (portrait screens side by side): the upright canvas is
    /// their upright pictures side by side, each screen showing its rectangle turned, and the size
    /// returned is that canvas turned (what `ScreenLayout.canvasSize` turns back). A wall whose
    /// screens are not all open, or not of one mode size, is refused.
    public static func canvasSize(of layout: ScreenLayout, on kms: KMSDisplay) throws -> (width: Int, height: Int) {
        let outputs = kms.outputSummary
        guard let first = outputs.first?.mode else { throw LayoutOutputError("the KMS display has no output") }
        guard let wall = layout.wall else { return (first.width, first.height) }
        var modes: [KMSMode] = []
        for name in wall.local {
            guard let mode = outputs.first(where: { $0.name == name })?.mode else {
                throw LayoutOutputError("wall: \(name) is not open (open: \(outputs.map(\.name).joined(separator: ", ")))")
            }
            modes.append(mode)
        }
        guard modes.allSatisfy({ $0.width == first.width && $0.height == first.height }) else {
            throw LayoutOutputError("wall: the screens' modes differ (\(modes.map { "\($0.width)x\($0.height)" }.joined(separator: ", "))); give one mode")
        }
        let swapped = layout.rotation % 180 != 0
        // Each screen's picture upright (a portrait screen's is its mode turned).
        let (w, h) = swapped ? (first.height, first.width) : (first.width, first.height)
        let bezel: Int
        switch wall.bezel {
        case .pixels(let p): bezel = p
        case .millimetres(let mm):
            guard let screen = kms.connectors.first(where: { $0.name == wall.local.first }), screen.widthMM > 0 else {
                throw LayoutOutputError("wall: \(wall.local.first ?? "") does not say its width in millimetres (EDID); give the bezel in pixels")
            }
            // Pixels a millimetre from the mode's width and the screen's (square pixels, so the
            // same along a turned screen's other side).
            bezel = WallLayout.bezelPixels(millimetres: mm, screenWidthMM: Double(screen.widthMM), pixelsWide: first.width)
        }
        kms.wall = WallLayout.grid(wall.outputs, columns: wall.columns, width: w, height: h, bezel: bezel)
        let columns = min(wall.columns, wall.outputs.count)
        let upright = (columns * w + (columns - 1) * bezel, wall.rows * h + (wall.rows - 1) * bezel)
        return swapped ? (upright.1, upright.0) : upright
    }
}

/// A layout that cannot go on the screens it names: what is wrong and what to do.
public struct LayoutOutputError: Error, Equatable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
