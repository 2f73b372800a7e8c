import CEGL
import CFFmpeg
import ScanoutCore
import ScanoutDemux
import ScanoutDecode

/// Puts decoded frames into GL textures, one texture per plane, for `GLRenderer`.
///
/// CPU frames are uploaded with `glTexSubImage2D` straight from the decoder's planes, honouring
/// their line size (`GL_UNPACK_ROW_LENGTH`, in texels; on GLES 2 without
/// `GL_EXT_unpack_subimage`, padded rows are first packed into one scratch buffer). Texture
/// formats:
///
/// | frame | GLES 3 | GLES 2 |
/// | --- | --- | --- |
/// | yuv420p (and other 8-bit planar Y'CbCr) | R8, R8, R8 | LUMINANCE ×3 |
/// | nv12 | R8 + RG8 | LUMINANCE + LUMINANCE_ALPHA |
/// | yuv420p10le (and other 9–16-bit planar, little-endian) | R16 ×3 with `GL_EXT_texture_norm16`, else RG8 byte pairs | LUMINANCE_ALPHA byte pairs ×3 |
/// | p010le | R16 + RG16 with `GL_EXT_texture_norm16`, else RG8 + RGBA8 byte pairs | LUMINANCE_ALPHA byte pairs, the CbCr plane as 2 texels per pair |
/// | rgb24, rgba | RGB8, RGBA8 | RGB, RGBA |
///
/// llvmpipe (Mesa 22.3) offers `GL_EXT_texture_norm16`, so 16-bit samples arrive normalised;
/// without it each 16-bit sample is stored as its two bytes (low, high) in an 8-bit texture and
/// the shader puts them back together (its `BYTE_PAIRS` program). Both paths read texel centres
/// with NEAREST filtering and filter in the shader, so they give the same result. (Integer textures such as R16UI would
/// need a second set of shaders with `usampler2D`; R16F would need a CPU conversion per frame.)
///
/// Textures are pooled: a frame of the same size and layout as the previous one reuses its
/// textures; they are made again only when the size or format changes (`texturesCreated` counts).
/// Same thread as the context; not Sendable.
public final class FrameImporter {
    public let context: EGLDisplayContext
    /// Whether 16-bit samples go into R16/RG16 textures (`GL_EXT_texture_norm16`, GLES 3 only).
    public let usesNorm16: Bool
    /// Whether textures take GLES 2's unsized formats (LUMINANCE, LUMINANCE_ALPHA, RGB, RGBA).
    public let usesGLES2Formats: Bool
    /// Whether uploads can skip a plane's padding (`GL_UNPACK_ROW_LENGTH`: GLES 3, or GLES 2 with
    /// `GL_EXT_unpack_subimage`); otherwise padded planes are packed on the CPU first.
    public let usesRowLength: Bool
    /// DRM formats to treat as refused by the driver when importing DMA-BUFs (fault injection:
    /// how tests and `scanout selftest dmabuf --refuse` reach the single-image fallback).
    public var refusedDMABufFormats: Set<UInt32> = []
    private var pool: [GLTexture?] = []
    private var packed: [UInt8] = []
    /// Textures made since this importer was created (reuse keeps it still).
    public private(set) var texturesCreated = 0
    /// Plane uploads that went through the CPU packing (no `GL_UNPACK_ROW_LENGTH`).
    public private(set) var packedUploads = 0
    /// Counts uploads of decoded pictures and GPU copies into the textures, when set.
    public var transfers: FrameTransfers?
    /// CUDA registrations of the pooled textures, made on the first NVDEC frame.
    private var cudaInterop: CUDAGLInterop?

    public init(context: EGLDisplayContext) throws {
        self.context = context
        try context.makeCurrent()
        try context.requireGLES(2)
        let gles3 = context.glesMajorVersion >= 3
        usesNorm16 = gles3 && context.hasGLExtension("GL_EXT_texture_norm16")
        usesGLES2Formats = !gles3
        usesRowLength = gles3 || context.hasGLExtension("GL_EXT_unpack_subimage")
    }

    /// How a frame's planes are laid out once imported.
    enum Layout: Equatable {
        /// Three planes: Y, Cb, Cr.
        case planar
        /// Y plus interleaved CbCr.
        case semiPlanar
        /// One packed RGB(A) plane.
        case rgb
        /// One external image (`GL_TEXTURE_EXTERNAL_OES`) the driver converts to RGB.
        case external
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
        /// Two-channel 8-bit planes are LUMINANCE_ALPHA (second value in alpha), not RG.
        var luminanceAlpha: Bool = false
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

    /// How a frame of `fmt` at `w`×`h` is stored in textures: one `PlaneFormat` per plane, and
    /// what the shaders need to know (the `Imported` without its textures). Over 60 lines on
    /// purpose: one branch per kind of layout, read as the table in the type's comment.
    private func plan(_ fmt: PixelFormat, width w: Int, height h: Int) throws -> (planes: [PlaneFormat], imported: Imported) {
        guard let d = fmt.descriptor else { throw RenderError.unsupportedPixelFormat(fmt.name) }
        let flags = d.pointee.flags
        guard w > 0, h > 0 else { throw RenderError.invalidSize("frame of \(w)x\(h)") }
        let cw = Int(d.pointee.log2_chroma_w), ch = Int(d.pointee.log2_chroma_h)
        let chromaW = -((-w) >> cw), chromaH = -((-h) >> ch)
        let depth = fmt.bitDepth
        let big = flags & UInt64(AV_PIX_FMT_FLAG_BE) != 0
        let unsupported = flags & UInt64(AV_PIX_FMT_FLAG_HWACCEL | AV_PIX_FMT_FLAG_PAL | AV_PIX_FMT_FLAG_BITSTREAM | AV_PIX_FMT_FLAG_FLOAT) != 0
        if unsupported || big { throw RenderError.unsupportedPixelFormat(fmt.name) }

        let u8 = GLenum(GL_UNSIGNED_BYTE), u16 = GLenum(GL_UNSIGNED_SHORT)
        // 8-bit formats by channel count: sized on GLES 3, unsized (internal format = format) on GLES 2.
        let gles2 = usesGLES2Formats
        func bytes(_ channels: Int, _ pw: Int, _ ph: Int) -> PlaneFormat {
            let (sized, format): (Int32, Int32) = switch channels {
            case 1: gles2 ? (GL_LUMINANCE, GL_LUMINANCE) : (GL_R8, GL_RED)
            case 2: gles2 ? (GL_LUMINANCE_ALPHA, GL_LUMINANCE_ALPHA) : (GL_RG8, GL_RG)
            case 3: gles2 ? (GL_RGB, GL_RGB) : (GL_RGB8, GL_RGB)
            default: gles2 ? (GL_RGBA, GL_RGBA) : (GL_RGBA8, GL_RGBA)
            }
            return PlaneFormat(internalFormat: GLint(sized), format: glEnum(format), type: u8, texelBytes: channels, width: pw, height: ph)
        }
        func one16(_ pw: Int, _ ph: Int) -> PlaneFormat {
            usesNorm16 ? PlaneFormat(internalFormat: GLint(GL_R16_EXT), format: GLenum(GL_RED), type: u16, texelBytes: 2, width: pw, height: ph)
                : bytes(2, pw, ph)
        }
        // Two 16-bit components per texel: RG16, or RGBA8 byte pairs; on GLES 2, one
        // LUMINANCE_ALPHA byte pair per component (the plane twice as wide), the same format as
        // the one-component planes.
        func two16(_ pw: Int, _ ph: Int) -> PlaneFormat {
            usesNorm16 ? PlaneFormat(internalFormat: GLint(GL_RG16_EXT), format: GLenum(GL_RG), type: u16, texelBytes: 4, width: pw, height: ph)
                : gles2 ? bytes(2, pw * 2, ph) : bytes(4, pw, ph)
        }

        var planes: [PlaneFormat]
        var layout: Layout
        var shift: Float = 1
        let wide = depth > 8
        if fmt == .rgb24 {
            planes = [bytes(3, w, h)]
            layout = .rgb
        } else if fmt == .rgba {
            planes = [bytes(4, w, h)]
            layout = .rgb
        } else if fmt.isYUV, fmt.planeCount == 3, Int(d.pointee.nb_components) == 3, depth <= 16 {
            planes = wide ? [one16(w, h), one16(chromaW, chromaH), one16(chromaW, chromaH)]
                : [bytes(1, w, h), bytes(1, chromaW, chromaH), bytes(1, chromaW, chromaH)]
            layout = .planar
        } else if fmt == .nv12 {
            planes = [bytes(1, w, h), bytes(2, chromaW, chromaH)]
            layout = .semiPlanar
        } else if fmt == .p010 {
            planes = [one16(w, h), two16(chromaW, chromaH)]
            layout = .semiPlanar
            shift = 64
        } else {
            throw RenderError.unsupportedPixelFormat(fmt.name)
        }
        let bytePairs = wide && !usesNorm16
        return (planes, Imported(layout: layout, textures: [], lumaSize: (w, h),
                                 chromaSize: layout == .rgb ? (w, h) : (chromaW, chromaH), bitDepth: layout == .rgb ? 8 : depth,
                                 bytePairs: bytePairs, luminanceAlpha: gles2 && !(wide && usesNorm16), rawMax: wide ? 65535 : 255, shift: shift,
                                 pixelFormat: fmt, chromaLog2: (cw, ch)))
    }

    /// The pooled textures for `planes`, made again where a plane's size or format changed.
    /// `willReplace` runs first when any texture is about to be replaced.
    private func textures(for planes: [PlaneFormat], formatName: String, willReplace: () -> Void = {}) throws -> [GLTexture] {
        if pool.count < planes.count { pool += Array(repeating: nil, count: planes.count - pool.count) }
        let keys = planes.map { GLTexture.Key(internalFormat: $0.internalFormat, width: $0.width, height: $0.height) }
        if zip(keys, pool).contains(where: { $0.1?.key != $0.0 }) { willReplace() }
        var textures: [GLTexture] = []
        for (i, p) in planes.enumerated() {
            if let t = pool[i], t.key == keys[i] {
                textures.append(t)
                continue
            }
            pool[i] = nil
            let texture = try GLTexture(context: context, key: keys[i])
            glTexImage2D(GLenum(GL_TEXTURE_2D), 0, p.internalFormat, GLsizei(p.width), GLsizei(p.height), 0, p.format, p.type, nil)
            do { try checkGL("glTexImage2D") } catch RenderError.glCall(_, let code) {
                throw RenderError.importRefused("glTexImage2D(0x\(String(p.internalFormat, radix: 16)), \(p.width)x\(p.height)) for plane \(i) of \(formatName): GL error 0x\(String(code, radix: 16))")
            }
            pool[i] = texture
            texturesCreated += 1
            textures.append(texture)
        }
        return textures
    }

    /// Uploads `frame` (CPU planes) into the pooled textures; counted as an upload when
    /// `transfers` is set.
    func importFrame(_ frame: VideoFrame) throws -> Imported {
        try context.makeCurrent()
        let fmt = frame.pixelFormat
        var (planes, imported) = try plan(fmt, width: frame.width, height: frame.height)
        let textures = try self.textures(for: planes, formatName: fmt.name)
        glPixelStorei(GLenum(GL_UNPACK_ALIGNMENT), 1)
        defer { if usesRowLength { glPixelStorei(GLenum(GL_UNPACK_ROW_LENGTH), 0) } }
        for (i, p) in planes.enumerated() {
            glBindTexture(GLenum(GL_TEXTURE_2D), textures[i].name)
            guard let base = frame.planeData(i) else { throw RenderError.importRefused("plane \(i) of \(fmt.name) has no data") }
            let stride = frame.lineSize(i)
            let rowBytes = p.width * p.texelBytes
            if stride == rowBytes || (usesRowLength && stride > 0 && stride % p.texelBytes == 0) {
                if usesRowLength { glPixelStorei(GLenum(GL_UNPACK_ROW_LENGTH), GLint(stride / p.texelBytes)) }
                glTexSubImage2D(GLenum(GL_TEXTURE_2D), 0, 0, 0, GLsizei(p.width), GLsizei(p.height), p.format, p.type, base)
            } else if !usesRowLength {
                // GLES 2 cannot skip padding: pack the rows into one buffer, upload once.
                let count = rowBytes * p.height
                if packed.count < count { packed = [UInt8](repeating: 0, count: count) }
                packed.withUnsafeMutableBytes { dst in
                    for y in 0..<p.height {
                        dst.baseAddress!.advanced(by: y * rowBytes).copyMemory(from: base + y * stride, byteCount: rowBytes)
                    }
                    glTexSubImage2D(GLenum(GL_TEXTURE_2D), 0, 0, 0, GLsizei(p.width), GLsizei(p.height), p.format, p.type, dst.baseAddress)
                }
                packedUploads += 1
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
        }
        transfers?.countUpload()
        imported.textures = textures
        return imported
    }

    // MARK: CUDA

    /// Copies an NVDEC picture from CUDA memory into the pooled textures on the GPU (CUDA–GL
    /// interop: the textures are registered with CUDA once, then mapped, filled with
    /// `cuMemcpy2D` device-to-array and unmapped for each frame); no byte passes through CPU
    /// memory. Counted as a GPU copy. Throws `importRefused` naming the CUDA call that failed.
    func importCUDA(_ picture: CUDAFrame) throws -> Imported {
        try context.makeCurrent()
        var (planes, imported) = try plan(picture.layout, width: picture.width, height: picture.height)
        let interop = cudaInterop ?? CUDAGLInterop()
        cudaInterop = interop
        let textures = try self.textures(for: planes, formatName: "CUDA \(picture.layout.name)") { interop.unregisterAll() }
        try interop.copy(picture, into: textures, planes: planes.map { (rowBytes: $0.width * $0.texelBytes, rows: $0.height) })
        transfers?.countGPUCopy()
        imported.textures = textures
        return imported
    }

    // MARK: DMA-BUF

    /// Imports a DMA-BUF frame (VA-API's export) as one EGLImage per plane (NV12: R8 + GR88,
    /// P010: R16 + GR1616), falling back to one multi-planar image sampled as
    /// `GL_TEXTURE_EXTERNAL_OES` when the driver refuses the per-plane formats; that image
    /// carries the frame's matrix and range as EGL's colour hints (and MPEG-2 chroma siting),
    /// since the driver does the conversion there. Throws `missingExtension` naming
    /// `EGL_EXT_image_dma_buf_import` where the display lacks it (as Mesa's surfaceless platform
    /// on llvmpipe does), and `importRefused` with both refusals when the fallback fails too.
    public func importDMABuf(_ frame: DMABufFrame, colorSpace: ColorSpace = .unspecified,
                             colorRange: ColorRange = .unspecified) throws -> DMABufImport {
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
        guard !perPlane.isEmpty else { throw RenderError.unsupportedPixelFormat("DRM fourcc \(FourCC.name(frame.fourcc))") }
        do {
            var images: [EGLImageHandle] = []
            var textures: [GLTexture] = []
            for (i, pf) in perPlane.enumerated() {
                let plane = frame.planes[i]
                if refusedDMABufFormats.contains(pf.fourcc) {
                    throw RenderError.importRefused("plane \(i) as \(FourCC.name(pf.fourcc)): refused by fault injection")
                }
                let attribs = DMABufFrame.attributes(width: pf.width, height: pf.height, fourcc: pf.fourcc,
                                                     planes: [plane], modifier: withModifiers ? frame.modifier : nil)
                let image = try EGLImageHandle(context: context, create: createImage, destroy: destroyImage, attributes: attribs,
                                               what: "plane \(i) as \(FourCC.name(pf.fourcc))")
                let texture = try GLTexture(context: context, key: .init(internalFormat: 0, width: pf.width, height: pf.height))
                image.withImage { targetTexture(GLenum(GL_TEXTURE_2D), $0) }
                try checkGL("glEGLImageTargetTexture2DOES")
                images.append(image)
                textures.append(texture)
            }
            return DMABufImport(frame: frame, images: images, textures: textures, external: false)
        } catch let RenderError.importRefused(why) {
            // One image for the whole frame, sampled through the driver's own conversion.
            // The extension the external-sampler shader declares in this context's GLSL dialect.
            let external = context.glesMajorVersion >= 3 ? "GL_OES_EGL_image_external_essl3" : "GL_OES_EGL_image_external"
            guard context.hasGLExtension(external) else {
                throw RenderError.importRefused("\(why); the single-image fallback needs \(external), which is missing")
            }
            if refusedDMABufFormats.contains(frame.fourcc) {
                throw RenderError.importRefused("\(why); the whole \(FourCC.name(frame.fourcc)) frame: refused by fault injection")
            }
            let attribs = DMABufFrame.attributes(width: frame.width, height: frame.height, fourcc: frame.fourcc,
                                                 planes: frame.planes, modifier: withModifiers ? frame.modifier : nil,
                                                 extra: DMABufFrame.colourHints(colorSpace: colorSpace, colorRange: colorRange))
            let image: EGLImageHandle
            do {
                image = try EGLImageHandle(context: context, create: createImage, destroy: destroyImage, attributes: attribs,
                                           what: "the whole \(FourCC.name(frame.fourcc)) frame")
            } catch let RenderError.importRefused(whole) {
                throw RenderError.importRefused("\(why); then \(whole)")
            }
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
