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
    /// `name`: 4 zones on a …").
    public static func open(_ settings: OutputSettings, layout: ScreenLayout, named name: String? = nil, gl: Bool,
                            note: (String) -> Void) throws -> LayoutOutput {
        let label = "layout" + (name.map { " \($0)" } ?? "")
        let choice = OutputSelector.choose(requested: settings.kind.rawValue, directory: settings.directory)
        if settings.kind != .headless && (choice.kind != .headless || settings.explicitKMS) {
            let pipeline = try PlaybackPipeline.open(settings, note: note)
            if let kms = pipeline.kms {
                guard let mode = kms.outputSummary.first?.mode else { throw KMSDisplayError.noConnectedConnector(path: kms.description, connectors: []) }
                let canvas = layout.fitted(outputWidth: mode.width, outputHeight: mode.height).canvasSize(outputWidth: mode.width, outputHeight: mode.height)
                note("\(label): \(layout.zones.count) zones on a \(canvas.width)x\(canvas.height) canvas"
                     + "\(layout.rotation != 0 ? " turned \(layout.rotation)°" : ""), \(kms.description)")
                return LayoutOutput(screen: ScreenOutput(output: kms, width: mode.width, height: mode.height, description: "kms"), pipeline: pipeline)
            }
        }
        let w = layout.width ?? settings.headlessWidth ?? 1920, h = layout.height ?? settings.headlessHeight ?? 1080
        let size = layout.rotation % 180 == 0 ? (w, h) : (h, w)
        let out = gl ? HeadlessCanvasOutput(makeGL: { try GLRenderer() }) : HeadlessCanvasOutput()
        note("\(label): \(layout.zones.count) zones on a \(size.0)x\(size.1) headless screen (\(gl ? "gl" : "cpu"))")
        return LayoutOutput(screen: ScreenOutput(output: out, width: size.0, height: size.1, description: "headless \(gl ? "gl" : "cpu")"),
                            headless: out)
    }
}
