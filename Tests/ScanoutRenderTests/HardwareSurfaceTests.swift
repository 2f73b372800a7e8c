import Testing
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
@testable import ScanoutRender
import ScanoutTestSupport

/// A hardware decoder's export (here the software stand-in's, laid out as VA-API lays out
/// separate layers) as the GL renderer's DMA-BUF input.
@Suite("ExportedSurface → DMABufFrame")
struct HardwareSurfaceTests {
    static func firstFrame(_ clip: String) throws -> VideoFrame {
        let reader = try FrameReader(input: try Fixtures.path(clip),
                                     decoderOptions: DecoderOptions(playerType: .hw, environment: SelectorEnvironment(faults: FaultPlan(standIn: true))))
        let frame = VideoFrame()
        #expect(try reader.next(into: frame))
        return frame
    }

    @Test("NV12 (8-bit) and P010 (10-bit): two planes, the export's descriptors, offsets and pitches",
          arguments: [("counter.mp4", FourCC.nv12), ("hevc10.mkv", FourCC.p010)])
    func mapping(clip: String, fourcc: UInt32) throws {
        let frame = try Self.firstFrame(clip)
        let surface = try #require(frame.surface)
        let d = try DMABufFrame(surface: surface)
        #expect(d.fourcc == fourcc && d.width == 320 && d.height == 240)
        #expect(d.modifier == DMABufFrame.linearModifier)
        let sample = fourcc == FourCC.p010 ? 2 : 1
        #expect(d.planes == surface.layers.map { DMABufPlane(buffer: $0.planes[0].buffer, offset: 0, pitch: $0.planes[0].pitch) })
        #expect(d.planes.map(\.pitch) == [UInt32(((320 * sample) + 63) & ~63), UInt32(((320 * sample) + 63) & ~63)])
        #expect(d.perPlaneFormats().map(\.fourcc) == (fourcc == FourCC.p010 ? [FourCC.r16, FourCC.gr1616] : [FourCC.r8, FourCC.gr88]))
    }

    @Test("surfaceless llvmpipe refuses the import, naming the missing extension")
    func importRefused() throws {
        let frame = try Self.firstFrame("counter.mp4")
        let gl = try GLRenderer()
        #expect(throws: RenderError.missingExtension("EGL_EXT_image_dma_buf_import", neededFor: "DMA-BUF import")) {
            try gl.render(.surface(frame.surface!, taggedLike: frame))
        }
    }
}
