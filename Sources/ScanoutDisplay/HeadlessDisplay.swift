import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutRender

/// The output for machines with no screen: each presented frame is drawn by a `HeadlessRenderer`
/// (the same work a screen would need, so that timings and drops are honest) — the CPU renderer
/// into an RGB image, or GLES into an offscreen render target — and the last picture can be
/// taken with `snapshot()`.
///
/// With an output size set, the rectangle the picture would occupy under the item's scaling
/// mode is computed and kept (`lastDestination`), as a screen would place it; the GL renderer
/// also draws at that size.
public final class HeadlessDisplay: Display {
    public let renderer: any HeadlessRenderer
    public private(set) var framesPresented = 0
    /// The size of the output the picture is laid out on, when one is set.
    public let outputSize: (width: Int, height: Int)?
    /// Where the last picture went on the output, when an output size is set.
    public private(set) var lastDestination: PixelRect?
    /// The layout of the last picture shown.
    public private(set) var lastLayout: FrameLayout?

    /// The output's vblanks when it has a refresh rate (`refresh`); nil: frames are timed by the
    /// clock alone.
    public let vblanks: HeadlessVBlanks?

    public init(renderer: any HeadlessRenderer = CPUHeadlessRenderer(), outputWidth: Int? = nil, outputHeight: Int? = nil,
                refresh: Double? = nil) {
        self.renderer = renderer
        vblanks = refresh.map { HeadlessVBlanks(hertz: $0) }
        if let w = outputWidth, let h = outputHeight, w > 0, h > 0 { outputSize = (w, h) } else { outputSize = nil }
    }

    public var description: String {
        let hz = vblanks.map { " @\(String(format: "%.3f", 1e9 / Double($0.refreshInterval.nanosecondCount))) Hz" } ?? ""
        if let o = outputSize { return "headless \(o.width)x\(o.height)" + hz }
        if let s = renderer.pictureSize { return "headless \(s.width)x\(s.height)" + hz }
        return "headless" + hz
    }

    public var vblankSource: (any VBlankSource)? { vblanks }

    /// The last picture shown, nil before the first (read back from the GPU now, for GL).
    public func snapshot() throws -> RGBImage? { try renderer.snapshot() }

    /// Pictures read back from the GPU so far: `snapshot()` calls, never frames presented.
    public var readbacks: Int { renderer.readbacks }

    /// The GL renderer takes hardware frames as they are (imports them, or downloads them when it must).
    public var acceptsGPUFrames: Bool { renderer.acceptsGPUFrames }
    public func countTransfers(in transfers: FrameTransfers?) { renderer.transfers = transfers }

    /// Drawn by the renderer over each picture, placed on the picture it draws.
    public var overlay: Overlay? {
        get { renderer.overlay }
        set { renderer.overlay = newValue }
    }

    /// Drawn by the renderer over each picture at the picture's time.
    public var subtitles: SubtitleRenderer? {
        get { renderer.subtitles }
        set { renderer.subtitles = newValue }
    }

    public func present(_ frame: VideoFrame, orientation: Orientation) throws {
        try present(frame, layout: FrameLayout(orientation: orientation))
    }

    /// Draws `frame` once per kind of frame (size, pixel format, layout), as a screen does
    /// (`KMSDisplay.warmUp`): in the vkms guest the first frame `play --output headless` drew
    /// was taken 23 ms after its aim, against 4 for the next ones. The picture drawn is the
    /// frame that is presented next.
    public func warmUp(for frame: VideoFrame, layout: FrameLayout) {
        let kind = WarmKind(frame, layout)
        guard kind != warmKind else { return }
        warmKind = kind
        try? renderer.draw(frame, layout: layout, outputSize: outputSize)
    }
    private var warmKind: WarmKind?

    public func present(_ frame: VideoFrame, layout: FrameLayout) throws {
        try renderer.draw(frame, layout: layout, outputSize: outputSize)
        vblanks?.waitForVBlank()
        if let o = outputSize {
            lastDestination = Composition.destination(sourceWidth: frame.width, sourceHeight: frame.height,
                                                     sampleAspectRatio: frame.sampleAspectRatio, orientation: layout.orientation,
                                                     outputWidth: o.width, outputHeight: o.height, mode: layout.scaling)
        }
        lastLayout = layout
        framesPresented += 1
    }
}

extension HeadlessDisplay {
    /// The renderer `--renderer` asks for with no screen, and why it is the one used.
    public struct RendererDecision {
        public var renderer: any HeadlessRenderer
        /// "asked for", "GLES is llvmpipe (…), a software rasteriser: …", "gl unavailable: …".
        public var reason: String
        /// "renderer: cpu (reason)", the line `play` prints.
        public var line: String { "renderer: \(renderer.name) (\(reason))" }
    }

    /// `cpu`: the CPU renderer. `gl`: GLES on a headless EGL platform (`eglOptions` chooses which;
    /// its errors are thrown). `auto`: GLES when it runs on hardware; the CPU renderer when GL
    /// cannot be opened or is a software rasteriser (llvmpipe draws a 1080p frame several times
    /// slower than swscale converts it), with the reason.
    public static func makeRenderer(_ choice: KMSDisplay.RendererChoice, composition: Composition = Composition(),
                                    eglOptions: EGLDisplayContext.Options = .init()) throws -> RendererDecision {
        func gl(_ context: EGLDisplayContext) throws -> GLHeadlessRenderer {
            GLHeadlessRenderer(gl: try GLRenderer(context: context), composition: composition)
        }
        switch choice {
        case .cpu:
            return RendererDecision(renderer: CPUHeadlessRenderer(overlay: composition.overlay, toneMapping: composition.toneMapping), reason: "asked for")
        case .gl:
            return RendererDecision(renderer: try gl(EGLDisplayContext(options: eglOptions)), reason: "asked for")
        case .auto:
            do {
                // The context alone tells software from hardware; the programs are built only for a GPU.
                let context = try EGLDisplayContext(options: eglOptions)
                if let software = context.softwareRasterizer {
                    return RendererDecision(renderer: CPUHeadlessRenderer(overlay: composition.overlay, toneMapping: composition.toneMapping),
                                            reason: "auto: GLES is \(context.glRenderer), \(software); the CPU renderer is faster")
                }
                return RendererDecision(renderer: try gl(context), reason: "auto: GLES on hardware, \(context.glRenderer)")
            } catch let e as RenderError {
                return RendererDecision(renderer: CPUHeadlessRenderer(overlay: composition.overlay, toneMapping: composition.toneMapping), reason: "auto: gl unavailable: \(e)")
            }
        }
    }
}
