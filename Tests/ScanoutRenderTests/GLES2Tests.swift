import Testing
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
@testable import ScanoutRender
import ScanoutTestSupport

// The GLES 2 path on llvmpipe: Mesa answers a GLES 2 request with a GLES 3.2 context, so the
// context's version is capped at 2 (`glesVersionLimit`), and the renderer then does exactly what
// it does on a GLES 2 driver: GLSL ES 1.00 programs, LUMINANCE / LUMINANCE_ALPHA / RGBA textures,
// 16-bit samples as byte pairs, no GL_UNPACK_ROW_LENGTH without GL_EXT_unpack_subimage.
@Suite("GL renderer on GLES 2")
struct GLES2Tests {
    static let gles2 = EGLDisplayContext.Options(contextVersions: [2], glesVersionLimit: 2)

    @Test("a GLES 2 context gets the GLSL ES 1.00 programs and GLES 2 texture formats")
    func dialect() throws {
        let gl = try GLRenderer(context: try EGLDisplayContext(options: Self.gles2))
        #expect(gl.context.glesMajorVersion == 2)
        #expect(gl.dialect == .es100)
        #expect(gl.importer.usesGLES2Formats)
        #expect(!gl.importer.usesNorm16, "GL_EXT_texture_norm16 is a GLES 3.1 extension: byte pairs on GLES 2")
        let gl3 = try GLRenderer()
        #expect(gl3.dialect == .es300 && !gl3.importer.usesGLES2Formats)
    }

    @Test("GLES 2 agrees with the CPU renderer within 3 (8-bit BT.601, BT.709, full range, 10-bit HEVC, rotated)",
          arguments: GLAgreementTests.clips)
    func agreement(name: String) throws {
        let d = try GLAgreementTests.worstDifference(name, options: Self.gles2)
        print("GLES 2 vs CPU \(name): max channel difference \(d)")
        #expect(d <= 3, "\(name): max channel difference \(d)")
    }

    @Test("GLES 2: nv12 (LUMINANCE + LUMINANCE_ALPHA) and p010 (byte pairs) agree too",
          arguments: [("counter.mp4", PixelFormat.nv12), ("hevc10.mkv", PixelFormat.p010)])
    func semiPlanar(name: String, format: PixelFormat) throws {
        let d = try GLAgreementTests.worstDifference(name, options: Self.gles2, convert: format)
        print("GLES 2 vs CPU \(name) as \(format): max channel difference \(d)")
        #expect(d <= 3)
    }

    @Test("GLES 2 draws the same pixels as GLES 3: every layout, scaled, turned, with an overlay")
    func sameAsGLES3() throws {
        var overlayPixels: [UInt8] = []
        for y in 0..<16 { for x in 0..<24 { overlayPixels += [UInt8(x * 10), UInt8(y * 15), 200, UInt8(x * 10 + 15)] } }
        let compositions = [
            Composition(),
            Composition(outputWidth: 200, outputHeight: 180, scaling: .fit, orientation: Orientation(rotation: 90),
                       background: RGBColor(hex: "203040")!,
                       overlay: Overlay(image: RGBAImage(width: 24, height: 16, bytes: overlayPixels), x: 10, y: 20, opacity: 0.7)),
        ]
        let (decoded, _) = try decodeFrame(6, of: try Fixtures.path("counter.mp4"))
        let (deep, _) = try decodeFrame(3, of: try Fixtures.path("hevc10.mkv"))
        var frames: [VideoFrame] = [decoded, deep]
        for f in [PixelFormat.nv12, .rgb24, .rgba] {
            let out = VideoFrame()
            try Scaler().convert(decoded, to: f, into: out)
            frames.append(out)
        }
        let p010 = VideoFrame()
        try Scaler().convert(deep, to: .p010, into: p010)
        frames.append(p010)
        for c in compositions {
            let gl2 = try GLRenderer(context: try EGLDisplayContext(options: Self.gles2))
            let gl3 = try GLRenderer()
            for frame in frames {
                let a = try gl3.render(.frame(frame), as: c), b = try gl2.render(.frame(frame), as: c)
                #expect(a.width == b.width && a.height == b.height)
                #expect((a.maxChannelDifference(b) ?? 99) <= 1, "\(frame.pixelFormat.name): \(firstDifference(a.bytes, b.bytes))")
            }
        }
    }

    @Test("GLES 2 with padded planes (odd sizes) in every layout: the same pixels as GLES 3, with and without GL_EXT_unpack_subimage",
          arguments: [PixelFormat.yuv420p, .nv12, .p010, .yuv420p10, .rgb24])
    func paddedPlanes(format: PixelFormat) throws {
        let (decoded, _) = try decodeFrame(1, of: try Fixtures.path("odd.mkv"))
        let frame = VideoFrame()
        try Scaler().convert(decoded, to: format, into: frame)
        #expect((0..<frame.pixelFormat.planeCount).contains { frame.lineSize($0) > frame.width * (format == .rgb24 ? 3 : 1) })
        let reference = try GLRenderer().render(.frame(frame))
        var packing = Self.gles2
        packing.hiddenExtensions = ["GL_EXT_unpack_subimage"]
        for options in [Self.gles2, packing] {
            let image = try GLRenderer(context: try EGLDisplayContext(options: options)).render(.frame(frame))
            #expect((reference.maxChannelDifference(image) ?? 99) <= 1, "\(format.name) \(options.hiddenExtensions): \(firstDifference(reference.bytes, image.bytes))")
        }
    }

    @Test("GLES 2 without GL_EXT_unpack_subimage: padded planes are packed on the CPU, the picture is the same")
    func packedUploads() throws {
        // 321x241 yuv444p: every plane's line size is padded past its width.
        let (frame, _) = try decodeFrame(2, of: try Fixtures.path("odd.mkv"))
        #expect(frame.lineSize(0) > frame.width)
        var options = Self.gles2
        options.hiddenExtensions = ["GL_EXT_unpack_subimage"]
        let packing = try GLRenderer(context: try EGLDisplayContext(options: options))
        #expect(!packing.importer.usesRowLength)
        let withRowLength = try GLRenderer(context: try EGLDisplayContext(options: Self.gles2))
        #expect(withRowLength.importer.usesRowLength)
        let a = try packing.render(.frame(frame)), b = try withRowLength.render(.frame(frame))
        #expect(packing.importer.packedUploads == 3)
        #expect(withRowLength.importer.packedUploads == 0)
        #expect(a.bytes == b.bytes, "\(firstDifference(a.bytes, b.bytes))")
        let cpu = try CPURenderer().render(frame)
        #expect((cpu.maxChannelDifference(a) ?? 99) <= 3)
    }
}
