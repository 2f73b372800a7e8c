import CEGL
import ScanoutCore
import ScanoutDemux
import ScanoutDecode

/// Drawing one imported picture as a `Composition` says: the canvas, the picture in its
/// rectangle, the layers over it; and completing the draw (wait, read back, or hand off).
extension GLRenderer {
    /// Issues the drawing of `picture` (`drawCommands`), then completes it as `completion` says,
    /// timing each stage into `lastStats`.
    func draw(_ picture: ImportedPicture, _ composition: Composition, clock: ContinuousClock, since t0: ContinuousClock.Instant,
              completion: Completion) throws -> RGBImage {
        try withExtendedLifetime(picture.keepAlive) {
            try uploadLayers(of: composition)
            let t1 = clock.now
            let frame = picture.picture
            let drawn = try drawCommands(picture.imported, frame, composition, target: completion.target)
            switch completion {
            case .target, .readPixels:
                glFinish()
                try checkGL("drawing \(frame.formatName) into \(drawn.width)x\(drawn.height)")
            case .handOff(let start):
                try checkGL("drawing \(frame.formatName) into \(drawn.width)x\(drawn.height)")
                lastStats = GLRenderStats(upload: (t1 - t0).seconds, draw: (clock.now - t1).seconds, readback: 0)
                try start(drawn)
                return RGBImage(width: 0, height: 0, bytes: [])
            }
            let t2 = clock.now
            guard case .readPixels = completion else {
                lastStats = GLRenderStats(upload: (t1 - t0).seconds, draw: (t2 - t1).seconds, readback: 0)
                return RGBImage(width: 0, height: 0, bytes: [])
            }
            let image = try readPixels(drawn)
            lastStats = GLRenderStats(upload: (t1 - t0).seconds, draw: (t2 - t1).seconds, readback: (clock.now - t2).seconds)
            return image
        }
    }

    /// Issues the drawing of `imported` as `c` says into `target`, or into the renderer's
    /// framebuffer (made or resized to the output size) when `target` is nil, and leaves that
    /// framebuffer bound. Does not wait for the drawing.
    private func drawCommands(_ imported: FrameImporter.Imported, _ frame: Picture, _ c: Composition,
                              target: GLRenderTarget?) throws -> DrawnPicture {
        let sar = frame.sampleAspectRatio.isValid ? frame.sampleAspectRatio : Rational(1, 1)
        let layoutSAR = c.applySampleAspectRatio ? sar : Rational(1, 1)
        let natural = Composition.naturalSize(width: frame.width, height: frame.height, sampleAspectRatio: layoutSAR, orientation: c.orientation)
        let W = target?.width ?? c.outputWidth ?? natural.width, H = target?.height ?? c.outputHeight ?? natural.height
        try bindCanvas(width: W, height: H, target: target, background: c.background)
        let rect = Composition.destination(sourceWidth: frame.width, sourceHeight: frame.height, sampleAspectRatio: layoutSAR,
                                           orientation: c.orientation, outputWidth: W, outputHeight: H, mode: c.scaling)
        try drawPicture(imported, frame, orientation: c.orientation, in: rect, outputWidth: W, outputHeight: H)
        drawLayers([c.overlay, c.subtitles], outputWidth: W, outputHeight: H)
        var outSAR = Rational(1, 1)
        if target == nil, !c.applySampleAspectRatio, sar != Rational(1, 1) {
            outSAR = c.orientation.swapsDimensions ? sar.inverted : sar
        }
        return DrawnPicture(width: W, height: H, sampleAspectRatio: outSAR)
    }

    /// Binds `target`, or the renderer's own framebuffer sized `width`×`height`, and clears it to
    /// `background`.
    private func bindCanvas(width W: Int, height H: Int, target: GLRenderTarget?, background: RGBColor) throws {
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
        glClearColor(Float(background.r) / 255, Float(background.g) / 255, Float(background.b) / 255, 1)
        glClear(GLbitfield(GL_COLOR_BUFFER_BIT))
    }

    /// Draws the picture turned by `orientation` into `rect` of the bound `W`×`H` canvas, with
    /// the program its layout and the scale call for.
    private func drawPicture(_ imported: FrameImporter.Imported, _ frame: Picture, orientation: Orientation, in rect: PixelRect,
                             outputWidth W: Int, outputHeight H: Int) throws {
        let m = Composition.sourceMap(rect: rect, sourceWidth: frame.width, sourceHeight: frame.height, orientation: orientation)
        let map: [Float] = [m[0], m[3], 0, m[1], m[4], 0, m[2], m[5], 1].map { Float($0) }
        let upright = PlaneTransformSize.upright(frame.width, frame.height, orientation)
        let oneToOne = rect.width == upright.width && rect.height == upright.height

        let program: GLProgram
        switch imported.layout {
        case .rgb, .external:
            program = imported.layout == .rgb ? rgb : try externalImageProgram()
            program.use()
            bind(imported.textures[0], unit: 0, to: "u_image", in: program, linear: !oneToOne)
            program.set("u_size", vec2: (Float(frame.width), Float(frame.height)))
        case .planar, .semiPlanar:
            program = try yuvProgram(for: imported, frame, orientation: orientation, oneToOne: oneToOne, upright: upright, map: m)
        }
        program.set("u_map", mat3: map)
        program.set("u_rect", vec4: (Float(rect.x), Float(rect.y), Float(rect.width), Float(rect.height)))
        program.set("u_output", vec2: (Float(W), Float(H)))
        quad.draw()
    }

    /// The yuv.frag program for a Y'CbCr picture, in use with its planes bound and its colour,
    /// sizes and chroma taps set. `map` is the output-to-stored map (`Composition.sourceMap`).
    private func yuvProgram(for imported: FrameImporter.Imported, _ frame: Picture, orientation: Orientation, oneToOne: Bool,
                            upright: (width: Int, height: Int), map m: [Double]) throws -> GLProgram {
        var chroma = oneToOne ? Self.swscaleChroma(imported.pixelFormat, uprightHeight: upright.height) : .bilinear
        let table = chroma != .bilinear && tableMath
        let axis = orientation.swapsDimensions ? 1 : 0
        // swscale's exact vertical chroma taps where they are known (see the shader).
        let along = axis == 0 ? (imported.lumaSize.1, imported.chromaSize.1) : (imported.lumaSize.0, imported.chromaSize.0)
        if chroma == .cubic, table, along.0 % 2 == 0, along.0 >= 16, along.1 * 2 == along.0, imported.bitDepth <= 14 {
            chroma = .cubicExact
        }
        let program = try yuvProgram(YUVProgramKey(semiPlanar: imported.layout == .semiPlanar, bytePairs: imported.bytePairs,
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
        return program
    }

    /// Blends the logo and the subtitle layer (in that order) over the bound `W`×`H` canvas.
    private func drawLayers(_ layers: [Overlay?], outputWidth W: Int, outputHeight H: Int) {
        for (layer, texture) in zip(layers, [overlayTexture.texture, subtitleTexture.texture]) {
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

    /// Uploads the logo's and the subtitles' images where they changed since the last draw.
    func uploadLayers(of composition: Composition) throws {
        try overlayTexture.update(composition.overlay?.image, context: context)
        try subtitleTexture.update(composition.subtitles?.image, context: context)
    }
}
