import ScanoutCore
import CDRM
#if canImport(Glibc)
import Glibc
#endif

/// Why GBM could not open a device or make a buffer.
public enum GBMError: Error, Equatable, CustomStringConvertible {
    /// The device node cannot be opened, or GBM refuses it or cannot allocate on it.
    case deviceUnavailable(path: String, reason: String)
    /// A buffer could not be made, mapped or exported.
    case bufferFailed(String)

    public var description: String {
        switch self {
        case let .deviceUnavailable(path, reason): "DRM device \(path) unavailable: \(reason)"
        case let .bufferFailed(why): "GBM buffer: \(why)"
        }
    }
}

/// A `gbm_device` on a DRM device node: the native display of `EGLDisplayContext(gbmDevice:)` and
/// the allocator of scanout buffers (`GBMBuffer`) and of `GBMFrame`'s planes; anything made from it
/// keeps it alive. One thread, like the contexts made on it; not Sendable.
///
/// Made on a `DRMDevice` (`init(sharing:)`), it uses the card's own descriptor: one descriptor for
/// KMS and GBM, so a buffer GBM allocates is already a GEM handle of the card (`GBMBuffer.handle`)
/// and reaches a framebuffer with no export and import. Made from a path (`init(path:)`: EGL with
/// no display, `selftest`), it opens and owns a descriptor of its own. The `gbm_device` is
/// destroyed once in `deinit`, before the descriptor it was made on is closed.
public final class GBMDevice {
    /// The device node, e.g. "/dev/dri/card0".
    public let path: String
    private let device: OpaquePointer
    /// The descriptor: the card's (kept open by `card`) or owned here (closed in `deinit`).
    private let ownedFD: Int32?
    /// The card whose descriptor is shared; nil when this device opened its own.
    package let card: DRMDevice?

    /// Opens `path` read-write and creates a `gbm_device` on it. Throws `deviceUnavailable`
    /// naming the path when it cannot be opened or GBM refuses it.
    public init(path: String = "/dev/dri/card0") throws {
        self.path = path
        let fd = open(path, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else {
            throw GBMError.deviceUnavailable(path: path, reason: String(cString: strerror(errno)))
        }
        guard let device = gbm_create_device(fd) else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw GBMError.deviceUnavailable(path: path, reason: "gbm_create_device failed (\(reason))")
        }
        self.ownedFD = fd
        self.card = nil
        self.device = device
    }

    /// A `gbm_device` on `card`'s descriptor (kept alive by this object, never closed here).
    public init(sharing card: DRMDevice) throws {
        path = card.path
        guard let device = card.withDescriptor({ gbm_create_device($0) }) else {
            throw GBMError.deviceUnavailable(path: card.path, reason: "gbm_create_device failed (\(String(cString: strerror(errno))))")
        }
        self.ownedFD = nil
        self.card = card
        self.device = device
    }

    deinit {
        gbm_device_destroy(device)
        if let ownedFD { close(ownedFD) }
    }

    /// The GBM backend's name ("drm" for Mesa's).
    public var backendName: String { gbm_device_get_backend_name(device).map { String(cString: $0) } ?? "" }

    /// Calls `body` with the `gbm_device` (never stored outside this class).
    package func withDevice<R>(_ body: (OpaquePointer) throws -> R) rethrows -> R { try body(device) }
}

/// One GBM buffer object holding one plane, and the DMA-BUF descriptor exported from it. Both are
/// released once in `deinit` (descriptor closed, buffer destroyed); keeps its device alive.
package final class GBMPlaneBuffer {
    package let device: GBMDevice
    private let bo: OpaquePointer
    private let exported: GBMExport
    /// The exported DMA-BUF.
    package var fd: OwnedDescriptor { exported.fd }
    package var stride: UInt32 { exported.stride }
    package var offset: UInt32 { exported.offset }
    /// The buffer's format modifier, nil when GBM does not know it (`DRM_FORMAT_MOD_INVALID`).
    package var modifier: UInt64? { exported.modifier }
    package let width: Int
    package let height: Int

    /// Usage flags tried in order: the first GBM accepts wins.
    static let usages: [(UInt32, String)] = [
        (GBM_BO_USE_LINEAR.rawValue | GBM_BO_USE_RENDERING.rawValue, "LINEAR|RENDERING"),
        (GBM_BO_USE_LINEAR.rawValue, "LINEAR"),
        (GBM_BO_USE_RENDERING.rawValue, "RENDERING"),
    ]

    /// Allocates a `width`×`height` buffer of `format` (a GBM fourcc), fills it row by row from
    /// `rows` (called with the row index and the destination row of `rowBytes` bytes), and
    /// exports it as a DMA-BUF.
    package init(device: GBMDevice, width: Int, height: Int, format: UInt32, formatName: String, rowBytes: Int,
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
            throw GBMError.bufferFailed("gbm_bo_create(\(formatName), \(width)x\(height)) on \(device.path) failed (\(tried.joined(separator: "; ")))")
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
            throw GBMError.bufferFailed("gbm_bo_map(\(formatName), \(width)x\(height)) failed (\(error))")
        }
        exported = try GBMExport(bo, of: device) { GBMError.bufferFailed("gbm_bo_get_fd(\(formatName)) failed (\($0))") }
        self.bo = bo
    }

    deinit {
        exported.release(bo, of: device)
    }

    /// Maps the buffer for reading (`gbm_bo_map`) and calls `body` with its first byte and the
    /// mapping's row stride.
    package func withReadablePixels<R>(_ body: (UnsafeMutableRawPointer, Int) throws -> R) throws -> R {
        do {
            return try withMapped(bo, width: width, height: height, flags: GBM_BO_TRANSFER_READ.rawValue, body)
        } catch let e as MapFailed {
            throw GBMError.deviceUnavailable(path: device.path, reason: "gbm_bo_map(\(width)x\(height)) for reading failed (\(e))")
        }
    }
}

/// A GBM buffer object as exported: its DMA-BUF (owned), GEM handle, stride, offset and modifier.
/// While it lives, the handle is marked as GBM's on a card that shares the device's descriptor.
private struct GBMExport {
    let fd: OwnedDescriptor
    let handle: UInt32
    let stride: UInt32
    let offset: UInt32
    let modifier: UInt64?

    /// Exports `bo`; when that fails, destroys it and throws what `failed` makes of the reason.
    init(_ bo: OpaquePointer, of device: GBMDevice, failed: (String) -> GBMError) throws {
        let raw = gbm_bo_get_fd(bo)
        guard raw >= 0 else {
            let reason = String(cString: strerror(errno))
            gbm_bo_destroy(bo)
            throw failed(reason)
        }
        fd = OwnedDescriptor(taking: raw)
        handle = gbm_bo_get_handle(bo).u32
        stride = gbm_bo_get_stride_for_plane(bo, 0)
        offset = gbm_bo_get_offset(bo, 0)
        let m = gbm_bo_get_modifier(bo)
        modifier = m == SCANOUT_DRM_FORMAT_MOD_INVALID ? nil : m
        device.card?.retainHandle(handle)
    }

    /// Gives the handle back to the card and destroys `bo` (the descriptor closes with this value).
    func release(_ bo: OpaquePointer, of device: GBMDevice) {
        device.card?.releaseHandle(handle)
        gbm_bo_destroy(bo)
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

/// One single-plane GBM buffer object made for scanout (a KMS framebuffer), exported as a DMA-BUF
/// so that EGL can render into it (and a KMS device on another descriptor could import it). Owns
/// the buffer and the exported descriptor (released once, in `deinit`); keeps its device alive.
/// On a device that shares the card's descriptor, `framebufferPlane` names the buffer by its GEM
/// handle, which the card's framebuffer takes as it is.
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
    private let exported: GBMExport
    /// The exported DMA-BUF.
    public var fd: OwnedDescriptor { exported.fd }
    public let width: Int
    public let height: Int
    /// DRM fourcc.
    public let format: UInt32
    public var stride: UInt32 { exported.stride }
    public var offset: UInt32 { exported.offset }
    /// The layout modifier, nil when GBM does not know it (`DRM_FORMAT_MOD_INVALID`).
    public var modifier: UInt64? { exported.modifier }
    /// The buffer's GEM handle on the device's descriptor (owned by GBM: never closed by KMS).
    public var handle: UInt32 { exported.handle }

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
            throw GBMError.deviceUnavailable(path: device.path, reason: "gbm_bo_create(\(FourCC.name(format)) \(width)x\(height)) failed (\(tried.joined(separator: "; ")))")
        }
        exported = try GBMExport(bo, of: device) { GBMError.deviceUnavailable(path: device.path, reason: "gbm_bo_get_fd failed (\($0))") }
        self.bo = bo
    }

    deinit {
        exported.release(bo, of: device)
    }

    /// Maps the buffer for the CPU and calls `body` with its first byte and row stride.
    package func withMappedPixels<R>(write: Bool, _ body: (UnsafeMutableRawPointer, Int) throws -> R) throws -> R {
        let flags = write ? GBM_BO_TRANSFER_READ_WRITE.rawValue : GBM_BO_TRANSFER_READ.rawValue
        do {
            return try withMapped(bo, width: width, height: height, flags: flags, body)
        } catch let e as MapFailed {
            throw GBMError.deviceUnavailable(path: device.path, reason: "gbm_bo_map(\(width)x\(height)) failed (\(e))")
        }
    }

    /// The buffer as one plane of a framebuffer: its GEM handle when GBM allocated it on a card's
    /// own descriptor (`GBMDevice(sharing:)`: the card the framebuffer is added to), else its
    /// DMA-BUF, which the card imports.
    public var framebufferPlane: KMSFramebufferPlane {
        let memory: KMSFramebufferPlane.Memory = device.card != nil ? .gemHandle(handle) : .dmaBuf(fd.borrowed)
        return KMSFramebufferPlane(memory: memory, offset: offset, pitch: stride)
    }
}
