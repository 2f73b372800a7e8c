import CFFmpeg
import ScanoutCore
import ScanoutDemux
#if canImport(Glibc)
import Glibc
#endif

/// A decoded picture exported as DMA-BUFs, laid out as VA-API's `vaExportSurfaceHandle` with
/// `VA_EXPORT_SURFACE_SEPARATE_LAYERS` describes it: one layer per plane (NV12: R8 + GR88;
/// P010: R16 + GR1616), each plane naming a file descriptor, an offset and a pitch.
///
/// Ownership: the descriptors (the export's objects) are owned here and closed exactly once, in
/// `deinit`; consumers that keep a buffer (EGL, KMS) duplicate what they keep, so they are valid
/// as long as this object lives. The decoded surface itself (the `AVFrame` reference that holds
/// the VA surface out of the decoder's pool, or the software stand-in's `SurfaceMemory`) is kept
/// alive by this object too, so the display can scan it out until it drops the last reference. Not thread-safe; one owner at a time.
public final class ExportedSurface {
    public struct Layer: Sendable, Equatable {
        /// The layer's DRM fourcc (R8, GR88, R16, GR32 for GR1616).
        public let drmFormat: UInt32
        /// Its planes; their buffers are borrowed from the surface (or the memory) that owns them.
        public let planes: [DMABufPlane]
        package init(drmFormat: UInt32, planes: [DMABufPlane]) { self.drmFormat = drmFormat; self.planes = planes }
    }

    public let width: Int
    public let height: Int
    /// The whole surface's fourcc: NV12 or P010.
    public let fourcc: UInt32
    /// The objects' format modifier; nil when the exporter does not know it.
    public let modifier: UInt64?
    public let layers: [Layer]
    /// Who exported it: "VA-API" or the software stand-in.
    public let origin: String
    private let objects: [OwnedDescriptor]
    private let keepAlive: AnyObject?

    /// Keeps `objects`, the descriptors the layers' planes borrow (each closed once, when the
    /// last owner goes); `keepAlive` is whatever holds the decoded surface (its `VideoFrame`).
    package init(width: Int, height: Int, fourcc: UInt32, modifier: UInt64?, layers: [Layer], objects: [OwnedDescriptor], origin: String,
                 keepAlive: AnyObject?) {
        self.width = width; self.height = height; self.fourcc = fourcc; self.modifier = modifier
        self.layers = layers; self.objects = objects; self.origin = origin; self.keepAlive = keepAlive
    }

    /// Number of distinct descriptors owned (closed when the surface goes).
    public var objectCount: Int { objects.count }

    // MARK: The software stand-in's export and download

    /// Copies an nv12 or p010 frame into memory from `allocator` (luma, interleaved chroma; one
    /// layer each, as VA-API's separate-layers export describes a surface): the stand-in's export.
    /// The surface owns duplicates of the memory's descriptors (closed once, in `deinit`) and
    /// keeps the memory alive, which it reads back through (`downloadLinear`).
    static func export(_ frame: VideoFrame, with allocator: any SurfaceAllocator, origin: String) throws -> ExportedSurface {
        let memory = try allocator.allocate(frame)
        var duplicates: [BorrowedDescriptor: OwnedDescriptor] = [:]
        for buffer in Set(memory.layers.flatMap { $0.planes.map(\.buffer) }) {
            guard let copy = buffer.duplicate() else {
                throw HardwareFailure.exportFailed("dup of a \(allocator.name) descriptor: \(String(cString: strerror(errno)))")
            }
            duplicates[buffer] = copy
        }
        let layers = memory.layers.map { layer in
            Layer(drmFormat: layer.drmFormat,
                  planes: layer.planes.map { DMABufPlane(buffer: duplicates[$0.buffer]!.borrowed, offset: $0.offset, pitch: $0.pitch) })
        }
        return ExportedSurface(width: frame.width, height: frame.height, fourcc: frame.pixelFormat == .p010 ? FourCC.p010 : FourCC.nv12,
                               modifier: memory.modifier, layers: layers, objects: Array(duplicates.values), origin: origin,
                               keepAlive: memory)
    }

    /// Reads a two-layer NV12/P010 export of the stand-in back into CPU memory, mapping each
    /// layer through the memory that holds it: the stand-in's download. `props` gives the
    /// timestamps and colour tags.
    func downloadLinear(into frame: VideoFrame, props: VideoFrame) throws {
        guard let memory = keepAlive as? any SurfaceMemory else {
            throw HardwareFailure.importFailed("this export (\(origin)) has no CPU mapping")
        }
        guard layers.count == 2, layers.allSatisfy({ $0.planes.count == 1 }) else {
            throw HardwareFailure.importFailed("expected 2 single-plane layers, got \(layers.count)")
        }
        let wide = fourcc == FourCC.p010
        try frame.allocate(format: wide ? .p010 : .nv12, width: width, height: height)
        av_frame_copy_props(frame.pointer, props.pointer)
        let sample = wide ? 2 : 1
        let rows = [height, (height + 1) / 2]
        let rowBytes = [width * sample, ((width + 1) / 2) * 2 * sample]
        for i in layers.indices {
            guard let dst = frame.planeData(i) else { throw HardwareFailure.importFailed("plane \(i) was not allocated") }
            let stride = frame.lineSize(i)
            try memory.withReadableLayer(i) { base, pitch in
                for y in 0..<rows[i] {
                    (dst + y * stride).update(from: (base + y * pitch).assumingMemoryBound(to: UInt8.self), count: rowBytes[i])
                }
            }
        }
    }
}

/// How a hardware decoder failed mid-stream; the fallback decoder switches to software on any
/// of these. `description` is one line.
public enum HardwareFailure: Error, Equatable, Sendable, CustomStringConvertible {
    /// Consecutive packets the decoder rejected.
    case decodeErrors(count: Int, last: String)
    /// `vaExportSurfaceHandle` (or the stand-in's export) failed.
    case exportFailed(String)
    /// The consumer could not import or download the exported frame.
    case importFailed(String)
    /// The driver refused the stream when libavcodec negotiated the format (`get_format`).
    case unsupported(String)

    public var description: String {
        switch self {
        case .decodeErrors(let n, let last): return "\(n) consecutive decode error\(n == 1 ? "" : "s") (\(last))"
        case .exportFailed(let why): return "DMA-BUF export failed: \(why)"
        case .importFailed(let why): return "import failed: \(why)"
        case .unsupported(let why): return "the driver refused the stream: \(why)"
        }
    }
}

extension VideoFrame {
    /// Gives the frame fresh buffers of `format` at `width`×`height` (`av_frame_get_buffer`),
    /// unless it already has writable ones of that shape.
    package func allocate(format: PixelFormat, width: Int, height: Int) throws {
        let f = pointer
        if f.pointee.buf.0 != nil, f.pointee.format == format.rawValue, Int(f.pointee.width) == width,
           Int(f.pointee.height) == height, av_frame_is_writable(f) != 0 {
            return
        }
        av_frame_unref(f)
        f.pointee.format = format.rawValue
        f.pointee.width = Int32(width)
        f.pointee.height = Int32(height)
        try check(av_frame_get_buffer(f, 0), "av_frame_get_buffer")
    }
}
