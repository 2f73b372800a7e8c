import ScanoutCore
import ScanoutDemux
import ScanoutDecode

/// What `GLRenderer` draws: one picture, from wherever its memory is.
public enum GLSource {
    /// A decoded frame, brought to the GPU the cheapest way its memory allows: NVDEC's CUDA
    /// memory by a GPU copy, a DMA-BUF export as EGLImages where the display imports them,
    /// otherwise its CPU planes by upload (`GLRenderer.lastImportFallback` says why).
    case frame(VideoFrame)
    /// A DMA-BUF frame (NV12 or P010) imported one EGLImage per plane, with its colour tags; the
    /// images and their textures are released once it is drawn. The caller keeps the buffers.
    case dmabuf(DMABufFrame, colorSpace: ColorSpace = .unspecified, colorRange: ColorRange = .unspecified,
                sampleAspectRatio: Rational = Rational(1, 1))
    /// A hardware decoder's export drawn through the DMA-BUF import only (no upload to fall back
    /// on), with the colour tags and aspect ratio of `taggedLike`.
    case surface(ExportedSurface, taggedLike: VideoFrame)

    /// What must stay alive until the GPU has read the picture: the hardware picture a frame
    /// holds, or the exported surface.
    public var keepAlive: AnyObject? {
        switch self {
        case .frame(let frame): frame.hardware
        case .dmabuf: nil
        case .surface(let surface, _): surface
        }
    }
}
