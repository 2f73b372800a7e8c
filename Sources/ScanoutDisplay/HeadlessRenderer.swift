import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutRender

/// Who draws a headless display's frames: the CPU into an RGB image in memory, or GLES into an
/// offscreen render target. Called on the playback loop's thread only.
public protocol HeadlessRenderer: AnyObject {
    /// "cpu" or "gl".
    var name: String { get }
    /// What draws and where, for summaries ("gl: llvmpipe (…); EGL surfaceless; …").
    var detail: String { get }
    /// Draws `frame` laid out by `layout`, on an output of `outputSize` when the renderer lays
    /// pictures out on one (nil: the picture's own size). Returns once the drawing is complete.
    func draw(_ frame: VideoFrame, layout: FrameLayout, outputSize: (width: Int, height: Int)?) throws
    /// The size of the last picture drawn, nil before the first.
    var pictureSize: (width: Int, height: Int)? { get }
    /// The last picture drawn, nil before the first. The GL renderer reads it back now.
    func snapshot() throws -> RGBImage?
    /// Pictures read back from the GPU so far (0 for the CPU renderer, whose picture is in memory).
    var readbacks: Int { get }
    /// Whether hardware frames may come in GPU memory only (the renderer imports them).
    var acceptsGPUFrames: Bool { get }
    /// Where uploads, GPU copies and imports of decoded pictures are counted (GL only).
    var transfers: FrameTransfers? { get set }
    /// The image drawn over each picture, placed on the picture this renderer draws.
    var overlay: Overlay? { get set }
    /// Subtitles drawn over each picture at its time, laid out on the picture this renderer draws.
    var subtitles: SubtitleRenderer? { get set }
}

extension HeadlessRenderer {
    public var acceptsGPUFrames: Bool { false }
    public var transfers: FrameTransfers? {
        get { nil }
        set {}
    }
}

/// Today's headless path: `CPURenderer` (swscale) into an rgb24 image at the picture's own size,
/// reused frame after frame, with the overlay blended in as the CPU compositor blends it. The
/// output size does not change what it draws.
public final class CPUHeadlessRenderer: HeadlessRenderer {
    public let name = "cpu"
    public var detail: String { "cpu (swscale)" }
    private let renderer = CPURenderer()
    private var framebuffer = RGBImage(width: 0, height: 0, bytes: [])
    private var drawn = false
    public let readbacks = 0
    public var overlay: Overlay?
    public var subtitles: SubtitleRenderer?
    /// How HDR frames are brought to SDR (nil: drawn as they are).
    public var toneMapping: ToneMapping?

    public init(overlay: Overlay? = nil, toneMapping: ToneMapping? = .default) {
        self.overlay = overlay
        self.toneMapping = toneMapping
    }

    public func draw(_ frame: VideoFrame, layout: FrameLayout, outputSize: (width: Int, height: Int)?) throws {
        try renderer.render(frame, orientation: layout.orientation, toneMapping: toneMapping, into: &framebuffer)
        overlay?.blend(into: &framebuffer)
        subtitles?.layer(for: frame, in: Composition(orientation: layout.orientation, applySampleAspectRatio: false),
                         outputWidth: framebuffer.width, outputHeight: framebuffer.height)?.blend(into: &framebuffer)
        drawn = true
    }

    public var pictureSize: (width: Int, height: Int)? { drawn ? (framebuffer.width, framebuffer.height) : nil }
    public func snapshot() throws -> RGBImage? { drawn ? framebuffer : nil }
}

/// The GPU path with no screen: `GLRenderer` draws every frame into an offscreen render target
/// (an FBO with an RGBA8 renderbuffer) as it would into a KMS buffer, and nothing is read back
/// unless `snapshot()` asks. `GLRenderer` ends each frame with `glFinish`, so a frame's GPU work
/// is complete when `draw` returns and the time `present` takes is the GPU's real cost.
///
/// Size: the output size when one is given (the picture laid out by the item's scaling mode with
/// square output pixels, as on a screen); otherwise the picture's stored size, turned, with the
/// sample aspect ratio carried rather than applied, as the CPU renderer draws it.
///
/// Hardware frames go in as `GLRenderer` takes them: NVDEC's CUDA memory by a GPU copy, a DMA-BUF
/// export one EGLImage per plane where the EGL display has `EGL_EXT_image_dma_buf_import`,
/// otherwise their CPU planes by upload (`lastImportFallback` says why).
public final class GLHeadlessRenderer: HeadlessRenderer {
    public let name = "gl"
    public let gl: GLRenderer
    private var target: GLRenderTarget?
    /// The background and overlay of every picture (its size, scaling and orientation are set
    /// per frame).
    private var composition: Composition
    public var overlay: Overlay? {
        get { composition.overlay }
        set { composition.overlay = newValue }
    }
    public var subtitles: SubtitleRenderer?

    /// Draws with `gl`; `composition` gives the background and overlay (its size, scaling and
    /// orientation are set per frame).
    public init(gl: GLRenderer, composition: Composition = Composition()) {
        self.gl = gl
        self.composition = composition
    }

    /// How DMA-BUF frames reach the GPU on this EGL display.
    public var surfaces: String {
        gl.context.hasEGLExtension("EGL_EXT_image_dma_buf_import") ? "DMA-BUF frames imported"
            : "DMA-BUF frames uploaded from their CPU planes (the EGL display lacks EGL_EXT_image_dma_buf_import)"
    }

    public var detail: String {
        let platform = gl.context.headlessChoice.map { "EGL \($0)" } ?? "EGL \(gl.context.platform)"
        return "gl: \(gl.context.glRenderer); \(platform); \(surfaces)"
    }

    public var readbacks: Int { gl.readbacks }
    public var pictureSize: (width: Int, height: Int)? { target.map { ($0.width, $0.height) } }
    public var acceptsGPUFrames: Bool { true }
    public var transfers: FrameTransfers? {
        get { gl.importer.transfers }
        set { gl.importer.transfers = newValue }
    }

    public func draw(_ frame: VideoFrame, layout: FrameLayout, outputSize: (width: Int, height: Int)?) throws {
        var c = composition
        c.scaling = layout.scaling
        c.orientation = layout.orientation
        c.applySampleAspectRatio = outputSize != nil
        let size = outputSize ?? Composition.naturalSize(width: frame.width, height: frame.height,
                                                         sampleAspectRatio: Rational(1, 1), orientation: layout.orientation)
        if target?.width != size.width || target?.height != size.height {
            target = nil
            target = try gl.makeTarget(width: size.width, height: size.height)
        }
        c.subtitles = subtitles?.layer(for: frame, in: c, outputWidth: size.width, outputHeight: size.height)
        try gl.render(.frame(frame), as: c, into: target!)
    }

    public func snapshot() throws -> RGBImage? {
        guard let target else { return nil }
        return try gl.read(target)
    }
}
