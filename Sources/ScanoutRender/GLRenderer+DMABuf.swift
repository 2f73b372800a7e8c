import CEGL
import CFFmpeg
import ScanoutCore
import ScanoutDemux
import ScanoutDecode

/// Drawing DMA-BUF frames and exported surfaces, and drawing into scanout buffers (`GLRenderTarget`).
extension GLRenderer {
    /// Renders a DMA-BUF frame (NV12 or P010), imported one EGLImage per plane
    /// (`FrameImporter.importDMABuf`), with the same shader as an uploaded nv12 / p010 frame.
    /// The images and their textures are released before this returns.
    public func render(_ frame: DMABufFrame, colorSpace: ColorSpace = .unspecified, colorRange: ColorRange = .unspecified,
                       sampleAspectRatio: Rational = Rational(1, 1)) throws -> RGBImage {
        try render(frame, colorSpace: colorSpace, colorRange: colorRange, sampleAspectRatio: sampleAspectRatio, completion: .readPixels)
    }

    func render(_ frame: DMABufFrame, colorSpace: ColorSpace, colorRange: ColorRange, sampleAspectRatio: Rational,
                        completion: Completion) throws -> RGBImage {
        try context.makeCurrent()
        let t0 = ContinuousClock.now
        let dmabuf = try importer.importDMABuf(frame, colorSpace: colorSpace, colorRange: colorRange)
        return try render(dmabuf, colorSpace: colorSpace, colorRange: colorRange, sampleAspectRatio: sampleAspectRatio,
                          completion: completion, since: t0)
    }

    /// Draws an imported DMA-BUF frame (per-plane textures, or one external image) into `target`,
    /// or into the renderer's framebuffer and reads it back when `target` is nil.
    func render(_ dmabuf: DMABufImport, colorSpace: ColorSpace, colorRange: ColorRange, sampleAspectRatio: Rational,
                target: GLRenderTarget? = nil, since t0: ContinuousClock.Instant) throws -> RGBImage {
        try render(dmabuf, colorSpace: colorSpace, colorRange: colorRange, sampleAspectRatio: sampleAspectRatio,
                   completion: target.map { .target($0) } ?? .readPixels, since: t0)
    }

    func render(_ dmabuf: DMABufImport, colorSpace: ColorSpace, colorRange: ColorRange, sampleAspectRatio: Rational,
                        completion: Completion, since t0: ContinuousClock.Instant) throws -> RGBImage {
        let imported = try dmabuf.imported()
        lastDMABufSingleImage = dmabuf.external
        try uploadOverlayIfChanged()
        let frame = dmabuf.frame
        let picture = Picture(width: frame.width, height: frame.height, sampleAspectRatio: sampleAspectRatio,
                              colorSpace: colorSpace, fullRange: colorRange == .full,
                              formatName: "DMA-BUF \(FourCC.name(frame.fourcc))\(dmabuf.external ? " (one external image)" : "")")
        return try withExtendedLifetime(dmabuf) { try draw(imported, picture, clock: ContinuousClock(), since: t0, completion: completion) }
    }

    /// Renders a hardware decoder's export (`VideoFrame.surface`) through the DMA-BUF import,
    /// with the colour tags and aspect ratio of `frame`. The surface is kept alive until the
    /// images are released.
    public func render(_ surface: ExportedSurface, taggedLike frame: VideoFrame) throws -> RGBImage {
        try render(surface, taggedLike: frame, completion: .readPixels)
    }

    /// `render(_:taggedLike:)`, completed as `completion` says. With `.handOff` the drawing may
    /// still read the surface when this returns: the caller keeps it until the drawing is done.
    func render(_ surface: ExportedSurface, taggedLike frame: VideoFrame, completion: Completion) throws -> RGBImage {
        let dmabuf = try DMABufFrame(surface: surface)
        return try withExtendedLifetime(surface) {
            try render(dmabuf, colorSpace: frame.colorSpace, colorRange: frame.colorRange, sampleAspectRatio: frame.sampleAspectRatio,
                       completion: completion)
        }
    }

    /// Renders `frame` turned by `orientation` into `target` (a scanout buffer), filling it as
    /// `compositor` says (its output size is the target's). No readback: the buffer is what a KMS
    /// plane scans out. Returns when drawing has finished (`glFinish`), so the buffer may be shown.
    public func render(_ frame: VideoFrame, orientation: Orientation, into target: GLRenderTarget) throws {
        let saved = compositor
        compositor.orientation = orientation
        defer { compositor = saved }
        _ = try render(frame, completion: .target(target))
    }

    /// Renders a DMA-BUF frame (NV12 / P010, imported one EGLImage per plane) into `target`.
    public func render(_ frame: DMABufFrame, colorSpace: ColorSpace, colorRange: ColorRange, sampleAspectRatio: Rational,
                       orientation: Orientation, into target: GLRenderTarget) throws {
        let saved = compositor
        compositor.orientation = orientation
        defer { compositor = saved }
        _ = try render(frame, colorSpace: colorSpace, colorRange: colorRange, sampleAspectRatio: sampleAspectRatio,
                       completion: .target(target))
    }
}
