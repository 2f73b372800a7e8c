import CScanoutShims
import ScanoutCore
import ScanoutDemux
#if canImport(Glibc)
import Glibc
#endif

/// Where the software stand-in for VA-API puts the pictures it exports: memory files by default
/// (`MemfdSurfaceAllocator`), GBM buffer objects when a GBM device is there (ScanoutRender's
/// `GBMSurfaceAllocator`, real DMA-BUFs that EGL on the GBM platform imports and KMS scans out).
///
/// Threading: `allocate` runs on the decoding thread. An allocator over a device that is not
/// thread-safe (GBM) may only be given to a decoder that runs on the thread using that device.
public protocol SurfaceAllocator: AnyObject, Sendable {
    /// The memory in words, for logs ("memfd", "GBM /dev/dri/card0").
    var name: String { get }
    /// Copies `frame` (nv12 or p010) into new memory: one buffer per plane, the luma (R8 / R16)
    /// and the interleaved chroma (GR88 / GR1616), as VA-API's separate-layers export lays out a
    /// surface.
    func allocate(_ frame: VideoFrame) throws -> any SurfaceMemory
}

/// One picture's planes in an allocator's memory. Owns that memory and its DMA-BUF descriptors
/// (released once, when the object goes); `layers` only lends the descriptors. One thread at a
/// time.
public protocol SurfaceMemory: AnyObject {
    /// The two layers (luma, chroma), one plane each; the planes' descriptors stay owned here.
    var layers: [ExportedSurface.Layer] { get }
    /// The buffers' format modifier; nil when the allocator does not know it.
    var modifier: UInt64? { get }
    /// Maps layer `index` for reading and calls `body` with the first byte of its plane and the
    /// distance between rows in the mapping (which may differ from the export's pitch).
    func withReadableLayer<R>(_ index: Int, _ body: (UnsafeRawPointer, Int) throws -> R) throws -> R
}

/// The default allocator: two memory files (`memfd_create`) per picture, pitches aligned to 64.
/// They are not DMA-BUFs: EGL and KMS refuse them, so a GPU consumer downloads instead.
public final class MemfdSurfaceAllocator: SurfaceAllocator {
    public let name = "memfd"
    public init() {}

    public func allocate(_ frame: VideoFrame) throws -> any SurfaceMemory { try MemfdSurfaceMemory(frame) }
}

/// Two memory files holding a picture's planes; closed once, when the object goes.
final class MemfdSurfaceMemory: SurfaceMemory {
    let layers: [ExportedSurface.Layer]
    var modifier: UInt64? { 0 }
    private let sizes: [Int]
    private let files: [OwnedDescriptor]

    init(_ frame: VideoFrame) throws {
        let specs = try SurfaceLayout.separateLayers(of: frame)
        var layers: [ExportedSurface.Layer] = []
        var sizes: [Int] = []
        var files: [OwnedDescriptor] = []
        for (i, s) in specs.enumerated() {
            let pitch = (s.rowBytes + 63) & ~63
            let made = scanout_memfd_create("scanout-standin-plane\(i)")
            guard made >= 0 else { throw HardwareFailure.exportFailed("memfd_create: \(String(cString: strerror(errno)))") }
            let file = OwnedDescriptor(taking: made), fd = made
            files.append(file)
            layers.append(ExportedSurface.Layer(drmFormat: s.format, planes: [DMABufPlane(buffer: file.borrowed, pitch: UInt32(pitch))]))
            let size = pitch * s.rows
            sizes.append(size)
            guard ftruncate(fd, off_t(size)) == 0 else { throw HardwareFailure.exportFailed("ftruncate: \(String(cString: strerror(errno)))") }
            guard let map = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), map != MAP_FAILED else {
                throw HardwareFailure.exportFailed("mmap: \(String(cString: strerror(errno)))")
            }
            defer { munmap(map, size) }
            guard let src = frame.planeData(i) else { throw HardwareFailure.exportFailed("plane \(i) of \(frame.pixelFormat.name) has no data") }
            let stride = frame.lineSize(i)
            for y in 0..<s.rows {
                (map + y * pitch).copyMemory(from: src + y * stride, byteCount: s.rowBytes)
            }
        }
        self.layers = layers
        self.sizes = sizes
        self.files = files
    }

    func withReadableLayer<R>(_ index: Int, _ body: (UnsafeRawPointer, Int) throws -> R) throws -> R {
        let plane = layers[index].planes[0], size = sizes[index]
        guard let map = mmap(nil, size, PROT_READ, MAP_SHARED, plane.buffer.rawValue, 0), map != MAP_FAILED else {
            throw HardwareFailure.importFailed("mmap of layer \(index): \(String(cString: strerror(errno)))")
        }
        defer { munmap(map, size) }
        return try body(UnsafeRawPointer(map), Int(plane.pitch))
    }
}

extension SurfaceLayout {
    /// The two single-plane layers of an nv12 or p010 picture as VA-API exports them: DRM format,
    /// bytes of pixels per row, rows.
    static func separateLayers(of frame: VideoFrame) throws -> [(format: UInt32, rowBytes: Int, rows: Int)] {
        let wide = frame.pixelFormat == .p010
        guard wide || frame.pixelFormat == .nv12 else {
            throw HardwareFailure.exportFailed("no DMA-BUF layout for \(frame.pixelFormat.name) (NV12 and P010 only)")
        }
        let w = frame.width, h = frame.height, sample = wide ? 2 : 1
        return [
            (wide ? FourCC.r16 : FourCC.r8, w * sample, h),
            (wide ? FourCC.gr1616 : FourCC.gr88, ((w + 1) / 2) * 2 * sample, (h + 1) / 2),
        ]
    }
}
