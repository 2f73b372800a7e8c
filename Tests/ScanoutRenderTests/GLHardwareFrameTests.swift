import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutRender
import ScanoutTestSupport
import Testing

/// The GLES renderer given hardware frames held in GPU memory only (the stand-in for VA-API with a
/// GPU destination). Surfaceless llvmpipe cannot import DMA-BUFs, so each frame is downloaded and
/// uploaded, counted as such, and drawn exactly as the software frame is; a CPU frame costs one
/// upload and no download.
@Suite struct GLHardwareFrameTests {
    @Test("GPU-only frame without DMA-BUF import: downloaded and uploaded once each, the software frame's pixels")
    func gpuOnlyFrameFallsBackCounted() throws {
        let transfers = FrameTransfers()
        var options = DecoderOptions(playerType: .hw, environment: SelectorEnvironment(faults: FaultPlan(standIn: true)))
        options.destination = .gpu
        options.transfers = transfers
        let path = try Fixtures.path("counter.mp4")
        let hw = try FrameReader(input: path, decoderOptions: options)
        let sw = try FrameReader(input: path, decoderOptions: DecoderOptions(playerType: .sw))
        let gl = try GLRenderer()
        gl.importer.transfers = transfers
        let reference = try GLRenderer()
        let frame = VideoFrame(), softwareFrame = VideoFrame()
        for i in 1...4 {
            #expect(try hw.next(into: frame) && (try sw.next(into: softwareFrame)))
            #expect(frame.isGPUOnly)
            let image = try gl.render(.frame(frame))
            #expect(gl.lastImportFallback == "EGL_EXT_image_dma_buf_import is missing on this display")
            #expect(image == (try reference.render(.frame(softwareFrame))))
            #expect(transfers.counts == TransferCounts(downloads: i, uploads: i))
        }
        // A software frame: one upload, nothing else.
        let counted = FrameTransfers()
        gl.importer.transfers = counted
        _ = try gl.render(.frame(softwareFrame))
        #expect(gl.lastImportFallback == nil)
        #expect(counted.counts == TransferCounts(uploads: 1))
    }
}
