import Testing
import CEGL
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
@testable import ScanoutRender
import ScanoutTestSupport

// The single-image fallback draws a frame the driver converts as it samples it
// (samplerExternalOES). Its DMA-BUF import needs a DRM device (the vkms guest runs it:
// tools/vm/test-dmabuf.sh); its drawing is checked here for real: an RGBA texture made into an
// EGLImage (EGL_KHR_gl_texture_2D_image, which the surfaceless platform has) and bound as
// GL_TEXTURE_EXTERNAL_OES must come out as the same picture as the texture drawn directly.
@Suite("GL renderer: one external image")
struct GLExternalImageTests {
    /// `frame` (rgba) uploaded, its texture wrapped as an external image in a `DMABufImport`.
    static func externalImport(_ frame: VideoFrame, renderer gl: GLRenderer) throws -> DMABufImport {
        let ctx = gl.context
        try #require(ctx.hasEGLExtension("EGL_KHR_gl_texture_2D_image"))
        let uploaded = try gl.importer.importFrame(frame)
        let create = try ctx.procAddress("eglCreateImageKHR", as: FrameImporter.CreateImage.self)
        let destroy = try ctx.procAddress("eglDestroyImageKHR", as: FrameImporter.DestroyImage.self)
        let targetTexture = try ctx.procAddress("glEGLImageTargetTexture2DOES", as: FrameImporter.TargetTexture.self)
        let image = try EGLImageHandle(context: ctx, create: create, destroy: destroy,
                                       attributes: [EGLint(EGL_GL_TEXTURE_LEVEL_KHR), 0, EGLint(EGL_NONE)],
                                       what: "an rgba texture", target: EGLenum(EGL_GL_TEXTURE_2D_KHR),
                                       buffer: EGLClientBuffer(bitPattern: UInt(uploaded.textures[0].name)))
        let external = try GLTexture(context: ctx, key: .init(internalFormat: 0, width: frame.width, height: frame.height),
                                     target: GLenum(GL_TEXTURE_EXTERNAL_OES))
        image.withImage { targetTexture(GLenum(GL_TEXTURE_EXTERNAL_OES), $0) }
        try checkGL("glEGLImageTargetTexture2DOES(external)")
        let dmabuf = DMABufFrame(width: frame.width, height: frame.height, fourcc: FourCC.code("AB24"), planes: [])
        return DMABufImport(frame: dmabuf, images: [image], textures: [external], external: true)
    }

    @Test("drawn through samplerExternalOES: the same picture as the texture itself, 1:1 and scaled, GLES 3 and GLES 2",
          arguments: [false, true])
    func sameAsTexture(gles2: Bool) throws {
        let (decoded, _) = try decodeFrame(9, of: try Fixtures.path("counter.mp4"))
        let rgba = VideoFrame()
        try Scaler().convert(decoded, to: .rgba, into: rgba)
        let options = gles2 ? GLES2Tests.gles2 : EGLDisplayContext.Options()
        for composition in [Composition(), Composition(outputWidth: 500, outputHeight: 300, orientation: Orientation(rotation: 270))] {
            let gl = try GLRenderer(context: try EGLDisplayContext(options: options))
            let direct = try gl.render(.frame(rgba), as: composition)
            #expect(!gl.lastDMABufSingleImage)
            let imported = try Self.externalImport(rgba, renderer: gl)
            let viaExternal = try gl.render(imported: imported, as: composition)
            #expect(gl.lastDMABufSingleImage)
            #expect(viaExternal.width == direct.width && viaExternal.height == direct.height)
            #expect(viaExternal.bytes == direct.bytes, "\(firstDifference(direct.bytes, viaExternal.bytes))")
            #expect(frameCode(viaExternal) == 9 || composition.orientation.rotation != 0)
        }
    }

    @Test("EGL colour hints for the driver's conversion follow the frame's tags")
    func colourHints() {
        let bt709 = DMABufFrame.colourHints(colorSpace: .bt709, colorRange: .full)
        #expect(bt709 == [EGL_YUV_COLOR_SPACE_HINT_EXT, EGL_ITU_REC709_EXT, EGL_SAMPLE_RANGE_HINT_EXT, EGL_YUV_FULL_RANGE_EXT,
                          EGL_YUV_CHROMA_HORIZONTAL_SITING_HINT_EXT, EGL_YUV_CHROMA_SITING_0_EXT,
                          EGL_YUV_CHROMA_VERTICAL_SITING_HINT_EXT, EGL_YUV_CHROMA_SITING_0_5_EXT])
        #expect(DMABufFrame.colourHints(colorSpace: .unspecified, colorRange: .unspecified).prefix(4)
            == [EGL_YUV_COLOR_SPACE_HINT_EXT, EGL_ITU_REC601_EXT, EGL_SAMPLE_RANGE_HINT_EXT, EGL_YUV_NARROW_RANGE_EXT])
        #expect(DMABufFrame.colourHints(colorSpace: .bt2020ncl, colorRange: .limited)[1] == EGL_ITU_REC2020_EXT)
        let attribs = DMABufFrame.attributes(width: 4, height: 2, fourcc: FourCC.nv12, planes: [.init(buffer: BorrowedDescriptor(3), offset: 0, pitch: 64)],
                                             modifier: nil, extra: bt709)
        #expect(Array(attribs.suffix(9)) == bt709 + [EGLint(EGL_NONE)])
    }
}
