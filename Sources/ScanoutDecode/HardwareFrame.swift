import CFFmpeg
import Synchronization
import ScanoutCore
import ScanoutDemux

/// Where decoded frames go, which decides whether a hardware decoder copies each picture into CPU
/// memory.
///
/// - `cpu`: the consumer reads planes (framemd5, decode, PNGs, the CPU renderer): hardware
///   frames are downloaded as they are decoded, so every frame has CPU planes.
/// - `gpu`: the consumer draws on the GPU (the GLES renderer on a screen or a headless GPU
///   target, or a KMS plane): hardware frames stay where the decoder put them (DMA-BUFs for
///   VA-API, CUDA memory for NVDEC) and are downloaded only if the consumer asks for CPU planes
///   after all (`VideoFrame.makeCPUResident()`), which `FrameTransfers` counts.
public enum FrameDestination: String, Sendable, CaseIterable {
    case cpu, gpu
}

/// How many times decoded pictures crossed between CPU and GPU memory, counted where it happens
/// (the decoder's download, the renderer's upload) for one pipeline. Shared by the decoding and
/// drawing code of that pipeline, which may run on different threads, so the counts are atomics.
public final class FrameTransfers: Sendable {
    private let downloads = Atomic<Int>(0)
    private let uploads = Atomic<Int>(0)
    private let gpuCopies = Atomic<Int>(0)
    private let imports = Atomic<Int>(0)

    public init() {}

    /// A picture copied from GPU to CPU memory (`av_hwframe_transfer_data`, a mapped read).
    public func countDownload() { downloads.add(1, ordering: .relaxed) }
    /// A picture's planes copied from CPU memory into GL textures (`glTexSubImage2D`).
    public func countUpload() { uploads.add(1, ordering: .relaxed) }
    /// A picture copied from one GPU buffer to another with no CPU involvement (CUDA → GL array).
    public func countGPUCopy() { gpuCopies.add(1, ordering: .relaxed) }
    /// A picture sampled in place (DMA-BUF planes imported as EGLImages), no copy at all.
    public func countImport() { imports.add(1, ordering: .relaxed) }

    public var counts: TransferCounts {
        TransferCounts(downloads: downloads.load(ordering: .relaxed), uploads: uploads.load(ordering: .relaxed),
                       gpuCopies: gpuCopies.load(ordering: .relaxed), imports: imports.load(ordering: .relaxed))
    }
}

/// A snapshot of `FrameTransfers`.
public struct TransferCounts: Sendable, Equatable, CustomStringConvertible {
    public var downloads = 0
    public var uploads = 0
    public var gpuCopies = 0
    public var imports = 0
    public init(downloads: Int = 0, uploads: Int = 0, gpuCopies: Int = 0, imports: Int = 0) {
        self.downloads = downloads; self.uploads = uploads; self.gpuCopies = gpuCopies; self.imports = imports
    }
    /// Copies through CPU memory: downloads plus uploads.
    public var cpuCopies: Int { downloads + uploads }
    /// CPU copies per frame over `frames` frames (0 when no frame).
    public func cpuCopiesPerFrame(_ frames: Int) -> Double { frames > 0 ? Double(cpuCopies) / Double(frames) : 0 }
    /// "0.00 CPU copies/frame (0 downloads, 0 uploads, 300 GPU copies, 0 imports)".
    public func summary(frames: Int) -> String {
        let hundredths = Int((cpuCopiesPerFrame(frames) * 100).rounded())
        let fraction = hundredths % 100
        return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction) CPU copies/frame"
            + " (\(downloads) downloads, \(uploads) uploads, \(gpuCopies) GPU copies, \(imports) imports)"
    }
    public var description: String { "downloads=\(downloads) uploads=\(uploads) gpuCopies=\(gpuCopies) imports=\(imports)" }
}

/// A decoded picture held in GPU memory, as the hardware decoder left it, with the means to copy
/// it into CPU memory when a consumer needs planes after all.
///
/// `memory` says what a GPU consumer can take without a copy: DMA-BUFs (VA-API's export, or the
/// software stand-in's) or CUDA device memory (NVDEC). Holding this object keeps the decoder's
/// surface out of its pool. One thread at a time; not Sendable.
public final class HardwareFrame {
    public enum Memory {
        /// The picture as DMA-BUFs (one per plane layer), for an EGLImage import or a KMS plane.
        case dmaBuf(ExportedSurface)
        /// The picture in CUDA device memory (NVDEC), for a CUDA → GL copy.
        case cuda(CUDAFrame)
    }
    public let memory: Memory
    /// Copies the picture into `frame`'s CPU planes in the stream's own pixel format, with its
    /// timestamps and tags.
    private let download: (VideoFrame) throws -> Void

    package init(memory: Memory, download: @escaping (VideoFrame) throws -> Void) {
        self.memory = memory
        self.download = download
    }

    package func download(into frame: VideoFrame) throws { try download(frame) }
}

extension VideoFrame {
    /// Gives the frame CPU planes if it has only a hardware picture (a `gpu` destination): the
    /// picture is downloaded (counted by the decoder's `FrameTransfers`) and the frame keeps its
    /// `hardware` reference. Does nothing for frames that already have planes.
    public func makeCPUResident() throws {
        guard awaitingDownload, let hardware else { return }
        let planes = VideoFrame()
        try hardware.download(into: planes)
        av_frame_unref(pointer)
        av_frame_move_ref(pointer, planes.pointer)
        awaitingDownload = false
    }

    /// True when the frame holds only a hardware picture: reading its planes needs
    /// `makeCPUResident()` first.
    public var isGPUOnly: Bool { awaitingDownload }

    /// Makes this frame the GPU-only form of a hardware picture: `props` gives timestamps, tags
    /// and size, `format` the hardware pixel format it is marked with (VA-API, CUDA, DRM PRIME),
    /// which no CPU consumer accepts, so that one that forgets `makeCPUResident()` fails instead of
    /// reading planes that are not there.
    package func holdHardware(_ hardware: HardwareFrame, props: VideoFrame, format: PixelFormat, reference: VideoFrame? = nil) {
        unref()
        if let reference {
            av_frame_ref(pointer, reference.pointer)
        } else {
            av_frame_copy_props(pointer, props.pointer)
            pointer.pointee.width = props.pointer.pointee.width
            pointer.pointee.height = props.pointer.pointee.height
            pointer.pointee.format = format.rawValue
        }
        pointer.pointee.color_range = props.pointer.pointee.color_range
        pointer.pointee.colorspace = props.pointer.pointee.colorspace
        self.hardware = hardware
        awaitingDownload = true
    }
}

/// What every hardware decoder (VA-API, NVDEC, the software stand-in) does around its own calls:
/// the fault seams of `SCANOUT_FAULTS` and the hand-over of a picture to where frames go. One
/// piece of code, so that faults and copies behave the same whichever decoder it is, and the
/// stand-in's tests run the code NVDEC and VA-API use. One decoder's, on its thread.
struct HardwareDelivery {
    let faults: FaultPlan
    let destination: FrameDestination
    let transfers: FrameTransfers?
    /// Frames handed out so far (the fault plan's frame numbers).
    private(set) var framesOut = 0

    init(faults: FaultPlan, options: DecoderOptions) {
        self.faults = faults
        destination = options.destination
        transfers = options.transfers
    }

    /// The `decode@N` seam: why the next packet is rejected, or nil.
    var injectedRejection: String? {
        faults.decodeFails(framesOut: framesOut) ? "injected fault decode@\(faults.decodeFrom!) (SCANOUT_FAULTS)" : nil
    }

    /// The `export@N` seam, before the decoder makes its GPU-memory form of the next frame.
    func checkExport() throws {
        if faults.exportFails(frame: framesOut) { throw HardwareFailure.exportFailed("injected fault export@\(framesOut) (SCANOUT_FAULTS)") }
    }

    /// Hands the next picture out in `frame` (after the `import@N` seam): downloaded at once for a
    /// CPU destination (`download` writes the stream's own planes and `props`' tags into its
    /// argument), or held in `memory` with the download kept for `makeCPUResident()`. The GPU-only
    /// frame references `reference` (the decoder's hardware frame) when there is one, else carries
    /// `props` marked with `format`. Each download is counted.
    mutating func deliver(_ memory: HardwareFrame.Memory, props: VideoFrame, format: PixelFormat, reference: VideoFrame?,
                          into frame: VideoFrame, download: @escaping (VideoFrame) throws -> Void) throws {
        if faults.importFails(frame: framesOut) { throw HardwareFailure.importFailed("injected fault import@\(framesOut) (SCANOUT_FAULTS)") }
        let transfers = transfers
        let hardware = HardwareFrame(memory: memory) { target in
            try download(target)
            transfers?.countDownload()
        }
        switch destination {
        case .cpu:
            try hardware.download(into: frame)
            frame.hardware = hardware
        case .gpu:
            frame.holdHardware(hardware, props: props, format: format, reference: reference)
        }
        framesOut += 1
    }
}
