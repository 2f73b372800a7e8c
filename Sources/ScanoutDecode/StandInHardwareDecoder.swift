import ScanoutCore
import ScanoutDemux

/// The software stand-in for VA-API (`SCANOUT_FAULTS=hw-standin`): what the `hw` player type
/// decodes with on machines without a VA-API device, so that tests and CI run the whole hardware
/// branch (selection, export, download, fault injection, fallback with replay). It is not
/// hardware and says so: its `label` and every decision that names it say "software stand-in".
///
/// libavcodec decodes; each picture is packed into the surface layout VA-API would hold it in
/// (NV12 or P010), exported into memory described exactly as `vaExportSurfaceHandle` describes
/// separate layers (`ExportedSurface`, which owns and closes the descriptors), then downloaded
/// back by mapping that memory and unpacked into the stream's own pixel format. The memory comes
/// from `DecoderOptions.surfaceAllocator`: memory files by default, GBM buffer objects (real
/// DMA-BUFs a GPU consumer imports without a copy) when a display's GBM device is given. It accepts
/// what a typical VA-API driver accepts: 4:2:0 at 8 or 10 bits. Faults act at the same seams as
/// in `VAAPIDecoder`. One thread; not Sendable.
final class StandInHardwareDecoder: Decoder {
    let kind = "hw"
    static let label = "software stand-in for VA-API (SCANOUT_FAULTS=hw-standin; not hardware)"
    var label: String { Self.label }
    private let software: SoftwareDecoder
    private let streamFormat: PixelFormat
    private let decoded = VideoFrame()
    private let packed = VideoFrame()
    private var injectedRejects = 0
    /// The fault seams and the hand-over, shared with VA-API and NVDEC.
    private var delivery: HardwareDelivery
    private let allocator: any SurfaceAllocator

    init(for demuxer: Demuxer, options: DecoderOptions, faults: FaultPlan) throws {
        streamFormat = demuxer.video.pixelFormat
        guard SurfaceLayout.surfaceFormat(for: streamFormat) != nil else {
            throw HardwareUnavailable(reason: .profileUnsupported("\(streamFormat.name): only 4:2:0 8-bit (NV12) and 10-bit (P010) surfaces are handled (\(Self.label))"))
        }
        if faults.hwInit { throw HardwareUnavailable(reason: .initFailed("injected fault hw-init (SCANOUT_FAULTS)")) }
        do {
            software = try SoftwareDecoder(for: demuxer, options: options)
        } catch {
            throw HardwareUnavailable(reason: .initFailed("\(error)"))
        }
        // (A software open failure is reported as the hardware path's init failure, then the
        // selector's software attempt reports it again as the stream's own error.)
        delivery = HardwareDelivery(faults: faults, options: options)
        allocator = options.surfaceAllocator ?? MemfdSurfaceAllocator()
    }

    var stats: DecodeStats {
        var s = software.stats
        s.rejectedPackets += injectedRejects
        s.framesDecoded = delivery.framesOut
        return s
    }

    /// The last error the decoder logged (for the fallback's reason).
    var lastError: String? { lastInjected ?? software.lastError }
    private var lastInjected: String?

    func send(_ packet: Packet?) throws {
        if packet != nil, let injected = delivery.injectedRejection {
            injectedRejects += 1
            lastInjected = injected
            return
        }
        try software.send(packet)
    }

    /// Decodes, packs and exports the picture; hands it out downloaded from the export (a CPU
    /// destination) or as the export alone (a GPU destination, downloaded only on demand).
    func receive(into frame: VideoFrame) throws -> Bool {
        guard try software.receive(into: decoded) else { return false }
        try SurfaceLayout.pack(decoded, into: packed)
        try delivery.checkExport()
        let surface = try ExportedSurface.export(packed, with: allocator, origin: Self.label)
        let props = decoded.propertiesOnly()
        let streamFormat = streamFormat
        try delivery.deliver(.dmaBuf(surface), props: decoded, format: .drmPrime, reference: nil, into: frame) { target in
            let scratch = VideoFrame()
            try surface.downloadLinear(into: scratch, props: props)
            try SurfaceLayout.unpack(scratch, to: streamFormat, into: target)
        }
        return true
    }

    func flush() { software.flush() }
}
