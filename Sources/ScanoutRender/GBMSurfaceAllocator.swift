import ScanoutCore
import ScanoutKMS
import ScanoutDemux
import ScanoutDecode

/// The software stand-in's pictures in GBM buffer objects of a display's device: real DMA-BUFs
/// (R8 + GR88, R16 + GR1616, one buffer per plane, as `GBMFrame` makes them), which EGL on that
/// device imports per plane and a KMS plane can scan out, so a GPU consumer takes them with no
/// copy. The stand-in's download maps the buffers (`gbm_bo_map`).
///
/// `@unchecked Sendable` because `DecoderOptions` (which carries it) is Sendable: a `gbm_device`
/// is not thread-safe, so this allocator is only safe with a decoder that runs on the thread
/// that uses `device` (`scanout play` decodes and draws on one thread).
public final class GBMSurfaceAllocator: SurfaceAllocator, @unchecked Sendable {
    public let device: GBMDevice
    public var name: String { "GBM \(device.path)" }

    public init(device: GBMDevice) { self.device = device }

    public func allocate(_ frame: VideoFrame) throws -> any SurfaceMemory {
        do {
            return try GBMFrame(device: device, frame: frame)
        } catch {
            throw HardwareFailure.exportFailed("\(error)")
        }
    }
}

/// The buffers of a `GBMFrame` as the stand-in's export describes them; the frame owns them and
/// their descriptors.
extension GBMFrame: SurfaceMemory {
    public var layers: [ExportedSurface.Layer] {
        zip(dmabuf.perPlaneFormats(), dmabuf.planes).map { format, plane in
            ExportedSurface.Layer(drmFormat: format.fourcc, planes: [plane])
        }
    }

    public func withReadableLayer<R>(_ index: Int, _ body: (UnsafeRawPointer, Int) throws -> R) throws -> R {
        try buffers[index].withReadablePixels { base, stride in try body(UnsafeRawPointer(base), stride) }
    }
}
