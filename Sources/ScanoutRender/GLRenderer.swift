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
/// RGBA framebuffer laid out by `compositor` (size, scaling, rotation, sample aspect ratio,
/// background, overlay) → `glReadPixels` into an rgb24 `RGBImage`.
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
/// chroma sited as MPEG-2/H.264 (co-sited horizontally, centred vertically).
///
/// One thread, like its context; not Sendable.
public final class GLRenderer {
    public let context: EGLDisplayContext
    public let importer: FrameImporter
    public var compositor: Compositor
    /// Timings of the last `render`.
    public private(set) var lastStats = GLRenderStats()
    /// `glReadPixels` calls made so far: one per `render(_:)` that returns pixels, one per `read(_:)`;
    /// drawing into a target reads nothing back.
    public private(set) var readbacks = 0
    /// Whether the last DMA-BUF frame came in as one external image (the driver refused the
    /// per-plane import) rather than one EGLImage per plane.
    public internal(set) var lastDMABufSingleImage = false
    /// Whether drawing at the stored size follows swscale's integer tables (testing hook: false
    /// converts with the float matrix instead).
    var tableMath = true

    /// The shading language the programs are compiled in: GLSL ES 3.00 on GLES 3, 1.00 on GLES 2.
    public let dialect: GLSLDialect

    /// The programs made when a frame first needs them: yuv.frag, one per combination drawn, and
    /// rgb.frag with EXTERNAL for frames that arrive as one external image.
    private enum LazyProgram: Hashable {
        case yuv(YUVProgramKey)
        case external
    }
    private var lazyPrograms: [LazyProgram: GLProgram] = [:]
    private let rgb: GLProgram
    private let overlayProgram: GLProgram
    private let shaderSources: [String: String]
    private let quad: GLQuad
    /// The framebuffer `render(_:)` draws into and reads back.
    private var framebuffer: GLRenderTarget?
    /// The logo's texture and the subtitle layer's, each uploaded again only when its image changed.
    private var overlayTexture = LayerTexture(name: "overlay")
    private var subtitleTexture = LayerTexture(name: "subtitles")
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
    public init(context: EGLDisplayContext? = nil, compositor: Compositor = Compositor(),
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
        self.compositor = compositor
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
    private func yuvProgram(_ key: YUVProgramKey) throws -> GLProgram {
        try lazyProgram(.yuv(key), name: key.programName, fragment: "yuv.frag", defines: key.defines)
    }

    /// The program sampling one external image (compiled on first use; the GLES extension it
    /// needs is checked by the importer before an external image is made).
    private func externalImageProgram() throws -> GLProgram {
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

    /// Puts `frame`'s picture into textures the cheapest way its memory allows: NVDEC's CUDA
    /// memory by a copy on the GPU (CUDA–GL interop); a DMA-BUF export, where this EGL display
    /// imports them, as EGLImages (no copy); otherwise its CPU planes by upload, downloading a
    /// GPU-only frame first. Returns what must stay alive until drawn, and the format's name for
    /// errors. Why a hardware picture went the CPU way is kept in `lastImportFallback`.
    private func importPicture(_ frame: VideoFrame) throws -> (imported: FrameImporter.Imported, keepAlive: AnyObject?, name: String) {
        lastImportFallback = nil
        if let cuda = frame.cudaFrame {
            if CUDADriver.hasGLInterop {
                do {
                    return (try importer.importCUDA(cuda), cuda, "CUDA \(cuda.layout.name)")
                } catch {
                    lastImportFallback = "\(error)"
                }
            } else {
                lastImportFallback = "libcuda has no CUDA-GL interop"
            }
        } else if let surface = frame.surface {
            if importsDMABuf {
                do {
                    let dmabuf = try importer.importDMABuf(try DMABufFrame(surface: surface), colorSpace: frame.colorSpace, colorRange: frame.colorRange)
                    let imported = try dmabuf.imported()
                    lastDMABufSingleImage = dmabuf.external
                    importer.transfers?.countImport()
                    return (imported, dmabuf, "DMA-BUF \(FourCC.name(surface.fourcc))")
                } catch {
                    lastImportFallback = "\(error)"
                }
            } else {
                lastImportFallback = "EGL_EXT_image_dma_buf_import is missing on this display"
            }
        }
        try frame.makeCPUResident()
        return (try importer.importFrame(frame), nil, frame.pixelFormat.name)
    }

    /// Why the last hardware frame was drawn from CPU planes rather than from its GPU memory; nil
    /// when it was drawn from GPU memory, or was a software frame.
    public private(set) var lastImportFallback: String?

    /// Whether this display imports DMA-BUFs (`EGL_EXT_image_dma_buf_import`).
    private lazy var importsDMABuf = context.hasEGLExtension("EGL_EXT_image_dma_buf_import")

    /// Renders `frame` as `compositor` says, into packed rgb24.
    public func render(_ frame: VideoFrame) throws -> RGBImage {
        try render(frame, completion: .readPixels)
    }

    /// Uploads and draws `frame`, then completes as `completion` says (the image is empty unless
    /// it says `.readPixels`).
    func render(_ frame: VideoFrame, completion: Completion) throws -> RGBImage {
        try context.makeCurrent()
        let clock = ContinuousClock()
        let t0 = clock.now
        let (imported, keep, name) = try importPicture(frame)
        try uploadOverlayIfChanged()
        let picture = Picture(width: frame.width, height: frame.height, sampleAspectRatio: frame.sampleAspectRatio,
                              colorSpace: frame.colorSpace, fullRange: Self.isFullRange(frame), formatName: name)
        return try withExtendedLifetime(keep) { try draw(imported, picture, clock: clock, since: t0, completion: completion) }
    }

    /// Fills `target` with the compositor's background (a censored frame).
    public func clear(_ target: GLRenderTarget) throws {
        try context.makeCurrent()
        let bg = compositor.background
        glBindFramebuffer(GLenum(GL_FRAMEBUFFER), target.framebuffer)
        glViewport(0, 0, GLsizei(target.width), GLsizei(target.height))
        glClearColor(Float(bg.r) / 255, Float(bg.g) / 255, Float(bg.b) / 255, 1)
        glClear(GLbitfield(GL_COLOR_BUFFER_BIT))
        glFinish()
        try checkGL("clearing a \(target.width)x\(target.height) scanout buffer")
    }

    /// A render target for `buffer` (a single-plane RGB DMA-BUF such as a `GBMBuffer`'s).
    public func makeTarget(_ buffer: DMABufFrame) throws -> GLRenderTarget {
        try context.makeCurrent()
        return try GLRenderTarget(context: context, buffer: buffer)
    }

    /// An offscreen render target of GL's own (RGBA8), `width`×`height`: drawn into like a
    /// scanout buffer, read only by `read(_:)`.
    public func makeTarget(width: Int, height: Int) throws -> GLRenderTarget {
        try context.makeCurrent()
        guard width > 0, height > 0, width <= context.maxTextureSize, height <= context.maxTextureSize else {
            throw RenderError.invalidSize("render target \(width)x\(height) (1...\(context.maxTextureSize) per side)")
        }
        return try GLRenderTarget(context: context, width: width, height: height)
    }

    /// The pixels of `target` as rgb24 (`glReadPixels`; counted in `readbacks`).
    public func read(_ target: GLRenderTarget) throws -> RGBImage {
        try context.makeCurrent()
        glBindFramebuffer(GLenum(GL_FRAMEBUFFER), target.framebuffer)
        return try readPixels(DrawnPicture(width: target.width, height: target.height, sampleAspectRatio: Rational(1, 1)))
    }

    /// Reads the bound framebuffer's `drawn` picture back at once (`glReadPixels`), as rgb24.
    private func readPixels(_ drawn: DrawnPicture) throws -> RGBImage {
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

    /// Issues the drawing of `imported` (`drawCommands`), then completes it as `completion` says,
    /// timing each stage into `lastStats`.
    func draw(_ imported: FrameImporter.Imported, _ frame: Picture, clock: ContinuousClock, since t0: ContinuousClock.Instant,
                      completion: Completion) throws -> RGBImage {
        let t1 = clock.now
        let drawn = try drawCommands(imported, frame, target: completion.target)
        switch completion {
        case .target, .readPixels:
            glFinish()
            try checkGL("drawing \(frame.formatName) into \(drawn.width)x\(drawn.height)")
        case .handOff(let start):
            try checkGL("drawing \(frame.formatName) into \(drawn.width)x\(drawn.height)")
            let t2 = clock.now
            lastStats = GLRenderStats(upload: (t1 - t0).seconds, draw: (t2 - t1).seconds, readback: 0)
            try start(drawn)
            return RGBImage(width: 0, height: 0, bytes: [])
        }
        let t2 = clock.now
        guard case .readPixels = completion else {
            lastStats = GLRenderStats(upload: (t1 - t0).seconds, draw: (t2 - t1).seconds, readback: 0)
            return RGBImage(width: 0, height: 0, bytes: [])
        }
        let image = try readPixels(drawn)
        let t3 = clock.now
        lastStats = GLRenderStats(upload: (t1 - t0).seconds, draw: (t2 - t1).seconds, readback: (t3 - t2).seconds)
        return image
    }

    /// Issues the drawing of `imported` as `compositor` says into `target`, or into the renderer's
    /// framebuffer (made or resized to the output size) when `target` is nil, and leaves that
    /// framebuffer bound. Does not wait for the drawing.
    private func drawCommands(_ imported: FrameImporter.Imported, _ frame: Picture, target: GLRenderTarget?) throws -> DrawnPicture {
        let c = compositor
        let sar = frame.sampleAspectRatio.isValid ? frame.sampleAspectRatio : Rational(1, 1)
        let layoutSAR = c.applySampleAspectRatio ? sar : Rational(1, 1)
        let natural = Compositor.naturalSize(width: frame.width, height: frame.height, sampleAspectRatio: layoutSAR, orientation: c.orientation)
        let W = target?.width ?? c.outputWidth ?? natural.width, H = target?.height ?? c.outputHeight ?? natural.height
        guard W > 0, H > 0, W <= context.maxTextureSize, H <= context.maxTextureSize else {
            throw RenderError.invalidSize("output \(W)x\(H) (1...\(context.maxTextureSize) per side)")
        }
        if let target {
            glBindFramebuffer(GLenum(GL_FRAMEBUFFER), target.framebuffer)
        } else {
            if framebuffer?.width != W || framebuffer?.height != H {
                framebuffer = nil
                framebuffer = try GLRenderTarget(context: context, width: W, height: H)
            }
            glBindFramebuffer(GLenum(GL_FRAMEBUFFER), framebuffer!.framebuffer)
        }
        glViewport(0, 0, GLsizei(W), GLsizei(H))
        glDisable(GLenum(GL_BLEND))
        glClearColor(Float(c.background.r) / 255, Float(c.background.g) / 255, Float(c.background.b) / 255, 1)
        glClear(GLbitfield(GL_COLOR_BUFFER_BIT))

        let rect = Compositor.destination(sourceWidth: frame.width, sourceHeight: frame.height, sampleAspectRatio: layoutSAR,
                                          orientation: c.orientation, outputWidth: W, outputHeight: H, mode: c.scaling)
        let m = Compositor.sourceMap(rect: rect, sourceWidth: frame.width, sourceHeight: frame.height, orientation: c.orientation)
        let map: [Float] = [m[0], m[3], 0, m[1], m[4], 0, m[2], m[5], 1].map { Float($0) }
        let upright = PlaneTransformSize.upright(frame.width, frame.height, c.orientation)
        let oneToOne = rect.width == upright.width && rect.height == upright.height

        let program: GLProgram
        switch imported.layout {
        case .rgb, .external:
            program = imported.layout == .rgb ? rgb : try externalImageProgram()
            program.use()
            bind(imported.textures[0], unit: 0, to: "u_image", in: program, linear: !oneToOne)
            program.set("u_size", vec2: (Float(frame.width), Float(frame.height)))
        case .planar, .semiPlanar:
            var chroma = oneToOne ? Self.swscaleChroma(imported.pixelFormat, uprightHeight: upright.height) : .bilinear
            let table = chroma != .bilinear && tableMath
            let axis = c.orientation.swapsDimensions ? 1 : 0
            // swscale's exact vertical chroma taps where they are known (see the shader).
            let along = axis == 0 ? (imported.lumaSize.1, imported.chromaSize.1) : (imported.lumaSize.0, imported.chromaSize.0)
            if chroma == .cubic, table, along.0 % 2 == 0, along.0 >= 16, along.1 * 2 == along.0, imported.bitDepth <= 14 {
                chroma = .cubicExact
            }
            program = try yuvProgram(YUVProgramKey(semiPlanar: imported.layout == .semiPlanar, bytePairs: imported.bytePairs,
                                                   luminanceAlpha: imported.luminanceAlpha, chroma: chroma, tableMath: table))
            program.use()
            let names = imported.layout == .planar ? ["u_planeY", "u_planeU", "u_planeV"] : ["u_planeY", "u_planeUV"]
            for (i, t) in imported.textures.enumerated() { bind(t, unit: i, to: names[i], in: program, linear: false) }
            setColour(program, frame: frame, imported: imported)
            program.set("u_lumaSize", vec2: (Float(imported.lumaSize.0), Float(imported.lumaSize.1)))
            program.set("u_chromaSize", vec2: (Float(imported.chromaSize.0), Float(imported.chromaSize.1)))
            program.set("u_rawMax", float: imported.rawMax)
            program.set("u_shift", float: imported.shift)
            program.set("u_step8", float: Float(1 << (imported.bitDepth - 8)))
            if table {
                let t = Self.swscaleTables(space: frame.colorSpace, full: frame.fullRange)
                program.set("u_swsCoeffs", vec4: (Float(t.crv), Float(t.cbu), Float(t.cgu), Float(t.cgv)))
                program.set("u_swsLuma", vec3: (Float(t.cy), Float(t.yoffs), Float(t.oy >> 16)))
            }
            program.set("u_cubicAxis", int: axis)
            // Whether the upright rows run against the stored axis: the stored coordinate along it
            // falls as the output row (gl_FragCoord.y) rises.
            program.set("u_cubicFlip", int: (axis == 0 ? m[4] : m[1]) < 0 ? 1 : 0)
            program.set("u_exactScale", float: Float(1 << max(0, 15 - imported.bitDepth)))
        }
        program.set("u_map", mat3: map)
        program.set("u_rect", vec4: (Float(rect.x), Float(rect.y), Float(rect.width), Float(rect.height)))
        program.set("u_output", vec2: (Float(W), Float(H)))
        quad.draw()

        for (layer, texture) in [(c.overlay, overlayTexture.texture), (c.subtitles, subtitleTexture.texture)] {
            guard let o = layer, let t = texture, o.opacity > 0 else { continue }
            glEnable(GLenum(GL_BLEND))
            glBlendFuncSeparate(GLenum(GL_SRC_ALPHA), GLenum(GL_ONE_MINUS_SRC_ALPHA), GLenum(GL_ONE), GLenum(GL_ONE_MINUS_SRC_ALPHA))
            overlayProgram.use()
            bind(t, unit: 0, to: "u_overlay", in: overlayProgram, linear: true)
            overlayProgram.set("u_opacity", float: Float(min(max(o.opacity, 0), 1)))
            let at = o.origin(outputWidth: W, outputHeight: H)
            overlayProgram.set("u_rect", vec4: (Float(at.x), Float(at.y), Float(o.image.width), Float(o.image.height)))
            overlayProgram.set("u_output", vec2: (Float(W), Float(H)))
            quad.draw()
            glDisable(GLenum(GL_BLEND))
        }
        var outSAR = Rational(1, 1)
        if target == nil, !c.applySampleAspectRatio, sar != Rational(1, 1) {
            outSAR = c.orientation.swapsDimensions ? sar.inverted : sar
        }
        return DrawnPicture(width: W, height: H, sampleAspectRatio: outSAR)
    }

    private func setColour(_ program: GLProgram, frame: Picture, imported: FrameImporter.Imported) {
        let full = frame.fullRange
        let (kr, kb) = Self.lumaCoefficients(frame.colorSpace)
        let r = Self.ranges(bits: imported.bitDepth, full: full)
        program.set("u_yRange", vec2: r.y)
        program.set("u_cRange", vec2: r.c)
        program.set("u_matrix", mat3: Self.yuvToRGB(kr: kr, kb: kb))
    }

    /// Binds `t` to texture unit `unit` for sampler `uniform`, filtered linearly or nearest.
    private func bind(_ t: GLTexture, unit: Int, to uniform: String, in program: GLProgram, linear: Bool) {
        glActiveTexture(GLenum(GL_TEXTURE0) + GLenum(unit))
        t.setFilter(linear: linear)
        program.set(uniform, int: unit)
    }

    func uploadOverlayIfChanged() throws {
        try overlayTexture.update(compositor.overlay?.image, context: context)
        try subtitleTexture.update(compositor.subtitles?.image, context: context)
    }
}
