import CDRM
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
#if canImport(Glibc)
import Glibc
#endif

/// A DRM device node opened for GBM: owns the file descriptor and the `gbm_device` made on it,
/// both released once in `deinit` (the device first, then the descriptor). It is the native
/// display of `EGLDisplayContext(gbmDevice:)` and the allocator of `GBMFrame`'s buffers; anything
/// made from it keeps it alive. One thread, like the contexts made on it; not Sendable.
public final class GBMDevice {
    /// The device node, e.g. "/dev/dri/card0".
    public let path: String
    private let fd: Int32
    private let device: OpaquePointer

    /// Opens `path` read-write and creates a `gbm_device` on it. Throws `deviceUnavailable`
    /// naming the path when it cannot be opened or GBM refuses it.
    public init(path: String = "/dev/dri/card0") throws {
        self.path = path
        let fd = open(path, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else {
            throw RenderError.deviceUnavailable(path: path, reason: String(cString: strerror(errno)))
        }
        guard let device = gbm_create_device(fd) else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw RenderError.deviceUnavailable(path: path, reason: "gbm_create_device failed (\(reason))")
        }
        self.fd = fd
        self.device = device
    }

    deinit {
        gbm_device_destroy(device)
        close(fd)
    }

    /// The GBM backend's name ("drm" for Mesa's).
    public var backendName: String { gbm_device_get_backend_name(device).map { String(cString: $0) } ?? "" }

    /// Calls `body` with the `gbm_device` (never stored outside this class).
    func withDevice<R>(_ body: (OpaquePointer) throws -> R) rethrows -> R { try body(device) }
}

/// One GBM buffer object holding one plane, and the DMA-BUF descriptor exported from it. Both are
/// released once in `deinit` (descriptor closed, buffer destroyed); keeps its device alive.
final class GBMPlaneBuffer {
    let device: GBMDevice
    private let bo: OpaquePointer
    /// The exported DMA-BUF (owned: closed in `deinit`).
    let fd: Int32
    let stride: UInt32
    let offset: UInt32
    /// The buffer's format modifier, nil when GBM does not know it (`DRM_FORMAT_MOD_INVALID`).
    let modifier: UInt64?
    let width: Int
    let height: Int

    /// Usage flags tried in order: the first GBM accepts wins.
    static let usages: [(UInt32, String)] = [
        (GBM_BO_USE_LINEAR.rawValue | GBM_BO_USE_RENDERING.rawValue, "LINEAR|RENDERING"),
        (GBM_BO_USE_LINEAR.rawValue, "LINEAR"),
        (GBM_BO_USE_RENDERING.rawValue, "RENDERING"),
    ]

    /// Allocates a `width`×`height` buffer of `format` (a GBM fourcc), fills it row by row from
    /// `rows` (called with the row index and the destination row of `rowBytes` bytes), and
    /// exports it as a DMA-BUF.
    init(device: GBMDevice, width: Int, height: Int, format: UInt32, formatName: String, rowBytes: Int,
         fill: (Int, UnsafeMutableRawBufferPointer) -> Void) throws {
        self.device = device
        self.width = width
        self.height = height
        var made: OpaquePointer?
        var tried: [String] = []
        for (usage, name) in Self.usages {
            made = device.withDevice { gbm_bo_create($0, UInt32(width), UInt32(height), format, usage) }
            if made != nil { break }
            tried.append("\(name): \(String(cString: strerror(errno)))")
        }
        guard let bo = made else {
            throw RenderError.importRefused("gbm_bo_create(\(formatName), \(width)x\(height)) on \(device.path) failed (\(tried.joined(separator: "; ")))")
        }
        // Map, copy, unmap; on any failure from here on the buffer is destroyed before throwing.
        do {
            try withMapped(bo, width: width, height: height, flags: GBM_BO_TRANSFER_WRITE.rawValue) { base, mapStride in
                for y in 0..<height {
                    fill(y, UnsafeMutableRawBufferPointer(start: base + y * mapStride, count: rowBytes))
                }
            }
        } catch {
            gbm_bo_destroy(bo)
            throw RenderError.importRefused("gbm_bo_map(\(formatName), \(width)x\(height)) failed (\(error))")
        }
        let fd = gbm_bo_get_fd(bo)
        guard fd >= 0 else {
            let reason = String(cString: strerror(errno))
            gbm_bo_destroy(bo)
            throw RenderError.importRefused("gbm_bo_get_fd(\(formatName)) failed (\(reason))")
        }
        self.bo = bo
        self.fd = fd
        stride = gbm_bo_get_stride_for_plane(bo, 0)
        offset = gbm_bo_get_offset(bo, 0)
        let m = gbm_bo_get_modifier(bo)
        modifier = m == SCANOUT_DRM_FORMAT_MOD_INVALID ? nil : m
    }

    deinit {
        close(fd)
        gbm_bo_destroy(bo)
    }

    /// Maps the buffer for reading (`gbm_bo_map`) and calls `body` with its first byte and the
    /// mapping's row stride.
    func withReadablePixels<R>(_ body: (UnsafeMutableRawPointer, Int) throws -> R) throws -> R {
        do {
            return try withMapped(bo, width: width, height: height, flags: GBM_BO_TRANSFER_READ.rawValue, body)
        } catch let e as MapFailed {
            throw RenderError.deviceUnavailable(path: device.path, reason: "gbm_bo_map(\(width)x\(height)) for reading failed (\(e))")
        }
    }
}

/// Why `gbm_bo_map` failed (its errno, as text).
struct MapFailed: Error, CustomStringConvertible {
    let description: String
}

/// Maps `bo`'s `width`×`height` pixels with `flags` (`gbm_bo_map`), calls `body` with the first
/// byte and the mapping's row stride, and unmaps (`gbm_bo_unmap`) whatever `body` does.
private func withMapped<R>(_ bo: OpaquePointer, width: Int, height: Int, flags: UInt32,
                           _ body: (UnsafeMutableRawPointer, Int) throws -> R) throws -> R {
    var mapStride: UInt32 = 0
    var mapData: UnsafeMutableRawPointer?
    guard let base = gbm_bo_map(bo, 0, 0, UInt32(width), UInt32(height), flags, &mapStride, &mapData) else {
        throw MapFailed(description: String(cString: strerror(errno)))
    }
    defer { gbm_bo_unmap(bo, mapData) }
    return try body(base, Int(mapStride))
}

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
            ? [(SCANOUT_GBM_FORMAT_R16, "R16", w, h, w * 2), (SCANOUT_GBM_FORMAT_GR1616, "GR1616", cw, ch, cw * 4)]
            : [(SCANOUT_GBM_FORMAT_R8, "R8", w, h, w), (SCANOUT_GBM_FORMAT_GR88, "GR88", cw, ch, cw * 2)]
        var buffers: [GBMPlaneBuffer] = []
        for (i, s) in specs.enumerated() {
            guard let base = semi.planeData(i) else { throw RenderError.importRefused("plane \(i) of \(semi.pixelFormat.name) has no data") }
            let lineSize = semi.lineSize(i)
            let rowBytes = s.rowBytes
            precondition(rowBytes == s.width * sample * (i == 0 ? 1 : 2))
            buffers.append(try GBMPlaneBuffer(device: device, width: s.width, height: s.height, format: s.format, formatName: s.name,
                                              rowBytes: rowBytes) { y, dst in
                dst.copyMemory(from: UnsafeRawBufferPointer(start: base + y * lineSize, count: rowBytes))
            })
        }
        self.buffers = buffers
        let mods = Set(buffers.map(\.modifier))
        dmabuf = DMABufFrame(width: w, height: h, fourcc: wide ? DMABufFrame.p010 : DMABufFrame.nv12,
                             modifier: mods.count == 1 ? mods.first! : nil,
                             planes: buffers.map { DMABufFrame.Plane(fd: $0.fd, offset: $0.offset, pitch: $0.stride) })
    }

    /// The GBM buffers' format modifier (nil: unknown to GBM).
    public var modifier: UInt64? { dmabuf.modifier }
}

/// One single-plane GBM buffer object made for scanout (a KMS framebuffer), exported as a DMA-BUF
/// so that a KMS device on another descriptor can import it and EGL can render into it. Owns the
/// buffer and the exported descriptor (released once, in `deinit`); keeps its device alive.
public final class GBMBuffer {
    public enum Usage: Sendable {
        /// Written by the CPU (mapped): linear scanout buffers.
        case cpu
        /// Drawn into by GLES (EGLImage render target), scanned out.
        case gl
        /// Written by the display engine (a writeback target), read by the CPU.
        case writeback
    }

    public let device: GBMDevice
    private let bo: OpaquePointer
    /// The exported DMA-BUF (owned: closed in `deinit`).
    public let fd: Int32
    public let width: Int
    public let height: Int
    /// DRM fourcc.
    public let format: UInt32
    public let stride: UInt32
    public let offset: UInt32
    /// The layout modifier, nil when GBM does not know it (`DRM_FORMAT_MOD_INVALID`).
    public let modifier: UInt64?

    /// `modifiers`: the layouts the consumer (a KMS plane's `IN_FORMATS`) accepts for `format`;
    /// when given for a GL buffer, GBM picks the best of them (`gbm_bo_create_with_modifiers2`),
    /// and the buffer falls back to the usage flags alone (implicit layout, linear for CPU
    /// buffers) when GBM cannot.
    public init(device: GBMDevice, width: Int, height: Int, format: UInt32, usage: Usage, modifiers: [UInt64] = []) throws {
        self.device = device
        self.width = width
        self.height = height
        self.format = format
        let candidates: [(UInt32, String)] = switch usage {
        case .cpu: [(GBM_BO_USE_SCANOUT.rawValue | GBM_BO_USE_LINEAR.rawValue, "SCANOUT|LINEAR"),
                    (GBM_BO_USE_SCANOUT.rawValue, "SCANOUT")]
        case .gl: [(GBM_BO_USE_SCANOUT.rawValue | GBM_BO_USE_RENDERING.rawValue, "SCANOUT|RENDERING"),
                   (GBM_BO_USE_SCANOUT.rawValue | GBM_BO_USE_RENDERING.rawValue | GBM_BO_USE_LINEAR.rawValue, "SCANOUT|RENDERING|LINEAR")]
        case .writeback: [(GBM_BO_USE_LINEAR.rawValue | GBM_BO_USE_SCANOUT.rawValue, "LINEAR|SCANOUT"),
                          (GBM_BO_USE_LINEAR.rawValue, "LINEAR")]
        }
        var made: OpaquePointer?
        var tried: [String] = []
        if usage == .gl, !modifiers.isEmpty {
            made = modifiers.withUnsafeBufferPointer { list in
                device.withDevice {
                    gbm_bo_create_with_modifiers2($0, UInt32(width), UInt32(height), format, list.baseAddress, UInt32(list.count),
                                                  GBM_BO_USE_SCANOUT.rawValue | GBM_BO_USE_RENDERING.rawValue)
                }
            }
            if made == nil { tried.append("\(modifiers.count) modifiers: \(String(cString: strerror(errno)))") }
        }
        for (flags, name) in candidates where made == nil {
            made = device.withDevice { gbm_bo_create($0, UInt32(width), UInt32(height), format, flags) }
            if made != nil { break }
            tried.append("\(name): \(String(cString: strerror(errno)))")
        }
        guard let bo = made else {
            throw RenderError.deviceUnavailable(path: device.path, reason: "gbm_bo_create(\(DMABufFrame.fourccName(format)) \(width)x\(height)) failed (\(tried.joined(separator: "; ")))")
        }
        let fd = gbm_bo_get_fd(bo)
        guard fd >= 0 else {
            let reason = String(cString: strerror(errno))
            gbm_bo_destroy(bo)
            throw RenderError.deviceUnavailable(path: device.path, reason: "gbm_bo_get_fd failed (\(reason))")
        }
        self.bo = bo
        self.fd = fd
        stride = gbm_bo_get_stride_for_plane(bo, 0)
        offset = gbm_bo_get_offset(bo, 0)
        let m = gbm_bo_get_modifier(bo)
        modifier = m == SCANOUT_DRM_FORMAT_MOD_INVALID ? nil : m
    }

    deinit {
        close(fd)
        gbm_bo_destroy(bo)
    }

    /// Maps the buffer for the CPU and calls `body` with its first byte and row stride.
    package func withMappedPixels<R>(write: Bool, _ body: (UnsafeMutableRawPointer, Int) throws -> R) throws -> R {
        let flags = write ? GBM_BO_TRANSFER_READ_WRITE.rawValue : GBM_BO_TRANSFER_READ.rawValue
        do {
            return try withMapped(bo, width: width, height: height, flags: flags, body)
        } catch let e as MapFailed {
            throw RenderError.deviceUnavailable(path: device.path, reason: "gbm_bo_map(\(width)x\(height)) failed (\(e))")
        }
    }

    /// The buffer's pixels as packed rgb24 (an XRGB8888 buffer read back, e.g. a writeback capture).
    public func readRGB() throws -> RGBImage {
        try withMappedPixels(write: false) { base, stride in
            RGBImage(xrgb: UnsafeRawBufferPointer(start: base, count: stride * height), width: width, height: height, stride: stride)
        }
    }

    /// The buffer as a one-plane DMA-BUF frame (the descriptor stays owned here).
    public var dmabuf: DMABufFrame {
        DMABufFrame(width: width, height: height, fourcc: format, modifier: modifier,
                    planes: [DMABufFrame.Plane(fd: fd, offset: offset, pitch: stride)])
    }
}
