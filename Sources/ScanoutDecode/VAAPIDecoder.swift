import CFFmpeg
import CScanoutShims
import CVAAPI
import ScanoutCore
import ScanoutDemux
#if canImport(Glibc)
import Glibc
#endif

/// A hardware path that cannot be used, and why (what `DecoderSelector` records).
struct HardwareUnavailable: Error {
    var reason: SelectionReason
}

/// A VA-API device made by libavutil on one render node (`av_hwdevice_ctx_create`): owns the
/// `AVBufferRef`, which owns the node's descriptor and the initialised `VADisplay` (all released
/// once, when the last reference goes: this object's, and the codec contexts' it was given to).
/// One thread at a time; not Sendable.
final class VAAPIDevice {
    let path: String
    let vendor: String
    let ref: UnsafeMutablePointer<AVBufferRef>

    private init(path: String, vendor: String, ref: UnsafeMutablePointer<AVBufferRef>) {
        self.path = path; self.vendor = vendor; self.ref = ref
    }

    deinit {
        var r: UnsafeMutablePointer<AVBufferRef>? = ref
        av_buffer_unref(&r)
    }

    /// The initialised display (owned by the device).
    var display: VADisplay { scanout_vaapi_device_display(ref) }

    /// Opens `device` when given, else the first render node in `directory` that initialises,
    /// skipping vgem (a memory-only driver that cannot decode). Throws the reason of the last
    /// node that failed, or `noRenderNode`.
    static func open(directory: String, device: String?) throws -> VAAPIDevice {
        let nodes: [String]
        if let device {
            nodes = [device]
        } else {
            let all = VAAPIProbe.renderNodes(directory: directory)
            nodes = all.filter { VAAPIProbe.driverName(node: $0) != "vgem" }
            if nodes.isEmpty {
                if let vgem = all.first { throw HardwareUnavailable(reason: .renderNodeUnusable(path: vgem, detail: "vgem cannot decode")) }
                throw HardwareUnavailable(reason: .noRenderNode(directory: directory))
            }
        }
        var last: SelectionReason = .noRenderNode(directory: directory)
        for node in nodes {
            let info = VAAPIProbe.probe(node)
            guard info.usable else {
                if let status = info.vaStatus {
                    last = .vaInitializeFailed(path: node, status: status, message: info.vaMessage)
                } else {
                    last = .renderNodeUnusable(path: node, detail: info.detail)
                }
                continue
            }
            var ref: UnsafeMutablePointer<AVBufferRef>?
            FFmpegLog.ensureInstalled()
            let r = av_hwdevice_ctx_create(&ref, AV_HWDEVICE_TYPE_VAAPI, node, nil, 0)
            guard r >= 0, let ref else {
                last = .initFailed("av_hwdevice_ctx_create on \(node): \(ffmpegErrorString(r))")
                continue
            }
            return VAAPIDevice(path: node, vendor: info.detail, ref: ref)
        }
        throw HardwareUnavailable(reason: last)
    }

    /// Why the driver cannot decode a `codec` stream of `profile` in `swFormat` at
    /// `width`×`height` and export its surfaces, or nil when it can: the profile is listed
    /// (`vaQueryConfigProfiles`) with a decode entrypoint (`vaQueryConfigEntrypoints`), the
    /// config's render-target formats include 4:2:0 at the stream's bit depth
    /// (`vaGetConfigAttributes`), the size is within the surface limits and the surfaces offer
    /// DRM PRIME 2 memory (`vaQuerySurfaceAttributes`).
    static func refusal(display: VADisplay, codec: AVCodecID, profile: Int32, swFormat: PixelFormat, width: Int, height: Int) -> SelectionReason? {
        guard let surface = SurfaceLayout.surfaceFormat(for: swFormat) else {
            return .profileUnsupported("\(swFormat.name): only 4:2:0 8-bit (NV12) and 10-bit (P010) surfaces are handled")
        }
        let codecName = avcodec_get_name(codec).map { String(cString: $0) } ?? "codec"
        let profileName = avcodec_profile_name(codec, profile).map { String(cString: $0) } ?? "profile \(profile)"
        guard let vaProfile = vaProfile(codec: codec, profile: profile) else {
            return .profileUnsupported("\(codecName) \(profileName) has no VA-API profile")
        }
        var profiles = [VAProfile](repeating: VAProfileNone, count: Int(max(vaMaxNumProfiles(display), 1)))
        var n: Int32 = 0
        var st = vaQueryConfigProfiles(display, &profiles, &n)
        guard st == SCANOUT_VA_STATUS_SUCCESS else { return .profileUnsupported("vaQueryConfigProfiles returned status \(st) (\(vaStatusText(st)))") }
        guard profiles.prefix(Int(n)).contains(vaProfile) else {
            return .profileUnsupported("the driver lists no VA-API profile for \(codecName) \(profileName)")
        }
        var entrypoints = [VAEntrypoint](repeating: VAEntrypoint(rawValue: 0), count: Int(max(vaMaxNumEntrypoints(display), 1)))
        st = vaQueryConfigEntrypoints(display, vaProfile, &entrypoints, &n)
        guard st == SCANOUT_VA_STATUS_SUCCESS, entrypoints.prefix(Int(n)).contains(VAEntrypointVLD) else {
            return .profileUnsupported("\(codecName) \(profileName) has no decode entrypoint (VLD) in this driver")
        }
        var rt = VAConfigAttrib(type: VAConfigAttribRTFormat, value: 0)
        st = vaGetConfigAttributes(display, vaProfile, VAEntrypointVLD, &rt, 1)
        let wanted = surface == .p010 ? UInt32(VA_RT_FORMAT_YUV420_10) : UInt32(VA_RT_FORMAT_YUV420)
        guard st == SCANOUT_VA_STATUS_SUCCESS, rt.value != UInt32(VA_ATTRIB_NOT_SUPPORTED), rt.value & wanted != 0 else {
            return .profileUnsupported("\(codecName) \(profileName): the driver cannot decode \(swFormat.bitDepth)-bit 4:2:0")
        }
        var config = VAConfigID(VA_INVALID_ID)
        st = vaCreateConfig(display, vaProfile, VAEntrypointVLD, &rt, 1, &config)
        guard st == SCANOUT_VA_STATUS_SUCCESS else { return .profileUnsupported("vaCreateConfig returned status \(st) (\(vaStatusText(st)))") }
        defer { vaDestroyConfig(display, config) }
        var count: UInt32 = 0
        st = vaQuerySurfaceAttributes(display, config, nil, &count)
        var attributes = [VASurfaceAttrib](repeating: VASurfaceAttrib(), count: Int(count))
        if st == SCANOUT_VA_STATUS_SUCCESS, count > 0 {
            st = vaQuerySurfaceAttributes(display, config, &attributes, &count)
        }
        guard st == SCANOUT_VA_STATUS_SUCCESS else { return .profileUnsupported("vaQuerySurfaceAttributes returned status \(st) (\(vaStatusText(st)))") }
        var maxW: Int32?, maxH: Int32?, memoryTypes: Int32?
        for a in attributes.prefix(Int(count)) {
            switch a.type {
            case VASurfaceAttribMaxWidth: maxW = a.value.value.i
            case VASurfaceAttribMaxHeight: maxH = a.value.value.i
            case VASurfaceAttribMemoryType: memoryTypes = a.value.value.i
            default: break
            }
        }
        if let maxW, let maxH, width > Int(maxW) || height > Int(maxH) {
            return .profileUnsupported("\(width)x\(height) is above the driver's \(maxW)x\(maxH) for \(codecName) \(profileName)")
        }
        if let memoryTypes, UInt32(bitPattern: memoryTypes) & UInt32(VA_SURFACE_ATTRIB_MEM_TYPE_DRM_PRIME_2) == 0 {
            return .exportUnsupported("the driver's surfaces offer no DRM PRIME 2 memory (vaExportSurfaceHandle)")
        }
        return nil
    }

    /// The VA-API profile libavcodec's VA-API hwaccel decodes `codec`/`profile` with.
    static func vaProfile(codec: AVCodecID, profile: Int32) -> VAProfile? {
        switch (codec, profile) {
        case (AV_CODEC_ID_H264, 66), (AV_CODEC_ID_H264, 66 | 512): return VAProfileH264ConstrainedBaseline
        case (AV_CODEC_ID_H264, 77): return VAProfileH264Main
        case (AV_CODEC_ID_H264, 100): return VAProfileH264High
        case (AV_CODEC_ID_HEVC, 1): return VAProfileHEVCMain
        case (AV_CODEC_ID_HEVC, 2): return VAProfileHEVCMain10
        case (AV_CODEC_ID_VP9, 0): return VAProfileVP9Profile0
        case (AV_CODEC_ID_VP9, 2): return VAProfileVP9Profile2
        case (AV_CODEC_ID_AV1, 0): return VAProfileAV1Profile0
        case (AV_CODEC_ID_MPEG2VIDEO, 4): return VAProfileMPEG2Main
        case (AV_CODEC_ID_MPEG2VIDEO, 5): return VAProfileMPEG2Simple
        case (AV_CODEC_ID_VP8, _): return VAProfileVP8Version0_3
        default: return nil
        }
    }
}

func vaStatusText(_ status: VAStatus) -> String {
    vaErrorStr(status).map { String(cString: $0) } ?? "unknown"
}

/// `get_format` for VA-API: chooses `AV_PIX_FMT_VAAPI` only when libavcodec offers it and the
/// driver supports the stream's profile, bit depth and size (`VAAPIDevice.refusal`); otherwise
/// records why in the context's notes and returns `AV_PIX_FMT_NONE`, so that the decode fails
/// and the fallback decoder takes over with that reason (never a silent software decode inside
/// the hardware decoder). Called on the decoding thread (the context has one thread).
private let chooseVAAPIFormat: @convention(c) (UnsafeMutablePointer<AVCodecContext>?, UnsafePointer<AVPixelFormat>?) -> AVPixelFormat = { ctx, formats in
    HardwareCodec.negotiate(ctx, formats, want: AV_PIX_FMT_VAAPI, backend: "VA-API") { ctx in
        guard let display = scanout_vaapi_device_display(ctx.pointee.hw_device_ctx) else {
            return .initFailed("the codec context has no VA-API device")
        }
        return VAAPIDevice.refusal(display: display, codec: ctx.pointee.codec_id, profile: ctx.pointee.profile,
                                   swFormat: PixelFormat(ctx.pointee.sw_pix_fmt),
                                   width: Int(ctx.pointee.coded_width), height: Int(ctx.pointee.coded_height))
    }
}

/// Hardware decoding through libavcodec's VA-API hwaccel, pictures handed out as DMA-BUFs.
///
/// Each decoded surface is synchronised (`vaSyncSurface`) and exported
/// (`vaExportSurfaceHandle`, `VA_SURFACE_ATTRIB_MEM_TYPE_DRM_PRIME_2`,
/// `VA_EXPORT_SURFACE_SEPARATE_LAYERS | VA_EXPORT_SURFACE_READ_ONLY`) into an `ExportedSurface`
/// that owns the descriptors and a reference to the surface's `AVFrame` (so the display can use
/// it until it lets go). For a CPU destination it is also downloaded (`av_hwframe_transfer_data`,
/// NV12 or P010) and unpacked into the stream's own pixel format, so that CPU consumers and
/// `framemd5` see what the software decoder would give; for a GPU destination the download waits
/// until a consumer asks for planes (`HardwareCodec.deliver`). The export is the frame's
/// `hardware` (`VideoFrame.surface`).
///
/// Failures are thrown as `HardwareFailure` (export, download, refusal in `get_format`); packets
/// the hardware rejects are counted in `stats` like the software decoder's, and
/// `FallbackDecoder` decides when they are too many. Faults from `FaultPlan` act at the same
/// seams. One thread; not Sendable.
///
/// This path has not run on real hardware in this project's CI (no VA-API device there); the
/// software stand-in (`SCANOUT_FAULTS=hw-standin`) exercises everything around it.
final class VAAPIDecoder: HardwareCodecDecoder {
    let kind = "hw"
    let device: VAAPIDevice
    let label: String
    let codec: HardwareCodec
    private let hwFrame = VideoFrame()

    init(for demuxer: Demuxer, device: VAAPIDevice, options: DecoderOptions, faults: FaultPlan) throws {
        self.device = device
        let par = demuxer.codecParameters
        if let reason = VAAPIDevice.refusal(display: device.display, codec: par.pointee.codec_id, profile: par.pointee.profile,
                                            swFormat: demuxer.video.pixelFormat, width: demuxer.video.width, height: demuxer.video.height) {
            throw HardwareUnavailable(reason: reason)
        }
        codec = try HardwareCodec(for: demuxer, device: device.ref, deviceType: AV_HWDEVICE_TYPE_VAAPI, backend: "VA-API",
                                  getFormat: chooseVAAPIFormat, options: options, faults: faults)
        label = "VA-API \(device.path) (\(device.vendor))"
    }

    /// Receives a surface, syncs and exports it, and hands it out (downloaded for a CPU
    /// destination), with the export as `frame.surface`.
    func receive(into frame: VideoFrame) throws -> Bool {
        guard try codec.receive(into: hwFrame, format: .vaapi) else { return false }
        let display = device.display
        let surfaceID = VASurfaceID(truncatingIfNeeded: UInt(bitPattern: hwFrame.planeData(3)))
        var st = vaSyncSurface(display, surfaceID)
        guard st == SCANOUT_VA_STATUS_SUCCESS else {
            throw HardwareFailure.exportFailed("vaSyncSurface returned status \(st) (\(vaStatusText(st)))")
        }
        try codec.delivery.checkExport()
        var desc = VADRMPRIMESurfaceDescriptor()
        st = vaExportSurfaceHandle(display, surfaceID, UInt32(VA_SURFACE_ATTRIB_MEM_TYPE_DRM_PRIME_2),
                                   UInt32(VA_EXPORT_SURFACE_SEPARATE_LAYERS | VA_EXPORT_SURFACE_READ_ONLY), &desc)
        guard st == SCANOUT_VA_STATUS_SUCCESS else {
            throw HardwareFailure.exportFailed("vaExportSurfaceHandle returned status \(st) (\(vaStatusText(st)))")
        }
        let surface = Self.surface(from: desc, keepAlive: hwFrame.clone(), label: label)
        try codec.deliver(hwFrame, as: .dmaBuf(surface), into: frame)
        return true
    }


    /// The export as an `ExportedSurface`, which takes the descriptors (each object's once).
    private static func surface(from desc: VADRMPRIMESurfaceDescriptor, keepAlive: VideoFrame, label: String) -> ExportedSurface {
        var d = desc
        let objectCount = min(d.num_objects, 4), layerCount = min(d.num_layers, 4)
        let objects = (0..<objectCount).map { OwnedDescriptor(taking: scanout_va_prime_object_fd(&d, $0)) }
        let layers = (0..<layerCount).map { l -> ExportedSurface.Layer in
            let planes = (0..<min(scanout_va_prime_layer_planes(&d, l), 4)).map { p in
                DMABufPlane(buffer: objects[Int(min(scanout_va_prime_plane_object(&d, l, p), objectCount - 1))].borrowed,
                            offset: scanout_va_prime_plane_offset(&d, l, p), pitch: scanout_va_prime_plane_pitch(&d, l, p))
            }
            return ExportedSurface.Layer(drmFormat: scanout_va_prime_layer_format(&d, l), planes: planes)
        }
        let invalid: UInt64 = 0x00ff_ffff_ffff_ffff
        let modifier: UInt64? = objectCount > 0 ? scanout_va_prime_object_modifier(&d, 0) : nil
        return ExportedSurface(width: Int(d.width), height: Int(d.height),
                               fourcc: d.fourcc == FourCC.p010 ? FourCC.p010 : FourCC.nv12,
                               modifier: modifier == invalid ? nil : modifier, layers: layers, objects: objects, origin: label, keepAlive: keepAlive)
    }
}
