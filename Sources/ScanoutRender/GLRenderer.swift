import CEGL
import CFFmpeg
import ScanoutCore
import ScanoutDemux
import ScanoutDecode

/// Seconds spent in each stage of the last `GLRenderer.render` (for benchmarks).
public struct GLRenderStats: Equatable, Sendable {
    /// Texture uploads of the frame's planes (and the overlay when it changed).
    public var upload: Double = 0
    /// Drawing: up to `glFinish` when the frame is read back at once; issuing the drawing
    /// commands when a `GLReadbackPipeline` reads it back (the GPU's work then shows in readback).
    public var draw: Double = 0
    /// The CPU's time reading back: `glReadPixels` and packing into rgb24; with a
    /// `GLReadbackPipeline`, starting the read into a pixel buffer plus waiting for the finished
    /// frames' fences, mapping and packing them.
    public var readback: Double = 0
    public var total: Double { upload + draw + readback }
    public init(upload: Double = 0, draw: Double = 0, readback: Double = 0) {
        self.upload = upload; self.draw = draw; self.readback = readback
    }
}

/// The GLES renderer: a decoded frame → textures (`FrameImporter`) → one shader pass into an
/// RGBA framebuffer laid out by the `Composition` each call is given (size, scaling, rotation,
/// sample aspect ratio, background, overlay, subtitles) → `glReadPixels` into an rgb24
/// `RGBImage`, or straight into a scanout buffer (`GLRenderTarget`).
///
/// GLES 3 where the context is GLES 3, GLES 2 otherwise: the shaders are written once to compile
/// as GLSL ES 3.00 and 1.00 (`GLSLDialect`), the importer uses the formats GLES 2 has
/// (LUMINANCE, LUMINANCE_ALPHA, byte pairs for 16-bit samples), and both give the same pixels.
/// GLES 2 additionally needs highp fragment floats and `GL_OES_rgb8_rgba8` (checked at `init`).
///
/// Colour follows the CPU renderer: the matrix is `Scaler.effectiveMatrix` of the frame's tag
/// (BT.601 when untagged), the range the frame's `color_range`; 8 and 10 bit. When the picture is
/// drawn at its stored size (only turned), chroma is reconstructed as swscale does it (nearest
/// for yuv420p with an even height, the unscaled path; otherwise a vertical Keys cubic with
/// a = -0.6 and centred siting, nearest horizontally), so that the output agrees with
/// `CPURenderer` within a channel difference of 3. When scaling, luma and chroma are bilinear,
/// chroma sited as MPEG-2/H.264 (co-sited horizontally, centred vertically). A PQ or HLG frame
/// whose composition asks for tone mapping is mapped to SDR in the same pass (yuv.frag's
/// `TONE_MAP`, `importMapped`), on the CPU where the shader cannot (`lastToneMapping` says why).
///
/// One thread, like its context; not Sendable.
public final class GLRenderer {
    public let context: EGLDisplayContext
    public let importer: FrameImporter
    /// Timings of the last `render`.
    public internal(set) var lastStats = GLRenderStats()
    /// `glReadPixels` calls made so far: one per `render(_:)` that returns pixels, one per `read(_:)`;
    /// drawing into a target reads nothing back.
    public private(set) var readbacks = 0
    /// Whether the last DMA-BUF frame came in as one external image (the driver refused the
    /// per-plane import) rather than one EGLImage per plane.
    public internal(set) var lastDMABufSingleImage = false
    /// Whether drawing at the stored size follows swscale's integer tables (testing hook: false
    /// converts with the float matrix instead).
    var tableMath = true
    /// The taps textures of recent scaled draws (CHROMA_SCALED_EXACT).
    var scaledTaps = ScaledTapsCache()

    /// Why the last hardware frame was drawn from CPU planes rather than from its GPU memory; nil
    /// when it was drawn from GPU memory, or was a software frame.
    public internal(set) var lastImportFallback: String?
    /// Whether this display imports DMA-BUFs (`EGL_EXT_image_dma_buf_import`).
    lazy var importsDMABuf = context.hasEGLExtension("EGL_EXT_image_dma_buf_import")

    /// The shading language the programs are compiled in: GLSL ES 3.00 on GLES 3, 1.00 on GLES 2.
    public let dialect: GLSLDialect

    /// The programs made when a frame first needs them: yuv.frag, one per combination drawn, and
    /// rgb.frag with EXTERNAL for frames that arrive as one external image.
    private enum LazyProgram: Hashable {
        case yuv(YUVProgramKey)
        case external
    }
    private var lazyPrograms: [LazyProgram: GLProgram] = [:]
    let rgb: GLProgram
    let overlayProgram: GLProgram
    private let shaderSources: [String: String]
    let quad: GLQuad
    /// The framebuffer `render(_:)` draws into and reads back.
    var framebuffer: GLRenderTarget?
    /// The textures of the layers drawn last (logos, subtitles, labels), by layer, each uploaded
    /// again only when its image changed.
    var layerTextures: [String: LayerTexture] = [:]
    /// Offscreen texture targets (see-through zones, turned canvases), by use and size.
    var zoneTargets: [String: GLTextureTarget] = [:]
    /// Whether HDR frames a composition asks to tone map are mapped in yuv.frag (the default)
    /// rather than on the CPU; false always maps them on the CPU (`CPUToneMapper`).
    public var toneMapsInShader = true
    /// How the last HDR frame asked to be tone mapped was brought to SDR, and why not in the
    /// shader when it was not; nil until one is drawn.
    public internal(set) var lastToneMapping: GLToneMappingPath?
    /// The CPU tone mapping, where the shader's cannot be used: one mapper per zone, so that a
    /// zone's mapped picture is not rewritten under another's.
    var toneMappers: [CPUToneMapper] = []
    /// Tone mapping programs that did not compile, with the error, so that they are tried once.
    var toneProgramRefusals: [YUVProgramKey: String] = [:]
    /// The format of the target being drawn (set per draw): an HDR signal in a 10-bit target is
    /// drawn with its code values kept (`DEEP`) and graphics placed as `HDRGraphics` says.
    var canvasFormat: CanvasFormat = .xrgb8888
    private var pixels: [UInt8] = []

    /// The embedded shader sources (shaders/*.vert, *.frag), by file name.
    public static var defaultShaderSources: [String: String] { GLShaderSources.all }

    /// `source` with `#define NAME` inserted after its `#version` line (which must stay first).
    public static func defining(_ name: String, in source: String) -> String {
        prepared(source, dialect: .es300, defines: [name])
    }

    /// `source` as compiled in `dialect`: its first line, when it is a `#version` line, replaced by
    /// the dialect's (the shaders are written to compile as both), then `#define NAME 1` for each
    /// of `defines`.
    public static func prepared(_ source: String, dialect: GLSLDialect, defines: [String] = []) -> String {
        var lines = source.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var at = 0
        if lines.first?.hasPrefix("#version") == true {
            lines[0] = dialect.versionLine
            at = 1
        }
        lines.insert(contentsOf: defines.map { "#define \($0) 1" }, at: at)
        return lines.joined(separator: "\n")
    }

    /// Opens a surfaceless context of its own when `context` is nil. `shaderSources` replaces
    /// the embedded shaders (by file name), which is how tests reach the compile and link errors.
    public init(context: EGLDisplayContext? = nil,
                shaderSources: [String: String] = GLRenderer.defaultShaderSources) throws {
        let ctx = try context ?? EGLDisplayContext()
        try ctx.makeCurrent()
        try ctx.requireGLES(2)
        let dialect: GLSLDialect = ctx.glesMajorVersion >= 3 ? .es300 : .es100
        if dialect == .es100 {
            // What GLES 3 has and GLES 2 needs asked for: 32-bit floats in fragment shaders (the
            // conversion's exact integer steps), and an RGBA8 colour buffer.
            var range: [GLint] = [0, 0], precision: GLint = 0
            glGetShaderPrecisionFormat(GLenum(GL_FRAGMENT_SHADER), GLenum(GL_HIGH_FLOAT), &range, &precision)
            guard precision >= 23 else {
                throw RenderError.missingFeature("highp float in fragment shaders (the driver gives \(precision) bits of precision)",
                                                 neededFor: "exact Y'CbCr conversion on GLES 2")
            }
            guard ctx.hasGLExtension("GL_OES_rgb8_rgba8") else {
                throw RenderError.missingExtension("GL_OES_rgb8_rgba8", neededFor: "an RGBA8 framebuffer on GLES 2")
            }
        }
        self.context = ctx
        self.dialect = dialect
        self.shaderSources = shaderSources
        importer = try FrameImporter(context: ctx)
        let vert = try Self.source("video.vert", in: shaderSources, dialect: dialect)
        rgb = try GLProgram(context: ctx, name: "rgb", vertex: vert, fragment: try Self.source("rgb.frag", in: shaderSources, dialect: dialect))
        overlayProgram = try GLProgram(context: ctx, name: "overlay", vertex: vert,
                                       fragment: try Self.source("overlay.frag", in: shaderSources, dialect: dialect))
        quad = GLQuad(context: ctx)
        // The most common program (yuv420p drawn at its size) now, so that a broken shader
        // is reported when the renderer is made rather than at the first frame.
        _ = try yuvProgram(YUVProgramKey(semiPlanar: false, bytePairs: false, luminanceAlpha: false, chroma: .nearest, tableMath: true))
    }

    /// The yuv.frag program for `key`, compiled on first use.
    func yuvProgram(_ key: YUVProgramKey) throws -> GLProgram {
        try lazyProgram(.yuv(key), name: key.programName, fragment: "yuv.frag", defines: key.defines)
    }

    /// The program sampling one external image (compiled on first use; the GLES extension it
    /// needs is checked by the importer before an external image is made).
    func externalImageProgram() throws -> GLProgram {
        try lazyProgram(.external, name: "rgb_external", fragment: "rgb.frag", defines: ["EXTERNAL"])
    }

    private func lazyProgram(_ key: LazyProgram, name: @autoclosure () -> String, fragment: String,
                             defines: @autoclosure () -> [String]) throws -> GLProgram {
        if let p = lazyPrograms[key] { return p }
        let p = try GLProgram(context: context, name: name(),
                              vertex: try Self.source("video.vert", in: shaderSources, dialect: dialect),
                              fragment: try Self.source(fragment, in: shaderSources, dialect: dialect, defines: defines()))
        lazyPrograms[key] = p
        return p
    }

    /// The names of the yuv.frag programs compiled so far (tests).
    var compiledYUVPrograms: [String] {
        lazyPrograms.keys.compactMap { if case .yuv(let k) = $0 { k.programName } else { nil } }.sorted()
    }

    private static func source(_ name: String, in sources: [String: String], dialect: GLSLDialect,
                               defines: [String] = []) throws -> (name: String, source: String) {
        guard let s = sources[name] else { throw RenderError.shaderCompile(name: name, log: "no source for \(name)") }
        return (name, prepared(s, dialect: dialect, defines: defines))
    }

    /// What the drawing needs to know of a frame besides its textures.
    struct Picture {
        var width: Int
        var height: Int
        var sampleAspectRatio: Rational
        var colorSpace: ColorSpace
        var fullRange: Bool
        var formatName: String
        /// Tone mapped in yuv.frag as this says; nil: drawn as coded.
        var toneMap: ShaderToneMap? = nil
    }

    /// How a draw is completed once its commands are issued.
    enum Completion {
        /// Into a scanout buffer: wait for the drawing (`glFinish`); nothing is read back.
        case target(GLRenderTarget)
        /// Wait for the drawing (`glFinish`), then read the framebuffer back at once
        /// (`glReadPixels` into client memory).
        case readPixels
        /// Leave the drawing queued and hand the framebuffer, still bound, to the closure (which
        /// starts an asynchronous readback, `GLReadbackPipeline`).
        case handOff((DrawnPicture) throws -> Void)

        var target: GLRenderTarget? {
            if case .target(let t) = self { t } else { nil }
        }
    }


    /// Draws `source` as `composition` says and reads the picture back, as packed rgb24 (its
    /// size: the composition's output size, or the picture's natural one).
    public func render(_ source: GLSource, as composition: Composition = Composition()) throws -> RGBImage {
        try render(source, as: composition, completion: .readPixels)
    }

    /// Draws `source` into `target` (a scanout buffer, or an offscreen target), filling it as
    /// `composition` says (its output size is the target's). No readback: the buffer is what a
    /// KMS plane scans out. Returns when drawing has finished (`glFinish`), so it may be shown.
    public func render(_ source: GLSource, as composition: Composition, into target: GLRenderTarget) throws {
        _ = try render(source, as: composition, completion: .target(target))
    }

    /// Brings `source` to the GPU, draws it as `composition` says, then completes as `completion`
    /// says (the image is empty unless it says `.readPixels`). With `.handOff` the drawing may
    /// still read the picture when this returns: the caller keeps `source.keepAlive`.
    func render(_ source: GLSource, as composition: Composition, completion: Completion) throws -> RGBImage {
        try context.makeCurrent()
        let t0 = ClockTime.now()
        let picture = try importMapped(source, Self.mapping(composition.toneMapping, into: completion.target), zone: 0)
        return try draw(picture, composition, since: t0, completion: completion)
    }

    /// Draws `canvas` with `sources[i]` in zone i (nil: the zone's background and layers only) and
    /// reads it back as packed rgb24 of the canvas's output size (turned, as `canvas.turn` says).
    public func render(_ sources: [GLSource?], on canvas: Canvas) throws -> RGBImage {
        try render(sources, on: canvas, completion: .readPixels)
    }

    /// Draws `canvas` into `target`, which must have the canvas's output size. No readback.
    public func render(_ sources: [GLSource?], on canvas: Canvas, into target: GLRenderTarget) throws {
        _ = try render(sources, on: canvas, completion: .target(target))
    }

    func render(_ sources: [GLSource?], on canvas: Canvas, completion: Completion) throws -> RGBImage {
        guard sources.count == canvas.zones.count else {
            throw RenderError.invalidSize("\(sources.count) pictures for \(canvas.zones.count) zones")
        }
        if let t = completion.target, t.width != canvas.outputSize.width || t.height != canvas.outputSize.height {
            throw RenderError.invalidSize("canvas \(canvas.outputSize.width)x\(canvas.outputSize.height) into a \(t.width)x\(t.height) target")
        }
        try context.makeCurrent()
        let t0 = ClockTime.now()
        // Each picture is brought in as its zone is drawn: the importer pools its textures by
        // size and format, so two zones' uploads made before drawing would share them.
        return try draw({ i in try sources[i].map { try importMapped($0, Self.mapping(canvas.zones[i].composition.toneMapping, into: completion.target), zone: i) } },
                        on: canvas, outputSAR: Rational(1, 1), since: t0, completion: completion)
    }

    /// The tone mapping a draw into `target` applies: none into a 10-bit target, which keeps
    /// the HDR signal; `mapping` otherwise.
    private static func mapping(_ mapping: ToneMapping?, into target: GLRenderTarget?) -> ToneMapping? {
        target.map { $0.format == .xrgb8888 } ?? true ? mapping : nil
    }

    /// Fills `target` with `background` (a censored frame).
    public func clear(_ target: GLRenderTarget, to bg: RGBColor) throws {
        try context.makeCurrent()
        glBindFramebuffer(GLenum(GL_FRAMEBUFFER), target.framebuffer)
        glViewport(0, 0, GLsizei(target.width), GLsizei(target.height))
        setClearColour(bg, for: target.format)
        glClear(GLbitfield(GL_COLOR_BUFFER_BIT))
        glFinish()
        try checkGL("clearing a \(target.width)x\(target.height) scanout buffer")
    }

    /// A render target for `buffer` (a single-plane RGB DMA-BUF such as a `GBMBuffer`'s: XRGB8888,
    /// or XRGB2101010 for `format` `.xrgb2101010`, which is drawn with the HDR signal kept).
    public func makeTarget(_ buffer: DMABufFrame, format: CanvasFormat = .xrgb8888) throws -> GLRenderTarget {
        try context.makeCurrent()
        return try GLRenderTarget(context: context, buffer: buffer, format: format)
    }

    /// An offscreen render target of GL's own, `width`×`height`: RGBA8, or RGB10_A2 for
    /// `.xrgb2101010` (GLES 3); drawn into like a scanout buffer, read only by `read(_:)` (8 bits)
    /// or `readDeep(_:)` (10).
    public func makeTarget(width: Int, height: Int, format: CanvasFormat = .xrgb8888) throws -> GLRenderTarget {
        try context.makeCurrent()
        guard width > 0, height > 0, width <= context.maxTextureSize, height <= context.maxTextureSize else {
            throw RenderError.invalidSize("render target \(width)x\(height) (1...\(context.maxTextureSize) per side)")
        }
        if format != .xrgb8888, context.glesMajorVersion < 3 {
            throw RenderError.glesVersionTooLow(have: "\(context.glesMajorVersion)", need: "3 (RGB10_A2 render targets)")
        }
        return try GLRenderTarget(context: context, width: width, height: height, format: format)
    }

    /// The pixels of a 10-bit `target` as XRGB2101010 values (R in bits 20–29, G 10–19, B 0–9;
    /// x2rgb10le's layout), rows from the top (`glReadPixels` as RGBA, UNSIGNED_INT_2_10_10_10_REV;
    /// counted in `readbacks`).
    public func readDeep(_ target: GLRenderTarget) throws -> [UInt32] {
        try context.makeCurrent()
        guard target.format != .xrgb8888 else { throw RenderError.invalidSize("readDeep of an 8-bit target") }
        glBindFramebuffer(GLenum(GL_FRAMEBUFFER), target.framebuffer)
        glPixelStorei(GLenum(GL_PACK_ALIGNMENT), 4)
        var abgr = [UInt32](repeating: 0, count: target.width * target.height)
        abgr.withUnsafeMutableBytes {
            glReadPixels(0, 0, GLsizei(target.width), GLsizei(target.height), GLenum(GL_RGBA),
                         GLenum(GL_UNSIGNED_INT_2_10_10_10_REV), $0.baseAddress)
        }
        readbacks += 1
        try checkGL("glReadPixels(RGBA, UNSIGNED_INT_2_10_10_10_REV)")
        // A2B10G10R10 (R in the low bits) to X2R10G10B10.
        return abgr.map { p in (p & 0x3ff) << 20 | (p & 0xffc00) | (p >> 20) & 0x3ff }
    }

    /// The pixels of `target` as rgb24 (`glReadPixels`; counted in `readbacks`).
    public func read(_ target: GLRenderTarget) throws -> RGBImage {
        try context.makeCurrent()
        glBindFramebuffer(GLenum(GL_FRAMEBUFFER), target.framebuffer)
        return try readPixels(DrawnPicture(width: target.width, height: target.height, sampleAspectRatio: Rational(1, 1)))
    }

    /// Reads the bound framebuffer's `drawn` picture back at once (`glReadPixels`), as rgb24.
    func readPixels(_ drawn: DrawnPicture) throws -> RGBImage {
        let count = drawn.rgbaByteCount
        if pixels.count != count { pixels = [UInt8](repeating: 0, count: count) }
        glPixelStorei(GLenum(GL_PACK_ALIGNMENT), 1)
        pixels.withUnsafeMutableBytes {
            glReadPixels(0, 0, GLsizei(drawn.width), GLsizei(drawn.height), GLenum(GL_RGBA), GLenum(GL_UNSIGNED_BYTE), $0.baseAddress)
        }
        readbacks += 1
        try checkGL("glReadPixels")
        return pixels.withUnsafeBytes { drawn.image(fromRGBA: $0) }
    }
}
