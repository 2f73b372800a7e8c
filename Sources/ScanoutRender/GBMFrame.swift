import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutKMS

/// A CPU frame copied into GBM buffers, one per plane (NV12: R8 + GR88; P010: R16 + GR1616),
/// exported as DMA-BUFs: `dmabuf` is what `FrameImporter.importDMABuf` and
/// `GLRenderer.render(_:colorSpace:colorRange:sampleAspectRatio:)` take. The descriptors in
/// `dmabuf` are owned here and valid while this object lives (EGL duplicates what it keeps).
///
/// yuv420p is converted to nv12 and yuv420p10 to p010 with `Scaler` first (GBM cannot allocate
/// multi-planar NV12/P010 buffers on every driver, vkms's kms_swrast included, and the per-plane
/// path is the one that samples like the texture upload).
public final class GBMFrame {
    public let device: GBMDevice
    /// The frame the buffers were filled from (nv12 or p010).
    public let source: VideoFrame
    public let dmabuf: DMABufFrame
    let buffers: [GBMPlaneBuffer]

    public init(device: GBMDevice, frame: VideoFrame) throws {
        self.device = device
        let semi: VideoFrame
        let fmt = frame.pixelFormat
        if fmt == .nv12 || fmt == .p010 {
            semi = frame
        } else if fmt == .yuv420p || fmt == .yuv420p10 {
            semi = VideoFrame()
            try Scaler().convert(frame, to: fmt == .yuv420p ? .nv12 : .p010, into: semi)
        } else {
            throw RenderError.unsupportedPixelFormat("\(fmt.name) (GBM frames take yuv420p, nv12, yuv420p10le, p010le)")
        }
        source = semi
        let wide = semi.pixelFormat == .p010
        let w = semi.width, h = semi.height
        let cw = (w + 1) / 2, ch = (h + 1) / 2
        let sample = wide ? 2 : 1
        let specs: [(format: UInt32, name: String, width: Int, height: Int, rowBytes: Int)] = wide
            ? [(FourCC.r16, "R16", w, h, w * 2), (FourCC.gr1616, "GR1616", cw, ch, cw * 4)]
            : [(FourCC.r8, "R8", w, h, w), (FourCC.gr88, "GR88", cw, ch, cw * 2)]
        var buffers: [GBMPlaneBuffer] = []
        for (i, s) in specs.enumerated() {
            guard let base = semi.planeData(i) else { throw RenderError.importRefused("plane \(i) of \(semi.pixelFormat.name) has no data") }
            let lineSize = semi.lineSize(i)
            let rowBytes = s.rowBytes
            precondition(rowBytes == s.width * sample * (i == 0 ? 1 : 2))
            do {
                buffers.append(try GBMPlaneBuffer(device: device, width: s.width, height: s.height, format: s.format, formatName: s.name,
                                                  rowBytes: rowBytes) { y, dst in
                    dst.copyMemory(from: UnsafeRawBufferPointer(start: base + y * lineSize, count: rowBytes))
                })
            } catch let GBMError.bufferFailed(why) {
                throw RenderError.importRefused(why)
            }
        }
        self.buffers = buffers
        let mods = Set(buffers.map(\.modifier))
        dmabuf = DMABufFrame(width: w, height: h, fourcc: wide ? FourCC.p010 : FourCC.nv12,
                             modifier: mods.count == 1 ? mods.first! : nil,
                             planes: buffers.map { DMABufPlane(buffer: $0.fd.borrowed, offset: $0.offset, pitch: $0.stride) })
    }

    /// The GBM buffers' format modifier (nil: unknown to GBM).
    public var modifier: UInt64? { dmabuf.modifier }
}

extension GBMBuffer {
    /// The buffer's pixels as packed rgb24 (an XRGB8888 buffer read back, e.g. a writeback capture).
    public func readRGB() throws -> RGBImage {
        try withMappedPixels(write: false) { base, stride in
            let pixels = UnsafeRawBufferPointer(start: base, count: stride * height)
            return format == FourCC.xrgb2101010 ? RGBImage(xrgb2101010: pixels, width: width, height: height, stride: stride)
                : RGBImage(xrgb: pixels, width: width, height: height, stride: stride)
        }
    }

    /// The buffer as a one-plane DMA-BUF frame (the descriptor stays owned here).
    public var dmabuf: DMABufFrame {
        DMABufFrame(width: width, height: height, fourcc: format, modifier: modifier,
                    planes: [DMABufPlane(buffer: fd.borrowed, offset: offset, pitch: stride)])
    }
}
