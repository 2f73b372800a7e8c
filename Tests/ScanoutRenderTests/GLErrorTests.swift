import Testing
import CFFmpeg
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
@testable import ScanoutRender
import ScanoutTestSupport

@Suite("GL renderer errors")
struct GLErrorTests {
    @Test("no EGL display for the platform → eglUnavailable")
    func noDisplay() {
        #expect(throws: RenderError.self) { try EGLDisplayContext(platform: .other(0x1234), nativeDisplay: nil) }
        do {
            _ = try EGLDisplayContext(platform: .other(0x1234), nativeDisplay: nil)
        } catch let e as RenderError {
            guard case .eglUnavailable(let why) = e else { Issue.record("got \(e)"); return }
            #expect(why.contains("gave no display"))
            #expect(e.description.hasPrefix("EGL unavailable: "))
        } catch { Issue.record("\(error)") }
        #expect(throws: RenderError.eglUnavailable("the GBM platform needs a GBMDevice that owns the gbm_device (use init(gbmDevicePath:))")) {
            try EGLDisplayContext(platform: .gbm, nativeDisplay: nil)
        }
    }

    @Test("missing extensions are named", arguments: [
        ("EGL_MESA_platform_surfaceless", "the surfaceless EGL platform"),
        ("EGL_KHR_surfaceless_context", "a context with no surface"),
    ])
    func missingExtension(name: String, what: String) {
        // The surfaceless platform alone: its own error, not the next platform's success.
        #expect(throws: RenderError.missingExtension(name, neededFor: what)) {
            try EGLDisplayContext(options: .init(hiddenExtensions: [name], headlessPlatforms: [.surfaceless]))
        }
    }

    @Test("a context below GLES 2 is refused: the renderer needs GLES 2 at least")
    func noGLES2() throws {
        // Mesa answers any GLES request with a 3.2 context; the limit makes it count as older.
        let ctx = try EGLDisplayContext(options: .init(contextVersions: [2], glesVersionLimit: 1))
        #expect(ctx.glesMajorVersion == 1)
        #expect(throws: RenderError.glesVersionTooLow(have: "GLES 1 (\(ctx.glVersion))", need: "2.0")) { try GLRenderer(context: ctx) }
        #expect(throws: RenderError.self) { try FrameImporter(context: ctx) }
    }

    @Test("GLES 2 without GL_OES_rgb8_rgba8: the missing extension is named")
    func gles2WithoutRGBA8() throws {
        let ctx = try EGLDisplayContext(options: .init(contextVersions: [2], hiddenExtensions: ["GL_OES_rgb8_rgba8"], glesVersionLimit: 2))
        #expect(throws: RenderError.missingExtension("GL_OES_rgb8_rgba8", neededFor: "an RGBA8 framebuffer on GLES 2")) {
            try GLRenderer(context: ctx)
        }
        #expect(RenderError.missingFeature("highp float in fragment shaders", neededFor: "exact Y'CbCr conversion on GLES 2").description
            == "the driver lacks highp float in fragment shaders (needed for exact Y'CbCr conversion on GLES 2)")
    }

    @Test("a shader that does not compile: the error names it and quotes the info log")
    func compileError() {
        var sources = GLRenderer.defaultShaderSources
        sources["yuv.frag"] = "#version 300 es\nprecision mediump float;\nout vec4 c;\nvoid main() { c = notDeclaredAnywhere; }\n"
        do {
            _ = try GLRenderer(shaderSources: sources)
            Issue.record("compiled a broken shader")
        } catch let RenderError.shaderCompile(name, log) {
            #expect(name == "yuv.frag")
            #expect(log.contains("notDeclaredAnywhere"))
        } catch { Issue.record("\(error)") }
    }

    @Test("a program that does not link: the error names it and quotes the info log")
    func linkError() {
        var sources = GLRenderer.defaultShaderSources
        // v_uv is a vec2 out of video.vert: a vec3 input cannot link with it.
        sources["overlay.frag"] = "#version 300 es\nprecision mediump float;\nin vec3 v_uv;\nout vec4 c;\nvoid main() { c = vec4(v_uv, 1.0); }\n"
        do {
            _ = try GLRenderer(shaderSources: sources)
            Issue.record("linked mismatched stages")
        } catch let RenderError.programLink(name, log) {
            #expect(name == "overlay")
            #expect(log.contains("v_uv"))
        } catch { Issue.record("\(error)") }
    }

    @Test("a frame larger than the driver's textures: the upload is refused with the GL error")
    func importRefused() throws {
        let ctx = try EGLDisplayContext()
        let frame = VideoFrame()
        frame.pointer.pointee.format = PixelFormat.yuv420p.rawValue
        frame.pointer.pointee.width = Int32(ctx.maxTextureSize + 2)
        frame.pointer.pointee.height = 2
        #expect(av_frame_get_buffer(frame.pointer, 0) >= 0)
        do {
            _ = try GLRenderer(context: ctx).render(.frame(frame), as: Composition(outputWidth: 64, outputHeight: 64))
            Issue.record("the driver took a \(ctx.maxTextureSize + 2)-wide texture")
        } catch let RenderError.importRefused(why) {
            #expect(why.contains("plane 0 of yuv420p"))
            #expect(why.contains("GL error 0x501"))
        } catch { Issue.record("\(error)") }
    }

    @Test("a layout with no import path")
    func unsupportedFormat() throws {
        let (decoded, _) = try decodeFrame(0, of: try Fixtures.path("counter.mp4"))
        let frame = VideoFrame()
        try Scaler().convert(decoded, to: PixelFormat(name: "yuyv422")!, into: frame)
        #expect(throws: RenderError.unsupportedPixelFormat("yuyv422")) { try GLRenderer().render(.frame(frame)) }
    }

    @Test("an output size of zero")
    func invalidSize() throws {
        let (frame, _) = try decodeFrame(0, of: try Fixtures.path("counter.mp4"))
        let gl = try GLRenderer()
        #expect(throws: RenderError.self) { try gl.render(.frame(frame), as: Composition(outputWidth: 0, outputHeight: 240)) }
    }

    @Test("DMA-BUF import without EGL_EXT_image_dma_buf_import is rejected, naming the extension")
    func dmaBufRejected() throws {
        // Surfaceless llvmpipe does not offer the extension; hiding it makes the test the same on drivers that do.
        let ctx = try EGLDisplayContext(options: .init(hiddenExtensions: ["EGL_EXT_image_dma_buf_import"]))
        let frame = DMABufFrame(width: 320, height: 240, fourcc: FourCC.nv12, modifier: 0,
                                planes: [.init(buffer: BorrowedDescriptor(-1), offset: 0, pitch: 320), .init(buffer: BorrowedDescriptor(-1), offset: 320 * 240, pitch: 320)])
        #expect(throws: RenderError.missingExtension("EGL_EXT_image_dma_buf_import", neededFor: "DMA-BUF import")) {
            try FrameImporter(context: ctx).importDMABuf(frame)
        }
        #expect(FourCC.code("NV12") == 0x3231_564E)
        #expect(frame.perPlaneFormats().map(\.fourcc) == [FourCC.code("R8"), FourCC.code("GR88")])
        let attribs = DMABufFrame.attributes(width: 320, height: 240, fourcc: FourCC.nv12, planes: frame.planes, modifier: 0x0100_0000_0000_0001)
        #expect(attribs.count == 6 + 2 * 10 + 1)
        #expect(attribs.last == 0x3038) // EGL_NONE
    }

    @Test("error lines name the missing piece")
    func descriptions() {
        #expect(RenderError.missingExtension("EGL_EXT_image_dma_buf_import", neededFor: "DMA-BUF import").description
                == "EGL_EXT_image_dma_buf_import is missing (needed for DMA-BUF import)")
        #expect(RenderError.shaderCompile(name: "a.frag", log: "0:3(1): error: x\n0:4(1): error: y\n\0").description
                == "shader a.frag does not compile: 0:3(1): error: x; 0:4(1): error: y")
        #expect(RenderError.glesVersionTooLow(have: "OpenGL ES 2.0", need: "3.0").description == "GLES 3.0 needed, the context is OpenGL ES 2.0")
    }
}
