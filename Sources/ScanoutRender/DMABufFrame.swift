import CEGL
import CFFmpeg
import ScanoutCore
import ScanoutDemux
import ScanoutDecode

/// A frame in DMA-BUFs (as VA-API exports it): one buffer, offset and pitch per plane
/// (`DMABufPlane`), a DRM fourcc and an optional format modifier. The buffers are borrowed: their
/// owner (the exported surface, the GBM buffers) outlives the frame's use.
public struct DMABufFrame: Sendable, Equatable {
    public var width: Int
    public var height: Int
    public var fourcc: UInt32
    public var modifier: UInt64?
    public var planes: [DMABufPlane]

    public init(width: Int, height: Int, fourcc: UInt32, modifier: UInt64? = nil, planes: [DMABufPlane]) {
        self.width = width; self.height = height; self.fourcc = fourcc; self.modifier = modifier; self.planes = planes
    }

    public static let linearModifier: UInt64 = 0

    /// The single-plane formats each plane is imported as (empty for an unknown fourcc).
    func perPlaneFormats() -> [(fourcc: UInt32, width: Int, height: Int)] {
        let cw = (width + 1) / 2, ch = (height + 1) / 2
        switch fourcc {
        case FourCC.nv12 where planes.count >= 2: return [(FourCC.r8, width, height), (FourCC.gr88, cw, ch)]
        case FourCC.p010 where planes.count >= 2: return [(FourCC.r16, width, height), (FourCC.gr1616, cw, ch)]
        default: return []
        }
    }

    /// The EGL hints telling the driver how to convert a whole Y'CbCr image: the matrix
    /// (BT.601 when untagged, as the shaders do), the range (limited when unspecified) and
    /// MPEG-2/H.264 chroma siting (co-sited horizontally, centred vertically).
    static func colourHints(colorSpace: ColorSpace, colorRange: ColorRange) -> [EGLint] {
        let matrix: Int32 = switch Scaler.effectiveMatrix(for: colorSpace) {
        case 1: EGL_ITU_REC709_EXT
        case 9, 10: EGL_ITU_REC2020_EXT
        default: EGL_ITU_REC601_EXT
        }
        return [EGL_YUV_COLOR_SPACE_HINT_EXT, matrix,
                EGL_SAMPLE_RANGE_HINT_EXT, colorRange == .full ? EGL_YUV_FULL_RANGE_EXT : EGL_YUV_NARROW_RANGE_EXT,
                EGL_YUV_CHROMA_HORIZONTAL_SITING_HINT_EXT, EGL_YUV_CHROMA_SITING_0_EXT,
                EGL_YUV_CHROMA_VERTICAL_SITING_HINT_EXT, EGL_YUV_CHROMA_SITING_0_5_EXT]
    }

    /// `eglCreateImageKHR` attributes for `planes` (up to 3) of a `fourcc` image, then `extra`.
    static func attributes(width: Int, height: Int, fourcc: UInt32, planes: [DMABufPlane], modifier: UInt64?,
                           extra: [EGLint] = []) -> [EGLint] {
        var a: [EGLint] = [EGLint(EGL_WIDTH), EGLint(width), EGLint(EGL_HEIGHT), EGLint(height),
                           EGLint(EGL_LINUX_DRM_FOURCC_EXT), EGLint(bitPattern: fourcc)]
        let keys: [(Int32, Int32, Int32, Int32, Int32)] = [
            (EGL_DMA_BUF_PLANE0_FD_EXT, EGL_DMA_BUF_PLANE0_OFFSET_EXT, EGL_DMA_BUF_PLANE0_PITCH_EXT, EGL_DMA_BUF_PLANE0_MODIFIER_LO_EXT, EGL_DMA_BUF_PLANE0_MODIFIER_HI_EXT),
            (EGL_DMA_BUF_PLANE1_FD_EXT, EGL_DMA_BUF_PLANE1_OFFSET_EXT, EGL_DMA_BUF_PLANE1_PITCH_EXT, EGL_DMA_BUF_PLANE1_MODIFIER_LO_EXT, EGL_DMA_BUF_PLANE1_MODIFIER_HI_EXT),
            (EGL_DMA_BUF_PLANE2_FD_EXT, EGL_DMA_BUF_PLANE2_OFFSET_EXT, EGL_DMA_BUF_PLANE2_PITCH_EXT, EGL_DMA_BUF_PLANE2_MODIFIER_LO_EXT, EGL_DMA_BUF_PLANE2_MODIFIER_HI_EXT),
        ]
        for (i, p) in planes.prefix(3).enumerated() {
            let k = keys[i]
            a += [k.0, p.buffer.rawValue, k.1, EGLint(bitPattern: p.offset), k.2, EGLint(bitPattern: p.pitch)]
            if let m = modifier {
                a += [k.3, EGLint(bitPattern: UInt32(m & 0xffff_ffff)), k.4, EGLint(bitPattern: UInt32(m >> 32))]
            }
        }
        return a + extra + [EGLint(EGL_NONE)]
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
    /// an uploaded nv12 / p010 frame (R16/GR1616 images sample normalised, so never byte pairs);
    /// an external image as one RGB picture.
    func imported() throws -> FrameImporter.Imported {
        let w = frame.width, h = frame.height
        if external {
            return .init(layout: .external, textures: textures, lumaSize: (w, h), chromaSize: (w, h), bitDepth: 8,
                         bytePairs: false, rawMax: 255, shift: 1, pixelFormat: .rgba, chromaLog2: (0, 0))
        }
        let chroma = ((w + 1) / 2, (h + 1) / 2)
        switch frame.fourcc {
        case FourCC.nv12:
            return .init(layout: .semiPlanar, textures: textures, lumaSize: (w, h), chromaSize: chroma, bitDepth: 8,
                         bytePairs: false, rawMax: 255, shift: 1, pixelFormat: .nv12, chromaLog2: (1, 1))
        case FourCC.p010:
            return .init(layout: .semiPlanar, textures: textures, lumaSize: (w, h), chromaSize: chroma, bitDepth: 10,
                         bytePairs: false, rawMax: 65535, shift: 64, pixelFormat: .p010, chromaLog2: (1, 1))
        default:
            throw RenderError.unsupportedPixelFormat("DRM fourcc \(FourCC.name(frame.fourcc))")
        }
    }
}

/// One EGLImage, destroyed once with the `eglDestroyImageKHR` it was loaded with.
final class EGLImageHandle {
    let context: EGLDisplayContext
    private let image: EGLImageKHR
    private let destroy: FrameImporter.DestroyImage

    /// A DMA-BUF image by default; `target` and `buffer` name another source (a GL texture of
    /// `context`, `EGL_GL_TEXTURE_2D_KHR`, for tests of the external-image drawing).
    init(context: EGLDisplayContext, create: FrameImporter.CreateImage, destroy: @escaping FrameImporter.DestroyImage,
         attributes: [EGLint], what: String, target: EGLenum = EGLenum(EGL_LINUX_DMA_BUF_EXT), buffer: EGLClientBuffer? = nil) throws {
        self.context = context
        self.destroy = destroy
        let made = context.withDisplay { d in
            create(d, buffer == nil ? scanout_egl_no_context() : context.withContext { $0 }, target, buffer, attributes)
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
        guard surface.fourcc == FourCC.nv12 || surface.fourcc == FourCC.p010 else {
            throw RenderError.unsupportedPixelFormat("DRM fourcc \(FourCC.name(surface.fourcc)) (the DMA-BUF path takes NV12 and P010)")
        }
        let planes = surface.layers.flatMap(\.planes)
        guard planes.count == 2 else {
            throw RenderError.importRefused("\(FourCC.name(surface.fourcc)) export with \(planes.count) planes in \(surface.layers.count) layers (2 planes expected)")
        }
        self.init(width: surface.width, height: surface.height, fourcc: surface.fourcc, modifier: surface.modifier,
                  planes: planes)
    }
}
