import CEGL
import ScanoutCore
import ScanoutDemux
import ScanoutDecode

/// Drawing one imported picture as a `Composition` says: the canvas, the picture in its
/// rectangle, the layers over it; and completing the draw (wait, read back, or hand off).
extension GLRenderer {
    /// Draws one picture as `composition` says: a canvas of the composition's output size (else
    /// the target's, else the picture's natural size) with one zone that covers it.
    func draw(_ picture: ImportedPicture, _ c: Composition, since t0: ClockTime,
              completion: Completion) throws -> RGBImage {
        let frame = picture.picture
        let sar = frame.sampleAspectRatio.isValid ? frame.sampleAspectRatio : Rational(1, 1)
        let layoutSAR = c.applySampleAspectRatio ? sar : Rational(1, 1)
        let natural = Composition.naturalSize(width: frame.width, height: frame.height, sampleAspectRatio: layoutSAR, orientation: c.orientation)
        let target = completion.target
        let W = target?.width ?? c.outputWidth ?? natural.width, H = target?.height ?? c.outputHeight ?? natural.height
        var outSAR = Rational(1, 1)
        if target == nil, !c.applySampleAspectRatio, sar != Rational(1, 1) {
            outSAR = c.orientation.swapsDimensions ? sar.inverted : sar
        }
        let canvas = Canvas(width: W, height: H, background: c.background,
                            zones: [Canvas.Zone(rect: PixelRect(x: 0, y: 0, width: W, height: H), composition: c)])
        return try draw({ _ in picture }, on: canvas, outputSAR: outSAR, since: t0, completion: completion)
    }

    /// Issues the drawing of `canvas` with `picture(i)` in zone i (`drawCommands`), then completes
    /// it as `completion` says, timing each stage into `lastStats` (upload: bringing the pictures
    /// and layers in; draw: the rest until the drawing is done). The drawn picture carries
    /// `outputSAR` (not square when the sample aspect ratio is carried rather than applied).
    func draw(_ picture: (Int) throws -> ImportedPicture?, on canvas: Canvas, outputSAR: Rational,
              since t0: ClockTime, completion: Completion) throws -> RGBImage {
        // What the GPU reads (an import's images, a hardware picture) lives until the drawing is
        // done: past the readback, or handed off with the drawing.
        var kept: [ImportedPicture] = []
        defer { withExtendedLifetime(kept) {} }
        var importing = Duration.zero
        func timed(_ i: Int) throws -> ImportedPicture? {
            let start = ClockTime.now()
            defer { importing += ClockTime.now() - start }
            let p = try picture(i)
            if let p { kept.append(p) }
            return p
        }
        do {
            try uploadLayers(of: canvas)
            let t1 = ClockTime.now()
            let drawn = try drawCommands(timed, on: canvas, target: completion.target, outputSAR: outputSAR)
            let upload = (t1 - t0 + importing).secondsValue
            let what = kept.map(\.picture.formatName).joined(separator: ", ")
            switch completion {
            case .target, .readPixels:
                glFinish()
                try checkGL("drawing \(what.isEmpty ? "a canvas" : what) into \(drawn.width)x\(drawn.height)")
            case .handOff(let start):
                try checkGL("drawing \(what.isEmpty ? "a canvas" : what) into \(drawn.width)x\(drawn.height)")
                lastStats = GLRenderStats(upload: upload, draw: (ClockTime.now() - t1 - importing).secondsValue, readback: 0)
                try start(drawn)
                return RGBImage(width: 0, height: 0, bytes: [])
            }
            let t2 = ClockTime.now()
            guard case .readPixels = completion else {
                lastStats = GLRenderStats(upload: upload, draw: (t2 - t1 - importing).secondsValue, readback: 0)
                return RGBImage(width: 0, height: 0, bytes: [])
            }
            let image = try readPixels(drawn)
            lastStats = GLRenderStats(upload: upload, draw: (t2 - t1 - importing).secondsValue, readback: (ClockTime.now() - t2).secondsValue)
            return image
        }
    }

    /// Issues the drawing of `canvas` into `target`, or into the renderer's framebuffer (made or
    /// resized to the output) when `target` is nil, and leaves that framebuffer bound: the
    /// background, each zone (a see-through one drawn apart and blended in), the canvas's overlays;
    /// a turned canvas is drawn upright into a texture, then turned into the output, texel for
    /// pixel. Does not wait for the drawing.
    private func drawCommands(_ picture: (Int) throws -> ImportedPicture?, on canvas: Canvas, target: GLRenderTarget?,
                              outputSAR: Rational) throws -> DrawnPicture {
        let out = canvas.outputSize
        let output = try outputFramebuffer(width: out.width, height: out.height, target: target)
        canvasFormat = target?.format ?? .xrgb8888
        if canvasFormat != .xrgb8888, !canvas.turn.isIdentity || canvas.zones.contains(where: { $0.opacity < 1 && $0.opacity > 0 }) {
            throw RenderError.missingFeature("10-bit offscreen textures (a turned canvas or a see-through zone is drawn through an 8-bit one)",
                                             neededFor: "drawing into a \(canvasFormat) target")
        }
        guard !canvas.turn.isIdentity else {
            try drawUpright(picture, on: canvas, framebuffer: output)
            return DrawnPicture(width: out.width, height: out.height, sampleAspectRatio: outputSAR)
        }
        let upright = try textureTarget("canvas", width: canvas.width, height: canvas.height)
        try drawUpright(picture, on: canvas, framebuffer: upright.framebuffer)
        glBindFramebuffer(GLenum(GL_FRAMEBUFFER), output)
        glViewport(0, 0, GLsizei(out.width), GLsizei(out.height))
        let whole = PixelRect(x: 0, y: 0, width: out.width, height: out.height)
        let m = Composition.sourceMap(rect: whole, sourceWidth: canvas.width, sourceHeight: canvas.height, orientation: canvas.turn)
        rgb.use()
        bind(upright.texture, unit: 0, to: "u_image", in: rgb, linear: false)
        rgb.set("u_size", vec2: (Float(canvas.width), Float(canvas.height)))
        rgb.set("u_map", mat3: [m[0], m[3], 0, m[1], m[4], 0, m[2], m[5], 1].map { Float($0) })
        rgb.set("u_rect", vec4: (0, 0, Float(out.width), Float(out.height)))
        rgb.set("u_output", vec2: (Float(out.width), Float(out.height)))
        quad.draw()
        return DrawnPicture(width: out.width, height: out.height, sampleAspectRatio: outputSAR)
    }

    /// The canvas upright into framebuffer `fb` (of the canvas's size), left bound.
    private func drawUpright(_ picture: (Int) throws -> ImportedPicture?, on canvas: Canvas, framebuffer fb: GLuint) throws {
        let W = canvas.width, H = canvas.height
        glBindFramebuffer(GLenum(GL_FRAMEBUFFER), fb)
        glViewport(0, 0, GLsizei(W), GLsizei(H))
        glDisable(GLenum(GL_BLEND))
        setClearColour(canvas.background, for: canvasFormat)
        glClear(GLbitfield(GL_COLOR_BUFFER_BIT))
        for (i, zone) in canvas.zones.enumerated() {
            guard zone.opacity > 0, let visible = zone.rect.clipped(width: W, height: H) else { continue }
            let r = zone.rect
            if zone.opacity >= 1 {
                try drawZone(try picture(i), zone, index: i, origin: (r.x, r.y), outputWidth: W, outputHeight: H, scissor: visible)
                continue
            }
            let own = try textureTarget("zone", width: r.width, height: r.height)
            glBindFramebuffer(GLenum(GL_FRAMEBUFFER), own.framebuffer)
            glViewport(0, 0, GLsizei(r.width), GLsizei(r.height))
            try drawZone(try picture(i), zone, index: i, origin: (0, 0), outputWidth: r.width, outputHeight: r.height,
                         scissor: PixelRect(x: 0, y: 0, width: r.width, height: r.height))
            glBindFramebuffer(GLenum(GL_FRAMEBUFFER), fb)
            glViewport(0, 0, GLsizei(W), GLsizei(H))
            blend(own.texture, at: r, opacity: zone.opacity, outputWidth: W, outputHeight: H)
        }
        let overlays = canvas.overlays.enumerated().map { (Optional($0.element), "canvas.\($0.offset)") }
        drawLayers(overlays, origin: (0, 0), areaWidth: W, areaHeight: H, outputWidth: W, outputHeight: H)
    }

    /// One zone into the bound `W`×`H` framebuffer with its top-left corner at `origin`, clipped
    /// to `scissor`: its background, its picture as its composition lays it out, its layers, its
    /// border.
    private func drawZone(_ picture: ImportedPicture?, _ zone: Canvas.Zone, index: Int, origin: (x: Int, y: Int),
                          outputWidth W: Int, outputHeight H: Int, scissor: PixelRect) throws {
        let c = zone.sized, w = zone.rect.width, h = zone.rect.height
        glEnable(GLenum(GL_SCISSOR_TEST))
        defer { glDisable(GLenum(GL_SCISSOR_TEST)) }
        clear(scissor, to: c.background)
        if let picture {
            let frame = picture.picture
            let sar = frame.sampleAspectRatio.isValid ? frame.sampleAspectRatio : Rational(1, 1)
            let local = Composition.destination(sourceWidth: frame.width, sourceHeight: frame.height,
                                                sampleAspectRatio: c.applySampleAspectRatio ? sar : Rational(1, 1),
                                                orientation: c.orientation, outputWidth: w, outputHeight: h, mode: c.scaling)
            let rect = PixelRect(x: local.x + origin.x, y: local.y + origin.y, width: local.width, height: local.height)
            try drawPicture(picture.imported, frame, orientation: c.orientation, in: rect, outputWidth: W, outputHeight: H)
        }
        drawLayers([(c.overlay, "zone\(index).overlay"), (c.subtitles, "zone\(index).subtitles")], origin: origin,
                   areaWidth: w, areaHeight: h, outputWidth: W, outputHeight: H)
        for strip in zone.border?.strips(of: PixelRect(x: origin.x, y: origin.y, width: w, height: h)) ?? [] {
            if let part = strip.intersection(scissor) { clear(part, to: zone.border!.color) }
        }
    }

    /// Sets the clear colour to `color` as a canvas of `format` holds it: an HDR canvas takes
    /// graphics at BT.2408's reference white (`HDRGraphics`), as the CPU compositor does.
    func setClearColour(_ color: RGBColor, for format: CanvasFormat) {
        if case let .xrgb2101010(range) = format {
            let c = HDRGraphics(range).codes(color)
            glClearColor(Float(c.r) / 1023, Float(c.g) / 1023, Float(c.b) / 1023, 1)
        } else {
            glClearColor(Float(color.r) / 255, Float(color.g) / 255, Float(color.b) / 255, 1)
        }
    }

    /// Fills `rect` of the bound framebuffer with `color` (the scissor test on).
    private func clear(_ rect: PixelRect, to color: RGBColor) {
        glScissor(GLint(rect.x), GLint(rect.y), GLsizei(rect.width), GLsizei(rect.height))
        setClearColour(color, for: canvasFormat)
        glClear(GLbitfield(GL_COLOR_BUFFER_BIT))
    }

    /// An offscreen texture target of `width`×`height` for `use` ("zone": a see-through zone;
    /// "canvas": a turned canvas drawn upright), kept for the next draw of that size.
    private func textureTarget(_ use: String, width: Int, height: Int) throws -> GLTextureTarget {
        let key = "\(use) \(width)x\(height)"
        if let t = zoneTargets[key] { return t }
        let t = try GLTextureTarget(context: context, width: width, height: height)
        zoneTargets[key] = t
        return t
    }

    /// Blends `texture` (an opaque zone drawn apart) over `rect` of the bound framebuffer at `opacity`.
    private func blend(_ texture: GLTexture, at rect: PixelRect, opacity: Double, outputWidth W: Int, outputHeight H: Int) {
        glEnable(GLenum(GL_BLEND))
        glBlendFuncSeparate(GLenum(GL_SRC_ALPHA), GLenum(GL_ONE_MINUS_SRC_ALPHA), GLenum(GL_ONE), GLenum(GL_ONE_MINUS_SRC_ALPHA))
        overlayProgram.use()
        bind(texture, unit: 0, to: "u_overlay", in: overlayProgram, linear: false)
        overlayProgram.set("u_opacity", float: Float(min(max(opacity, 0), 1)))
        overlayProgram.set("u_graphics", int: 0)   // a zone drawn apart is already the target's signal
        overlayProgram.set("u_rect", vec4: (Float(rect.x), Float(rect.y), Float(rect.width), Float(rect.height)))
        overlayProgram.set("u_output", vec2: (Float(W), Float(H)))
        quad.draw()
        glDisable(GLenum(GL_BLEND))
    }

    /// The framebuffer drawn into: `target`'s, or the renderer's own sized `width`×`height`.
    private func outputFramebuffer(width W: Int, height H: Int, target: GLRenderTarget?) throws -> GLuint {
        guard W > 0, H > 0, W <= context.maxTextureSize, H <= context.maxTextureSize else {
            throw RenderError.invalidSize("output \(W)x\(H) (1...\(context.maxTextureSize) per side)")
        }
        if let target { return target.framebuffer }
        if framebuffer?.width != W || framebuffer?.height != H {
            framebuffer = nil
            framebuffer = try GLRenderTarget(context: context, width: W, height: H)
        }
        return framebuffer!.framebuffer
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
            program = try yuvProgram(for: imported, frame, orientation: orientation, rect: rect, upright: upright, map: m)
        }
        program.set("u_map", mat3: map)
        program.set("u_rect", vec4: (Float(rect.x), Float(rect.y), Float(rect.width), Float(rect.height)))
        program.set("u_output", vec2: (Float(W), Float(H)))
        quad.draw()
    }

    /// The yuv.frag program for a Y'CbCr picture, in use with its planes bound and its colour,
    /// sizes and chroma taps set. `map` is the output-to-stored map (`Composition.sourceMap`).
    private func yuvProgram(for imported: FrameImporter.Imported, _ frame: Picture, orientation: Orientation, rect: PixelRect,
                            upright: (width: Int, height: Int), map m: [Double]) throws -> GLProgram {
        let oneToOne = rect.width == upright.width && rect.height == upright.height
        let deep = canvasFormat != .xrgb8888
        let toneMapped = frame.toneMap != nil && !deep
        // Scaled: swscale's own taps where the shader can run them (8-bit, SDR output, not tone
        // mapped), else bilinear.
        let exact = oneToOne || toneMapped || deep ? nil : try exactScaledTaps(for: imported, frame, orientation: orientation, rect: rect)
        // Tone mapped: bilinear chroma from MPEG-2's siting, as the CPU tone mapper and zscale
        // reconstruct it.
        var chroma: YUVProgramKey.Chroma = if toneMapped {
            .bilinear
        } else if oneToOne {
            Self.swscaleChroma(imported.pixelFormat, uprightHeight: upright.height)
        } else if let exact {
            exact.fullChroma ? .scaledFull : .scaledExact
        } else {
            .bilinear
        }
        let table = chroma != .bilinear && tableMath && !toneMapped && !deep
        let axis = orientation.swapsDimensions ? 1 : 0
        // swscale's exact vertical chroma taps where they are known (see the shader).
        let along = axis == 0 ? (imported.lumaSize.1, imported.chromaSize.1) : (imported.lumaSize.0, imported.chromaSize.0)
        if chroma == .cubic, table, along.0 % 2 == 0, along.0 >= 16, along.1 * 2 == along.0, imported.bitDepth <= 14 {
            chroma = .cubicExact
        }
        let program = try yuvProgram(YUVProgramKey(semiPlanar: imported.layout == .semiPlanar, bytePairs: imported.bytePairs,
                                                   luminanceAlpha: imported.luminanceAlpha, chroma: chroma, tableMath: table,
                                                   tone: toneMapped ? frame.toneMap?.program : nil, deep: deep))
        program.use()
        if toneMapped { frame.toneMap?.set(in: program) }
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
        if let key = exact { try setScaledTaps(key, in: program, frame: frame, imported: imported, orientation: orientation, rect: rect) }
        return program
    }

    /// Blends `layers` (each with the key its texture was uploaded under), in order, over the bound
    /// `W`×`H` framebuffer, each placed on the `areaWidth`×`areaHeight` area whose top-left corner
    /// is at `origin` (a zone, or the whole canvas).
    private func drawLayers(_ layers: [(Overlay?, String)], origin: (x: Int, y: Int), areaWidth: Int, areaHeight: Int,
                            outputWidth W: Int, outputHeight H: Int) {
        for (layer, key) in layers {
            guard let o = layer, let t = layerTextures[key]?.texture, o.opacity > 0 else { continue }
            glEnable(GLenum(GL_BLEND))
            glBlendFuncSeparate(GLenum(GL_SRC_ALPHA), GLenum(GL_ONE_MINUS_SRC_ALPHA), GLenum(GL_ONE), GLenum(GL_ONE_MINUS_SRC_ALPHA))
            overlayProgram.use()
            bind(t, unit: 0, to: "u_overlay", in: overlayProgram, linear: true)
            overlayProgram.set("u_opacity", float: Float(min(max(o.opacity, 0), 1)))
            overlayProgram.set("u_graphics", int: canvasFormat == .xrgb2101010(.pq) ? 1 : canvasFormat == .xrgb2101010(.hlg) ? 2 : 0)
            if canvasFormat != .xrgb8888 { overlayProgram.set("u_toBT2020", rowMajor: HDRGraphics.bt709To2020) }
            let at = o.origin(outputWidth: areaWidth, outputHeight: areaHeight)
            overlayProgram.set("u_rect", vec4: (Float(origin.x + at.x), Float(origin.y + at.y), Float(o.image.width), Float(o.image.height)))
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
    func bind(_ t: GLTexture, unit: Int, to uniform: String, in program: GLProgram, linear: Bool) {
        glActiveTexture(GLenum(GL_TEXTURE0) + GLenum(unit))
        t.setFilter(linear: linear)
        program.set(uniform, int: unit)
    }

    /// Uploads the images of `canvas`'s layers (every zone's logo and subtitles, the canvas's
    /// overlays) where they changed since the last draw, and lets go of the textures of layers
    /// no longer drawn.
    func uploadLayers(of canvas: Canvas) throws {
        var wanted: [String: RGBAImage] = [:]
        for (i, zone) in canvas.zones.enumerated() {
            wanted["zone\(i).overlay"] = zone.composition.overlay?.image
            wanted["zone\(i).subtitles"] = zone.composition.subtitles?.image
        }
        for (i, overlay) in canvas.overlays.enumerated() { wanted["canvas.\(i)"] = overlay.image }
        for key in layerTextures.keys where wanted[key] == nil { layerTextures[key] = nil }
        for (key, image) in wanted {
            var texture = layerTextures[key] ?? LayerTexture(name: key)
            try texture.update(image, context: context)
            layerTextures[key] = texture
        }
    }
}
