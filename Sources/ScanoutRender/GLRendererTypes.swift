import CEGL
import CFFmpeg
import ScanoutCore
import ScanoutDemux
import ScanoutDecode

/// What one yuv.frag program is compiled for: the `#define`s the shader reads (see its head).
/// Compile-time choices rather than uniform branches, because a software rasteriser such as
/// llvmpipe executes both sides of every branch on every pixel, texture reads included; on a
/// GPU they save registers. Drawn at its stored size, luma is nearest and chroma is what swscale
/// would do; scaled, the picture is swscale's scaled conversion (CHROMA_SCALED_EXACT) where the
/// shader can run it, else bilinear luma and chroma. A tone mapped picture keeps its code
/// values whole: the float matrix (no table math), chroma nearest or cubic at its stored size,
/// bilinear scaled.
struct YUVProgramKey: Hashable, Sendable {
    enum Chroma: String, CaseIterable, Sendable {
        case nearest = "CHROMA_NEAREST"
        case cubic = "CHROMA_CUBIC"
        case cubicExact = "CHROMA_CUBIC_EXACT"
        case bilinear = "CHROMA_BILINEAR"
        case scaledExact = "CHROMA_SCALED_EXACT"
        case scaledFull = "CHROMA_SCALED_FULL"
    }
    var semiPlanar: Bool
    var bytePairs: Bool
    var luminanceAlpha: Bool
    var chroma: Chroma
    var tableMath: Bool
    /// Tone mapped to SDR in the shader (`TONE_MAP`); nil: drawn as coded.
    var tone: ToneProgram? = nil
    /// Drawn into a 10-bit target with its code values kept (`DEEP`).
    var deep = false

    var defines: [String] {
        var d: [String] = []
        if semiPlanar { d.append("SEMI_PLANAR") }
        if bytePairs { d.append("BYTE_PAIRS") }
        if luminanceAlpha { d.append("LUMINANCE_ALPHA") }
        if chroma == .bilinear { d.append("LUMA_BILINEAR") }
        d.append(chroma.rawValue)
        if tableMath { d.append("TABLE_MATH") }
        if let tone { d += tone.defines }
        if deep { d.append("DEEP") }
        return d
    }

    var programName: String { (["yuv"] + defines.map { $0.lowercased() }).joined(separator: "_") }

    /// Every combination the renderer can draw (exact cubic taps only with table math; table
    /// math only at the stored size).
    static var all: [YUVProgramKey] {
        var keys: [YUVProgramKey] = []
        for semiPlanar in [false, true] {
            for bytePairs in [false, true] {
                for luminanceAlpha in [false, true] {
                    for chroma in Chroma.allCases {
                        let tables: [Bool] = switch chroma {
                        case .nearest, .cubic: [false, true]
                        case .cubicExact, .scaledExact, .scaledFull: [true]
                        case .bilinear: [false]
                        }
                        for tableMath in tables {
                            keys.append(YUVProgramKey(semiPlanar: semiPlanar, bytePairs: bytePairs, luminanceAlpha: luminanceAlpha,
                                                      chroma: chroma, tableMath: tableMath))
                        }
                    }
                }
            }
        }
        return keys
    }
}

/// The GLSL ES version the renderer's programs are compiled as.
public enum GLSLDialect: String, Sendable {
    /// GLSL ES 3.00 (GLES 3 contexts): the shaders as stored.
    case es300 = "GLSL ES 3.00"
    /// GLSL ES 1.00 (GLES 2 contexts): the same sources under `#version 100`.
    case es100 = "GLSL ES 1.00"

    var versionLine: String { self == .es300 ? "#version 300 es" : "#version 100" }
}

/// What one draw left in the renderer's framebuffer: its size, and the shape of its pixels (not
/// square when the compositor keeps the stored sample aspect ratio).
struct DrawnPicture: Equatable {
    var width: Int
    var height: Int
    var sampleAspectRatio: Rational

    /// Bytes of the framebuffer read back as RGBA8.
    var rgbaByteCount: Int { width * height * 4 }

    /// The picture as rgb24, from its framebuffer read back as tightly packed RGBA8 rows
    /// (`rgbaByteCount` bytes in glReadPixels' row order; video.vert draws the top row as row 0).
    func image(fromRGBA rgba: UnsafeRawBufferPointer) -> RGBImage {
        precondition(rgba.count >= rgbaByteCount, "DrawnPicture: readback smaller than the picture")
        let n = width * height
        let out = [UInt8](unsafeUninitializedCapacity: n * 3) { dst, initialized in
            for i in 0..<n {
                dst[3 * i] = rgba[4 * i]; dst[3 * i + 1] = rgba[4 * i + 1]; dst[3 * i + 2] = rgba[4 * i + 2]
            }
            initialized = n * 3
        }
        return RGBImage(width: width, height: height, layout: .rgb24, bytes: out, sampleAspectRatio: sampleAspectRatio)
    }
}

enum PlaneTransformSize {
    static func upright(_ w: Int, _ h: Int, _ o: Orientation) -> (width: Int, height: Int) {
        o.swapsDimensions ? (h, w) : (w, h)
    }
}

/// The texture of one RGBA layer drawn over the picture (the logo, the subtitles), uploaded again
/// only when its image changes; released with the renderer's context (`GLTexture`).
struct LayerTexture {
    let name: String
    private(set) var texture: GLTexture?
    private var uploaded: RGBAImage?

    init(name: String) { self.name = name }

    /// Uploads `image` unless it is the one uploaded last; nil drops the texture.
    mutating func update(_ image: RGBAImage?, context: EGLDisplayContext) throws {
        guard let img = image else { texture = nil; uploaded = nil; return }
        if uploaded == img, texture != nil { return }
        guard img.width > 0, img.height > 0, img.width <= context.maxTextureSize, img.height <= context.maxTextureSize else {
            throw RenderError.invalidSize("\(name) \(img.width)x\(img.height)")
        }
        // Unsized RGBA: what GLES 2 takes, and RGBA8 on GLES 3.
        let t = try GLTexture(context: context, key: .init(internalFormat: GL_RGBA, width: img.width, height: img.height))
        t.setFilter(linear: true)
        glPixelStorei(GLenum(GL_UNPACK_ALIGNMENT), 1)
        img.bytes.withUnsafeBytes {
            glTexImage2D(GLenum(GL_TEXTURE_2D), 0, GL_RGBA, GLsizei(img.width), GLsizei(img.height), 0,
                         GLenum(GL_RGBA), GLenum(GL_UNSIGNED_BYTE), $0.baseAddress)
        }
        do { try checkGL("glTexImage2D(\(name))") } catch RenderError.glCall(_, let code) {
            throw RenderError.importRefused("\(name) \(img.width)x\(img.height): GL error 0x\(String(code, radix: 16))")
        }
        texture = t
        uploaded = img
    }
}
