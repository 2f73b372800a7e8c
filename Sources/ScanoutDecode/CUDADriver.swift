import CFFmpeg
import CScanoutShims
import ScanoutCore
import ScanoutDemux

/// NVIDIA's CUDA driver as Scanout reaches it: `libcuda.so.1` (and NVDEC's `libnvcuvid.so.1`)
/// opened at run time with `dlopen`, never linked, so that the binary builds and runs on machines
/// without NVIDIA's driver and says why NVDEC is unavailable there. The libraries stay loaded for
/// the life of the process once found. Thread-safe (the loading happens once, under a lock in C).
public enum CUDADriver {
    /// What a CUDA probe found: the first device's name, or why CUDA cannot be used.
    static func probe() -> Result<String, HardwareUnavailable> {
        var why = [CChar](repeating: 0, count: 512)
        guard scanout_cuda_load(&why, why.count) == 0 else { return .failure(HardwareUnavailable(reason: .noCUDADriver(String(cString: why)))) }
        let status = scanout_cuda_init()
        guard status == 0 else { return .failure(HardwareUnavailable(reason: .cuInitFailed(status: status, name: errorName(status)))) }
        var count: Int32 = 0
        let r = scanout_cuda_device_count(&count)
        guard r == 0 else { return .failure(HardwareUnavailable(reason: .cuInitFailed(status: r, name: "cuDeviceGetCount: " + errorName(r)))) }
        guard count > 0 else { return .failure(HardwareUnavailable(reason: .noCUDADevice)) }
        guard scanout_nvcuvid_load(&why, why.count) == 0 else { return .failure(HardwareUnavailable(reason: .noNVDEC(String(cString: why)))) }
        return .success(deviceName(0) ?? "CUDA device 0")
    }

    /// One line for `scanout probe`: "available: NVIDIA H100 80GB HBM3 (cuda:0), CUDA–GL interop"
    /// or "unavailable: <reason>".
    public static func summary() -> String {
        switch probe() {
        case .success(let name): return "available: \(name) (cuda:0)\(hasGLInterop ? ", CUDA-GL interop" : ", no CUDA-GL interop (frames are downloaded for GL)")"
        case .failure(let e): return "unavailable: \(e.reason)"
        }
    }

    /// CUDA's name for a `CUresult` ("CUDA_ERROR_NO_DEVICE"), or "error N" when unknown.
    public static func errorName(_ status: Int32) -> String {
        scanout_cuda_error_name(status).map { String(cString: $0) } ?? "error \(status)"
    }

    /// The name of device `ordinal` ("NVIDIA H100 80GB HBM3"), nil when it cannot be read.
    static func deviceName(_ ordinal: Int32) -> String? {
        var name = [CChar](repeating: 0, count: 256)
        guard scanout_cuda_device_name(ordinal, &name, Int32(name.count)) == 0 else { return nil }
        return String(cString: name)
    }

    /// Whether the CUDA–GL interop entry points are there (`cuGraphicsGLRegisterImage` and the
    /// map, array and unmap calls), so that NVDEC frames can be copied into GL textures on the GPU.
    public static var hasGLInterop: Bool { scanout_cuda_has_gl_interop() != 0 }
}

/// A decoded NVDEC picture in CUDA device memory: a reference to libavcodec's `AV_PIX_FMT_CUDA`
/// frame (which holds the picture out of the decoder's pool while this lives) and the CUDA
/// context it belongs to. Planes are NV12 (8-bit) or P010 (10-bit): luma, then interleaved CbCr.
/// The device pointers never leave the package. One thread at a time; not Sendable.
public final class CUDAFrame {
    private let frame: VideoFrame
    /// The CUDA context the memory belongs to (owned by the decoder's device).
    package let context: UnsafeMutableRawPointer
    /// NV12 or P010.
    public let layout: PixelFormat
    public var width: Int { frame.width }
    public var height: Int { frame.height }

    package init(frame: VideoFrame, context: UnsafeMutableRawPointer, layout: PixelFormat) {
        self.frame = frame; self.context = context; self.layout = layout
    }

    /// Device pointer, pitch in bytes, row bytes and rows of plane 0 (luma) or 1 (CbCr).
    package func plane(_ i: Int) -> (device: UInt64, pitch: Int, rowBytes: Int, rows: Int) {
        let sample = layout == .p010 ? 2 : 1
        let rows = i == 0 ? height : (height + 1) / 2
        let rowBytes = i == 0 ? width * sample : ((width + 1) / 2) * 2 * sample
        return (UInt64(UInt(bitPattern: frame.planeData(i))), frame.lineSize(i), rowBytes, rows)
    }
}
