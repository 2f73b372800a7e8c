import CEGL
import ScanoutCore
import ScanoutDemux
import ScanoutDecode

/// A picture on the GPU, ready to draw: its textures, what the shader needs to know of it, and
/// what must stay alive until the GPU has read it (an import's images, a hardware picture).
struct ImportedPicture {
    var imported: FrameImporter.Imported
    var picture: GLRenderer.Picture
    var keepAlive: [AnyObject]
}

/// Bringing a `GLSource` to the GPU: uploads, CUDA copies, DMA-BUF imports.
extension GLRenderer {
    /// `source` as textures, the way its kind of memory allows.
    func importSource(_ source: GLSource) throws -> ImportedPicture {
        switch source {
        case .frame(let frame):
            let (imported, keep, name) = try importPicture(frame)
            let picture = Picture(width: frame.width, height: frame.height, sampleAspectRatio: frame.sampleAspectRatio,
                                  colorSpace: frame.colorSpace, fullRange: Self.isFullRange(frame), formatName: name)
            return ImportedPicture(imported: imported, picture: picture, keepAlive: keep.map { [$0] } ?? [])
        case .dmabuf(let frame, let space, let range, let sar):
            let dmabuf = try importer.importDMABuf(frame, colorSpace: space, colorRange: range)
            return try prepared(dmabuf, colorSpace: space, colorRange: range, sampleAspectRatio: sar)
        case .surface(let surface, let frame):
            let dmabuf = try importer.importDMABuf(try DMABufFrame(surface: surface), colorSpace: frame.colorSpace, colorRange: frame.colorRange)
            var picture = try prepared(dmabuf, colorSpace: frame.colorSpace, colorRange: frame.colorRange, sampleAspectRatio: frame.sampleAspectRatio)
            picture.keepAlive.append(surface)
            return picture
        }
    }

    /// An imported DMA-BUF frame (per-plane textures, or one external image) described for drawing.
    func prepared(_ dmabuf: DMABufImport, colorSpace: ColorSpace, colorRange: ColorRange, sampleAspectRatio: Rational) throws -> ImportedPicture {
        let imported = try dmabuf.imported()
        lastDMABufSingleImage = dmabuf.external
        let frame = dmabuf.frame
        let picture = Picture(width: frame.width, height: frame.height, sampleAspectRatio: sampleAspectRatio,
                              colorSpace: colorSpace, fullRange: colorRange == .full,
                              formatName: "DMA-BUF \(FourCC.name(frame.fourcc))\(dmabuf.external ? " (one external image)" : "")")
        return ImportedPicture(imported: imported, picture: picture, keepAlive: [dmabuf])
    }

    /// Draws a DMA-BUF import made elsewhere (tests wrap an uploaded texture as one external
    /// image) as `composition` says, and reads it back.
    func render(imported dmabuf: DMABufImport, as composition: Composition) throws -> RGBImage {
        try context.makeCurrent()
        let t0 = ClockTime.now()
        let picture = try prepared(dmabuf, colorSpace: .unspecified, colorRange: .unspecified, sampleAspectRatio: Rational(1, 1))
        return try draw(picture, composition, since: t0, completion: .readPixels)
    }

    /// Puts `frame`'s picture into textures the cheapest way its memory allows: NVDEC's CUDA
    /// memory by a copy on the GPU (CUDA–GL interop); a DMA-BUF export, where this EGL display
    /// imports them, as EGLImages (no copy); otherwise its CPU planes by upload, downloading a
    /// GPU-only frame first. Returns what must stay alive until drawn, and the format's name for
    /// errors. Why a hardware picture went the CPU way is kept in `lastImportFallback`.
    func importPicture(_ frame: VideoFrame) throws -> (imported: FrameImporter.Imported, keepAlive: AnyObject?, name: String) {
        lastImportFallback = nil
        if let cuda = frame.cudaFrame {
            if CUDADriver.hasGLInterop {
                do {
                    return (try importer.importCUDA(cuda), cuda, "CUDA \(cuda.layout.name)")
                } catch {
                    lastImportFallback = "\(error)"
                }
            } else {
                lastImportFallback = "libcuda has no CUDA-GL interop"
            }
        } else if let surface = frame.surface {
            if importsDMABuf {
                do {
                    let dmabuf = try importer.importDMABuf(try DMABufFrame(surface: surface), colorSpace: frame.colorSpace, colorRange: frame.colorRange)
                    let imported = try dmabuf.imported()
                    lastDMABufSingleImage = dmabuf.external
                    importer.transfers?.countImport()
                    return (imported, dmabuf, "DMA-BUF \(FourCC.name(surface.fourcc))")
                } catch {
                    lastImportFallback = "\(error)"
                }
            } else {
                lastImportFallback = "EGL_EXT_image_dma_buf_import is missing on this display"
            }
        }
        try frame.makeCPUResident()
        return (try importer.importFrame(frame), nil, frame.pixelFormat.name)
    }
}
