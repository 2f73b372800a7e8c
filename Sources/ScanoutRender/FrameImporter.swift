import CEGL
import CFFmpeg
import ScanoutMedia

/// Puts decoded frames into GL textures, one texture per plane, for `GLRenderer`.
///
/// CPU frames are uploaded with `glTexSubImage2D` straight from the decoder's planes, honouring
/// their line size (`GL_UNPACK_ROW_LENGTH`, in texels). Texture formats (GLES 3):
///
/// | frame | planes |
/// | --- | --- |
/// | yuv420p (and other 8-bit planar Y'CbCr) | R8, R8, R8 |
/// | nv12 | R8 + RG8 |
/// | yuv420p10le (and other 9–16-bit planar, little-endian) | R16 ×3 with `GL_EXT_texture_norm16`, else RG8 byte pairs |
/// | p010le | R16 + RG16 with `GL_EXT_texture_norm16`, else RG8 + RGBA8 byte pairs |
/// | rgb24, rgba | RGB8, RGBA8 |
///
/// llvmpipe (Mesa 22.3) offers `GL_EXT_texture_norm16`, so 16-bit samples arrive normalised;
/// without it each 16-bit sample is stored as its two bytes (low, high) in an 8-bit texture and
/// the shader puts them back together (`u_bytePairs`). Both paths read with `texelFetch` and
/// filter in the shader, so they give the same result. (Integer textures such as R16UI would
/// need a second set of shaders with `usampler2D`; R16F would need a CPU conversion per frame.)
///
/// Textures are pooled: a frame of the same size and layout as the previous one reuses its
/// textures; they are made again only when the size or format changes (`texturesCreated` counts).
/// Same thread as the context; not Sendable.
public final class FrameImporter {
    public let context: EGLDisplayContext
    /// Whether 16-bit samples go into R16/RG16 textures (`GL_EXT_texture_norm16`).
    public let usesNorm16: Bool
    private var pool: [GLTexture?] = []
    /// Textures made since this importer was created (reuse keeps it still).
    public private(set) var texturesCreated = 0

    public init(context: EGLDisplayContext) throws {
        self.context = context
        try context.makeCurrent()
        try context.requireGLES(3)
        usesNorm16 = context.hasGLExtension("GL_EXT_texture_norm16")
    }

    /// How a frame's planes are laid out once imported.
    enum Layout: Equatable {
        /// Three planes: Y, Cb, Cr.
        case planar
        /// Y plus interleaved CbCr.
        case semiPlanar
        /// One packed RGB(A) plane.
        case rgb
    }

    /// A frame in textures: what the renderer's shaders need to read it.
    struct Imported {
        var layout: Layout
        var textures: [GLTexture]
        var lumaSize: (Int, Int)
        var chromaSize: (Int, Int)
        var bitDepth: Int
        /// 16-bit samples stored as (low, high) byte pairs.
        var bytePairs: Bool
        /// A normalised texel times this is the stored sample (255 or 65535).
        var rawMax: Float
        /// Stored sample / shift = code value (64 for P010, 1 otherwise).
        var shift: Float
        var pixelFormat: PixelFormat
        var chromaLog2: (Int, Int)
    }

    /// One plane's texture format and geometry.
    private struct PlaneFormat {
        var internalFormat: GLint
        var format: GLenum
        var type: GLenum
        /// Bytes per texel (what GL_UNPACK_ROW_LENGTH counts in).
        var texelBytes: Int
        var width: Int
        var height: Int
    }

    /// Uploads `frame` (CPU planes) into the pooled textures.
    func importFrame(_ frame: VideoFrame) throws -> Imported {
        try context.makeCurrent()
        let fmt = frame.pixelFormat
        guard let d = fmt.descriptor else { throw RenderError.unsupportedPixelFormat(fmt.name) }
        let flags = d.pointee.flags
        let w = frame.width, h = frame.height
        guard w > 0, h > 0 else { throw RenderError.invalidSize("frame of \(w)x\(h)") }
        let cw = Int(d.pointee.log2_chroma_w), ch = Int(d.pointee.log2_chroma_h)
        let chromaW = -((-w) >> cw), chromaH = -((-h) >> ch)
        let depth = fmt.bitDepth
        let big = flags & UInt64(AV_PIX_FMT_FLAG_BE) != 0
        let unsupported = flags & UInt64(AV_PIX_FMT_FLAG_HWACCEL | AV_PIX_FMT_FLAG_PAL | AV_PIX_FMT_FLAG_BITSTREAM | AV_PIX_FMT_FLAG_FLOAT) != 0
        if unsupported || big { throw RenderError.unsupportedPixelFormat(fmt.name) }

        let u8 = GLenum(GL_UNSIGNED_BYTE), u16 = GLenum(GL_UNSIGNED_SHORT)
        let red = GLenum(GL_RED), rg = GLenum(GL_RG)
        func one16(_ pw: Int, _ ph: Int) -> PlaneFormat {
            usesNorm16 ? PlaneFormat(internalFormat: GLint(GL_R16_EXT), format: red, type: u16, texelBytes: 2, width: pw, height: ph)
                : PlaneFormat(internalFormat: GL_RG8, format: rg, type: u8, texelBytes: 2, width: pw, height: ph)
        }
        func two16(_ pw: Int, _ ph: Int) -> PlaneFormat {
            usesNorm16 ? PlaneFormat(internalFormat: GLint(GL_RG16_EXT), format: rg, type: u16, texelBytes: 4, width: pw, height: ph)
                : PlaneFormat(internalFormat: GL_RGBA8, format: GLenum(GL_RGBA), type: u8, texelBytes: 4, width: pw, height: ph)
        }
        let one8 = { (pw: Int, ph: Int) in PlaneFormat(internalFormat: GL_R8, format: red, type: u8, texelBytes: 1, width: pw, height: ph) }

        var planes: [PlaneFormat]
        var layout: Layout
        var shift: Float = 1
        let wide = depth > 8
        if fmt == .rgb24 {
            planes = [PlaneFormat(internalFormat: GL_RGB8, format: GLenum(GL_RGB), type: u8, texelBytes: 3, width: w, height: h)]
            layout = .rgb
        } else if fmt == .rgba {
            planes = [PlaneFormat(internalFormat: GL_RGBA8, format: GLenum(GL_RGBA), type: u8, texelBytes: 4, width: w, height: h)]
            layout = .rgb
        } else if fmt.isYUV, fmt.planeCount == 3, Int(d.pointee.nb_components) == 3, depth <= 16 {
            planes = wide ? [one16(w, h), one16(chromaW, chromaH), one16(chromaW, chromaH)]
                : [one8(w, h), one8(chromaW, chromaH), one8(chromaW, chromaH)]
            layout = .planar
        } else if fmt == .nv12 {
            planes = [one8(w, h), PlaneFormat(internalFormat: GL_RG8, format: rg, type: u8, texelBytes: 2, width: chromaW, height: chromaH)]
            layout = .semiPlanar
        } else if fmt == .p010 {
            planes = [one16(w, h), two16(chromaW, chromaH)]
            layout = .semiPlanar
            shift = 64
        } else {
            throw RenderError.unsupportedPixelFormat(fmt.name)
        }

        if pool.count < planes.count { pool += Array(repeating: nil, count: planes.count - pool.count) }
        glPixelStorei(GLenum(GL_UNPACK_ALIGNMENT), 1)
        defer { glPixelStorei(GLenum(GL_UNPACK_ROW_LENGTH), 0) }
        var textures: [GLTexture] = []
        for (i, p) in planes.enumerated() {
            let key = GLTexture.Key(internalFormat: p.internalFormat, width: p.width, height: p.height)
            let texture: GLTexture
            if let t = pool[i], t.key == key {
                texture = t
                glBindTexture(GLenum(GL_TEXTURE_2D), t.name)
            } else {
                pool[i] = nil
                texture = try GLTexture(context: context, key: key)
                glTexImage2D(GLenum(GL_TEXTURE_2D), 0, p.internalFormat, GLsizei(p.width), GLsizei(p.height), 0, p.format, p.type, nil)
                do { try checkGL("glTexImage2D") } catch RenderError.glCall(_, let code) {
                    throw RenderError.importRefused("glTexImage2D(0x\(String(p.internalFormat, radix: 16)), \(p.width)x\(p.height)) for plane \(i) of \(fmt.name): GL error 0x\(String(code, radix: 16))")
                }
                pool[i] = texture
                texturesCreated += 1
            }
            guard let base = frame.planeData(i) else { throw RenderError.importRefused("plane \(i) of \(fmt.name) has no data") }
            let stride = frame.lineSize(i)
            if stride > 0, stride % p.texelBytes == 0 {
                glPixelStorei(GLenum(GL_UNPACK_ROW_LENGTH), GLint(stride / p.texelBytes))
                glTexSubImage2D(GLenum(GL_TEXTURE_2D), 0, 0, 0, GLsizei(p.width), GLsizei(p.height), p.format, p.type, base)
            } else {
                // A line size that is not a whole number of texels (or negative): row by row.
                glPixelStorei(GLenum(GL_UNPACK_ROW_LENGTH), 0)
                for y in 0..<p.height {
                    glTexSubImage2D(GLenum(GL_TEXTURE_2D), 0, 0, GLint(y), GLsizei(p.width), 1, p.format, p.type, base + y * stride)
                }
            }
            do { try checkGL("glTexSubImage2D") } catch RenderError.glCall(_, let code) {
                throw RenderError.importRefused("glTexSubImage2D for plane \(i) of \(fmt.name): GL error 0x\(String(code, radix: 16))")
            }
            textures.append(texture)
        }
        let bytePairs = wide && !usesNorm16
        return Imported(layout: layout, textures: textures, lumaSize: (w, h),
                        chromaSize: layout == .rgb ? (w, h) : (chromaW, chromaH), bitDepth: layout == .rgb ? 8 : depth,
                        bytePairs: bytePairs, rawMax: wide ? 65535 : 255, shift: shift,
                        pixelFormat: fmt, chromaLog2: (cw, ch))
    }

    // MARK: DMA-BUF

    /// Imports a DMA-BUF frame (VA-API's export) as one EGLImage per plane (NV12: R8 + GR88,
    /// P010: R16 + GR1616), falling back to one multi-planar image sampled as
    /// `GL_TEXTURE_EXTERNAL_OES` when the driver refuses the per-plane formats. Throws
    /// `missingExtension` naming `EGL_EXT_image_dma_buf_import` where the display lacks it
    /// (as Mesa's surfaceless platform on llvmpipe does).
    public func importDMABuf(_ frame: DMABufFrame) throws -> DMABufImport {
        try context.makeCurrent()
        try context.requireEGLExtension("EGL_KHR_image_base", for: "EGLImage import")
        try context.requireEGLExtension("EGL_EXT_image_dma_buf_import", for: "DMA-BUF import")
        guard context.hasGLExtension("GL_OES_EGL_image") else {
            throw RenderError.missingExtension("GL_OES_EGL_image", neededFor: "binding an EGLImage to a texture")
        }
        let withModifiers = frame.modifier != nil && context.hasEGLExtension("EGL_EXT_image_dma_buf_import_modifiers")
        if frame.modifier != nil, frame.modifier != DMABufFrame.linearModifier, !withModifiers {
            throw RenderError.missingExtension("EGL_EXT_image_dma_buf_import_modifiers", neededFor: "a DMA-BUF with a tiled modifier")
        }
        let createImage = try context.procAddress("eglCreateImageKHR", as: CreateImage.self)
        let destroyImage = try context.procAddress("eglDestroyImageKHR", as: DestroyImage.self)
        let targetTexture = try context.procAddress("glEGLImageTargetTexture2DOES", as: TargetTexture.self)

        let perPlane = frame.perPlaneFormats()
        guard !perPlane.isEmpty else { throw RenderError.unsupportedPixelFormat("DRM fourcc \(DMABufFrame.fourccName(frame.fourcc))") }
        do {
            var images: [EGLImageHandle] = []
            var textures: [GLTexture] = []
            for (i, pf) in perPlane.enumerated() {
                let plane = frame.planes[i]
                let attribs = DMABufFrame.attributes(width: pf.width, height: pf.height, fourcc: pf.fourcc,
                                                     planes: [plane], modifier: withModifiers ? frame.modifier : nil)
                let image = try EGLImageHandle(context: context, create: createImage, destroy: destroyImage, attributes: attribs,
                                               what: "plane \(i) as \(DMABufFrame.fourccName(pf.fourcc))")
                let texture = try GLTexture(context: context, key: .init(internalFormat: 0, width: pf.width, height: pf.height))
                image.withImage { targetTexture(GLenum(GL_TEXTURE_2D), $0) }
                try checkGL("glEGLImageTargetTexture2DOES")
                images.append(image)
                textures.append(texture)
            }
            return DMABufImport(frame: frame, images: images, textures: textures, external: false)
        } catch let RenderError.importRefused(why) {
            // One image for the whole frame, sampled through the driver's own conversion.
            guard context.hasGLExtension("GL_OES_EGL_image_external") else {
                throw RenderError.importRefused("\(why); the single-image fallback needs GL_OES_EGL_image_external, which is missing")
            }
            let attribs = DMABufFrame.attributes(width: frame.width, height: frame.height, fourcc: frame.fourcc,
                                                 planes: frame.planes, modifier: withModifiers ? frame.modifier : nil)
            let image = try EGLImageHandle(context: context, create: createImage, destroy: destroyImage, attributes: attribs,
                                           what: "the whole \(DMABufFrame.fourccName(frame.fourcc)) frame")
            let texture = try GLTexture(context: context, key: .init(internalFormat: 0, width: frame.width, height: frame.height),
                                        target: GLenum(GL_TEXTURE_EXTERNAL_OES))
            image.withImage { targetTexture(GLenum(GL_TEXTURE_EXTERNAL_OES), $0) }
            try checkGL("glEGLImageTargetTexture2DOES(external)")
            return DMABufImport(frame: frame, images: [image], textures: [texture], external: true)
        }
    }

    typealias CreateImage = @convention(c) (EGLDisplay?, EGLContext?, EGLenum, EGLClientBuffer?, UnsafePointer<EGLint>?) -> EGLImageKHR?
    typealias DestroyImage = @convention(c) (EGLDisplay?, EGLImageKHR?) -> EGLBoolean
    typealias TargetTexture = @convention(c) (GLenum, GLeglImageOES?) -> Void
}

/// A frame in DMA-BUFs (as VA-API exports it): one file descriptor, offset and pitch per plane,
/// a DRM fourcc and an optional format modifier. The descriptors stay owned by the caller.
public struct DMABufFrame: Sendable, Equatable {
    public struct Plane: Sendable, Equatable {
        public var fd: Int32
        public var offset: UInt32
        public var pitch: UInt32
        public init(fd: Int32, offset: UInt32, pitch: UInt32) { self.fd = fd; self.offset = offset; self.pitch = pitch }
    }
    public var width: Int
    public var height: Int
    public var fourcc: UInt32
    public var modifier: UInt64?
    public var planes: [Plane]

    public init(width: Int, height: Int, fourcc: UInt32, modifier: UInt64? = nil, planes: [Plane]) {
        self.width = width; self.height = height; self.fourcc = fourcc; self.modifier = modifier; self.planes = planes
    }

    public static func fourcc(_ s: String) -> UInt32 {
        let b = Array(s.utf8) + [32, 32, 32, 32]
        return UInt32(b[0]) | UInt32(b[1]) << 8 | UInt32(b[2]) << 16 | UInt32(b[3]) << 24
    }
    static func fourccName(_ v: UInt32) -> String {
        String(decoding: [UInt8(v & 0xff), UInt8(v >> 8 & 0xff), UInt8(v >> 16 & 0xff), UInt8(v >> 24)], as: UTF8.self)
    }
    public static let nv12 = fourcc("NV12")
    public static let p010 = fourcc("P010")
    static let r8 = fourcc("R8  "), gr88 = fourcc("GR88"), r16 = fourcc("R16 "), gr1616 = fourcc("GR32")
    public static let linearModifier: UInt64 = 0

    /// The single-plane formats each plane is imported as (empty for an unknown fourcc).
    func perPlaneFormats() -> [(fourcc: UInt32, width: Int, height: Int)] {
        let cw = (width + 1) / 2, ch = (height + 1) / 2
        switch fourcc {
        case Self.nv12 where planes.count >= 2: return [(Self.r8, width, height), (Self.gr88, cw, ch)]
        case Self.p010 where planes.count >= 2: return [(Self.r16, width, height), (Self.gr1616, cw, ch)]
        default: return []
        }
    }

    /// `eglCreateImageKHR` attributes for `planes` (up to 3) of a `fourcc` image.
    static func attributes(width: Int, height: Int, fourcc: UInt32, planes: [Plane], modifier: UInt64?) -> [EGLint] {
        var a: [EGLint] = [EGLint(EGL_WIDTH), EGLint(width), EGLint(EGL_HEIGHT), EGLint(height),
                           EGLint(EGL_LINUX_DRM_FOURCC_EXT), EGLint(bitPattern: fourcc)]
        let keys: [(Int32, Int32, Int32, Int32, Int32)] = [
            (EGL_DMA_BUF_PLANE0_FD_EXT, EGL_DMA_BUF_PLANE0_OFFSET_EXT, EGL_DMA_BUF_PLANE0_PITCH_EXT, EGL_DMA_BUF_PLANE0_MODIFIER_LO_EXT, EGL_DMA_BUF_PLANE0_MODIFIER_HI_EXT),
            (EGL_DMA_BUF_PLANE1_FD_EXT, EGL_DMA_BUF_PLANE1_OFFSET_EXT, EGL_DMA_BUF_PLANE1_PITCH_EXT, EGL_DMA_BUF_PLANE1_MODIFIER_LO_EXT, EGL_DMA_BUF_PLANE1_MODIFIER_HI_EXT),
            (EGL_DMA_BUF_PLANE2_FD_EXT, EGL_DMA_BUF_PLANE2_OFFSET_EXT, EGL_DMA_BUF_PLANE2_PITCH_EXT, EGL_DMA_BUF_PLANE2_MODIFIER_LO_EXT, EGL_DMA_BUF_PLANE2_MODIFIER_HI_EXT),
        ]
        for (i, p) in planes.prefix(3).enumerated() {
            let k = keys[i]
            a += [k.0, p.fd, k.1, EGLint(bitPattern: p.offset), k.2, EGLint(bitPattern: p.pitch)]
            if let m = modifier {
                a += [k.3, EGLint(bitPattern: UInt32(m & 0xffff_ffff)), k.4, EGLint(bitPattern: UInt32(m >> 32))]
            }
        }
        return a + [EGLint(EGL_NONE)]
    }
}

/// A DMA-BUF frame bound to textures: owns its EGLImages and textures (released once).
public final class DMABufImport {
    public let frame: DMABufFrame
    let images: [EGLImageHandle]
    let textures: [GLTexture]
    /// One multi-planar image sampled as `GL_TEXTURE_EXTERNAL_OES` (the fallback).
    public let external: Bool
    init(frame: DMABufFrame, images: [EGLImageHandle], textures: [GLTexture], external: Bool) {
        self.frame = frame; self.images = images; self.textures = textures; self.external = external
    }

    /// The per-plane textures described for the semi-planar shader, as `importFrame` describes
    /// an uploaded nv12 / p010 frame (R16/GR1616 images sample normalised, so never byte pairs).
    func imported() throws -> FrameImporter.Imported {
        guard !external else {
            throw RenderError.importRefused("\(DMABufFrame.fourccName(frame.fourcc)) came in as one external image, which the renderer does not sample (only the per-plane path)")
        }
        let w = frame.width, h = frame.height
        let chroma = ((w + 1) / 2, (h + 1) / 2)
        switch frame.fourcc {
        case DMABufFrame.nv12:
            return .init(layout: .semiPlanar, textures: textures, lumaSize: (w, h), chromaSize: chroma, bitDepth: 8,
                         bytePairs: false, rawMax: 255, shift: 1, pixelFormat: .nv12, chromaLog2: (1, 1))
        case DMABufFrame.p010:
            return .init(layout: .semiPlanar, textures: textures, lumaSize: (w, h), chromaSize: chroma, bitDepth: 10,
                         bytePairs: false, rawMax: 65535, shift: 64, pixelFormat: .p010, chromaLog2: (1, 1))
        default:
            throw RenderError.unsupportedPixelFormat("DRM fourcc \(DMABufFrame.fourccName(frame.fourcc))")
        }
    }
}

/// One EGLImage, destroyed once with the `eglDestroyImageKHR` it was loaded with.
final class EGLImageHandle {
    let context: EGLDisplayContext
    private let image: EGLImageKHR
    private let destroy: FrameImporter.DestroyImage

    init(context: EGLDisplayContext, create: FrameImporter.CreateImage, destroy: @escaping FrameImporter.DestroyImage,
         attributes: [EGLint], what: String) throws {
        self.context = context
        self.destroy = destroy
        let made = context.withDisplay { d in
            create(d, scanout_egl_no_context(), EGLenum(EGL_LINUX_DMA_BUF_EXT), nil, attributes)
        }
        guard let made, made != scanout_egl_no_image() else {
            throw RenderError.importRefused("eglCreateImageKHR for \(what): EGL error 0x\(String(eglGetError(), radix: 16))")
        }
        image = made
    }

    func withImage<R>(_ body: (EGLImageKHR) throws -> R) rethrows -> R { try body(image) }

    deinit {
        let i = image
        _ = context.withDisplay { destroy($0, i) }
    }
}

extension DMABufFrame {
    /// The DMA-BUF frame of a hardware decoder's export (`ExportedSurface`): its luma and chroma
    /// planes, whether they came as two single-plane layers (`VA_EXPORT_SURFACE_SEPARATE_LAYERS`)
    /// or as one two-plane layer. The descriptors stay owned by `surface`: keep it alive while
    /// this value is used (`GLRenderer.render(_:ExportedSurface...)` does).
    public init(surface: ExportedSurface) throws {
        guard surface.fourcc == DMABufFrame.nv12 || surface.fourcc == DMABufFrame.p010 else {
            throw RenderError.unsupportedPixelFormat("DRM fourcc \(DMABufFrame.fourccName(surface.fourcc)) (the DMA-BUF path takes NV12 and P010)")
        }
        let planes = surface.layers.flatMap(\.planes)
        guard planes.count == 2 else {
            throw RenderError.importRefused("\(DMABufFrame.fourccName(surface.fourcc)) export with \(planes.count) planes in \(surface.layers.count) layers (2 planes expected)")
        }
        self.init(width: surface.width, height: surface.height, fourcc: surface.fourcc, modifier: surface.modifier,
                  planes: planes.map { Plane(fd: $0.fd, offset: $0.offset, pitch: $0.pitch) })
    }
}
