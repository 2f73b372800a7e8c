import Foundation
import Synchronization
import Testing
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
@testable import ScanoutRender
import ScanoutTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A memory allocator double for the stand-in's export seam: both planes of a picture in one
/// unlinked file, the chroma at an offset past a gap and each plane with its own odd pitch, so
/// that an export or download that ignores offsets, pitches or the shared descriptor goes wrong.
/// Counts what it allocated and released.
final class OneFileAllocator: SurfaceAllocator {
    let name = "one-file double"
    /// Files are named `<tag>-N`, to be found in /proc/self/fd.
    let tag = "scanout-surface-double-\(UUID().uuidString)"
    private let counts = Mutex((allocated: 0, released: 0))
    var allocated: Int { counts.withLock { $0.allocated } }
    var released: Int { counts.withLock { $0.released } }

    func allocate(_ frame: VideoFrame) throws -> any SurfaceMemory {
        let n = counts.withLock { c in c.allocated += 1; return c.allocated }
        return try Memory(frame, path: NSTemporaryDirectory() + "\(tag)-\(n)") { [weak self] in
            self?.counts.withLock { $0.released += 1 }
        }
    }

    final class Memory: SurfaceMemory {
        let layers: [ExportedSurface.Layer]
        var modifier: UInt64? { 0 }
        private let fd: Int32
        private let size: Int
        private let onRelease: () -> Void

        init(_ frame: VideoFrame, path: String, onRelease: @escaping () -> Void) throws {
            let wide = frame.pixelFormat == .p010
            let sample = wide ? 2 : 1
            let chromaRowBytes: Int = (frame.width + 1) / 2 * 2 * sample
            let specs: [(format: UInt32, rowBytes: Int, rows: Int)] = [
                (wide ? FourCC.r16 : FourCC.r8, frame.width * sample, frame.height),
                (wide ? FourCC.gr1616 : FourCC.gr88, chromaRowBytes, (frame.height + 1) / 2),
            ]
            // Luma pitch: row bytes rounded up to 256, plus 32; chroma pitch: rounded up to 128.
            let lumaPitch: Int = ((specs[0].rowBytes + 255) & ~255) + 32
            let chromaPitch: Int = (specs[1].rowBytes + 127) & ~127
            let pitches = [lumaPitch, chromaPitch]
            let chromaOffset: Int = lumaPitch * specs[0].rows + 4096
            size = chromaOffset + chromaPitch * specs[1].rows
            let file = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard file >= 0 else { throw HardwareFailure.exportFailed("open \(path): \(String(cString: strerror(errno)))") }
            unlink(path)
            fd = file
            self.onRelease = onRelease
            let offsets = [0, chromaOffset]
            layers = specs.indices.map { i in
                ExportedSurface.Layer(drmFormat: specs[i].format,
                                      planes: [DMABufPlane(buffer: BorrowedDescriptor(file), offset: UInt32(offsets[i]), pitch: UInt32(pitches[i]))])
            }
            // Fully initialised from here: a throw runs deinit, which closes the file.
            guard ftruncate(fd, off_t(size)) == 0, let map = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), map != MAP_FAILED else {
                throw HardwareFailure.exportFailed("map \(path): \(String(cString: strerror(errno)))")
            }
            defer { munmap(map, size) }
            memset(map, 0xA5, size)
            for (i, s) in specs.enumerated() {
                let src = try #require(frame.planeData(i))
                for y in 0..<s.rows {
                    (map + offsets[i] + y * pitches[i]).copyMemory(from: src + y * frame.lineSize(i), byteCount: s.rowBytes)
                }
            }
        }

        deinit {
            close(fd)
            onRelease()
        }

        func withReadableLayer<R>(_ index: Int, _ body: (UnsafeRawPointer, Int) throws -> R) throws -> R {
            guard let map = mmap(nil, size, PROT_READ, MAP_SHARED, fd, 0), map != MAP_FAILED else {
                throw HardwareFailure.importFailed("mmap: \(String(cString: strerror(errno)))")
            }
            defer { munmap(map, size) }
            let plane = layers[index].planes[0]
            return try body(UnsafeRawPointer(map + Int(plane.offset)), Int(plane.pitch))
        }
    }
}

/// How many of this process's descriptors are open on files whose path contains `tag`.
func openDescriptors(containing tag: String) -> Int {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return entries.filter { ((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0)) ?? "").contains(tag) }.count
}

/// The software stand-in's export seam (`DecoderOptions.surfaceAllocator`): an allocator double
/// gives exports laid out as the DMA-BUF import reads them (the memfd default's layout is checked
/// in `HardwareSurfaceTests`), downloads from it and from memfd equal the software decoder's
/// frames, and every descriptor is closed once.
@Suite("stand-in surface allocators")
struct SurfaceAllocatorTests {
    static func standIn(_ allocator: (any SurfaceAllocator)?, destination: FrameDestination = .gpu, transfers: FrameTransfers? = nil) -> DecoderOptions {
        var options = DecoderOptions(playerType: .hw, allowFallback: false, environment: SelectorEnvironment(faults: FaultPlan(standIn: true)))
        options.surfaceAllocator = allocator
        options.destination = destination
        options.transfers = transfers
        return options
    }

    @Test("the double's offsets, pitches and formats reach the import's DMA-BUF description",
          arguments: [("counter.mp4", FourCC.nv12), ("hevc10.mkv", FourCC.p010)])
    func layout(clip: String, fourcc: UInt32) throws {
        let allocator = OneFileAllocator()
        let reader = try FrameReader(input: try Fixtures.path(clip), decoderOptions: Self.standIn(allocator))
        let frame = VideoFrame()
        #expect(try reader.next(into: frame))
        #expect(frame.isGPUOnly)
        let surface = try #require(frame.surface)
        #expect(surface.objectCount == 1)  // both layers in one file: one descriptor owned
        let d = try DMABufFrame(surface: surface)
        #expect(d.fourcc == fourcc && d.width == 320 && d.height == 240 && d.modifier == DMABufFrame.linearModifier)
        let sample = fourcc == FourCC.p010 ? 2 : 1
        let lumaPitch = ((320 * sample + 255) & ~255) + 32
        #expect(d.planes.map(\.pitch) == [UInt32(lumaPitch), UInt32((320 * sample + 127) & ~127)])
        #expect(d.planes.map(\.offset) == [0, UInt32(lumaPitch * 240 + 4096)])
        #expect(Set(d.planes.map(\.buffer)).count == 1)
        let formats = d.perPlaneFormats()
        #expect(formats.map(\.fourcc) == surface.layers.map(\.drmFormat))
        #expect(formats.map(\.fourcc) == (fourcc == FourCC.p010 ? [FourCC.r16, FourCC.gr1616] : [FourCC.r8, FourCC.gr88]))
        // Each plane's rows fit its pitch: the import reads width × bytes per texel per row.
        for (format, plane) in zip(formats, d.planes) {
            #expect(Int(plane.pitch) >= format.width * sample * (format.fourcc == FourCC.r8 || format.fourcc == FourCC.r16 ? 1 : 2))
        }
    }

    @Test("downloads from the double and from memfd equal the software decoder's frames (framemd5), one download per frame",
          arguments: ["counter.mp4", "hevc10.mkv"])
    func exactDownload(clip: String) throws {
        let path = try Fixtures.path(clip)
        let software = try frameLines(FrameReader(input: path, decoderOptions: DecoderOptions(playerType: .sw)))
        #expect(!software.isEmpty)
        for allocator in [OneFileAllocator() as (any SurfaceAllocator)?, nil] {
            for destination in FrameDestination.allCases {
                let transfers = FrameTransfers()
                let got = try frameLines(FrameReader(input: path, decoderOptions: Self.standIn(allocator, destination: destination, transfers: transfers)))
                #expect(got == software, "\(allocator?.name ?? "memfd") \(destination)")
                #expect(transfers.counts == TransferCounts(downloads: software.count))
            }
        }
    }

    @Test("every descriptor is closed once: the memory's own when it goes, the export's duplicate with the surface")
    func descriptorsClosedOnce() throws {
        let allocator = OneFileAllocator()
        var frames: [VideoFrame] = []
        do {
            let reader = try FrameReader(input: try Fixtures.path("counter.mp4"), decoderOptions: Self.standIn(allocator))
            for _ in 0..<3 {
                let frame = VideoFrame()
                #expect(try reader.next(into: frame))
                frames.append(frame)
            }
            // Three pictures held: each file open twice (the memory's descriptor, the export's duplicate).
            #expect(openDescriptors(containing: allocator.tag) == 6)
            let fds = frames.map { $0.surface!.layers[0].planes[0].buffer.rawValue }
            #expect(Set(fds).count == 3)
            frames.removeFirst()
            #expect(openDescriptors(containing: allocator.tag) == 4)
            #expect(allocator.released == 1)
        }
        frames.removeAll()
        // The reader is gone too (its decoder held no picture of its own once handed out).
        #expect(openDescriptors(containing: allocator.tag) == 0)
        #expect(allocator.released == allocator.allocated && allocator.allocated >= 3)
    }

    @Test("a failing allocator is an export failure: the stand-in falls back to software at frame 0, frames unchanged")
    func allocatorFailure() throws {
        final class Refusing: SurfaceAllocator {
            let name = "refusing"
            func allocate(_ frame: VideoFrame) throws -> any SurfaceMemory { throw HardwareFailure.exportFailed("no memory here") }
        }
        let path = try Fixtures.path("counter.mp4")
        var options = Self.standIn(Refusing())
        options.allowFallback = true
        let reader = try FrameReader(input: path, decoderOptions: options)
        #expect(try frameLines(reader) == frameLines(FrameReader(input: path, decoderOptions: DecoderOptions(playerType: .sw))))
        let fallback = try #require(reader.fallback)
        #expect(fallback.frame == 0 && fallback.reason == "DMA-BUF export failed: no memory here")
    }
}
