import CFFmpeg
import CScanoutShims
import ScanoutCore
import ScanoutDemux

/// A CUDA device made by libavutil (`av_hwdevice_ctx_create(AV_HWDEVICE_TYPE_CUDA)`): owns the
/// `AVBufferRef`, which owns the CUDA context (released once, when the last reference goes: this
/// object's and the codec contexts' it was given to). One thread at a time; not Sendable.
final class NVDECDevice {
    let ordinal: Int
    let name: String
    let ref: UnsafeMutablePointer<AVBufferRef>

    private init(ordinal: Int, name: String, ref: UnsafeMutablePointer<AVBufferRef>) {
        self.ordinal = ordinal; self.name = name; self.ref = ref
    }

    deinit {
        var r: UnsafeMutablePointer<AVBufferRef>? = ref
        av_buffer_unref(&r)
    }

    /// The device's CUDA context (owned by the device).
    var cudaContext: UnsafeMutableRawPointer? { scanout_cuda_device_context(ref) }

    /// Opens CUDA device `ordinal`. Before libavutil is asked, Scanout loads libcuda itself and
    /// calls `cuInit`, so that the reason names what is missing (no libcuda, `cuInit` error N, no
    /// device, no NVDEC library) rather than libavutil's generic failure.
    static func open(ordinal: Int) throws -> NVDECDevice {
        let name: String
        switch CUDADriver.probe() {
        case .success(let n): name = ordinal == 0 ? n : (CUDADriver.deviceName(Int32(ordinal)) ?? "CUDA device \(ordinal)")
        case .failure(let e): throw e
        }
        var ref: UnsafeMutablePointer<AVBufferRef>?
        FFmpegLog.ensureInstalled()
        let r = av_hwdevice_ctx_create(&ref, AV_HWDEVICE_TYPE_CUDA, "\(ordinal)", nil, 0)
        guard r >= 0, let ref else {
            throw HardwareUnavailable(reason: .initFailed("av_hwdevice_ctx_create(CUDA, device \(ordinal)): \(ffmpegErrorString(r))"))
        }
        return NVDECDevice(ordinal: ordinal, name: name, ref: ref)
    }

    /// NVDEC's codec numbering (`cudaVideoCodec`) for a libavcodec codec, nil when NVDEC has none.
    static func cudaCodec(_ codec: AVCodecID) -> Int32? {
        switch codec {
        case AV_CODEC_ID_MPEG2VIDEO: return 1
        case AV_CODEC_ID_H264: return 4
        case AV_CODEC_ID_HEVC: return 8
        case AV_CODEC_ID_VP8: return 9
        case AV_CODEC_ID_VP9: return 10
        case AV_CODEC_ID_AV1: return 11
        default: return nil
        }
    }

    /// Why NVDEC on the device of `context` cannot decode a `codec` stream in `swFormat` at
    /// `width`×`height`, or nil when it can (`cuvidGetDecoderCaps`: supported, within the
    /// size limits and the macroblock count).
    static func refusal(context: UnsafeMutableRawPointer?, codec: AVCodecID, profile: Int32, swFormat: PixelFormat,
                        width: Int, height: Int, deviceName: String) -> SelectionReason? {
        guard SurfaceLayout.surfaceFormat(for: swFormat) != nil else {
            return .profileUnsupported("\(swFormat.name): only 4:2:0 8-bit (NV12) and 10-bit (P010) surfaces are handled")
        }
        let codecName = avcodec_get_name(codec).map { String(cString: $0) } ?? "codec"
        let profileName = avcodec_profile_name(codec, profile).map { String(cString: $0) } ?? "profile \(profile)"
        guard let cudaCodec = cudaCodec(codec) else { return .profileUnsupported("NVDEC has no decoder for \(codecName)") }
        guard let context else { return .initFailed("the CUDA device has no context") }
        var caps = scanout_nvdec_caps()
        let depth = swFormat.bitDepth
        let r = scanout_nvdec_caps_query(context, cudaCodec, 1, Int32(depth - 8), &caps)
        guard r == 0 else { return .profileUnsupported("cuvidGetDecoderCaps failed with error \(r) (\(CUDADriver.errorName(r)))") }
        guard caps.supported != 0 else {
            return .profileUnsupported("NVDEC on \(deviceName) cannot decode \(codecName) \(profileName) at \(depth)-bit 4:2:0")
        }
        if width > Int(caps.max_width) || height > Int(caps.max_height) {
            return .profileUnsupported("\(width)x\(height) is above NVDEC's \(caps.max_width)x\(caps.max_height) for \(codecName) on \(deviceName)")
        }
        if width < Int(caps.min_width) || height < Int(caps.min_height) {
            return .profileUnsupported("\(width)x\(height) is below NVDEC's \(caps.min_width)x\(caps.min_height) for \(codecName) on \(deviceName)")
        }
        let macroblocks = ((width + 15) / 16) * ((height + 15) / 16)
        if caps.max_mb_count > 0, macroblocks > Int(caps.max_mb_count) {
            return .profileUnsupported("\(macroblocks) macroblocks are above NVDEC's \(caps.max_mb_count) for \(codecName) on \(deviceName)")
        }
        return nil
    }
}

/// `get_format` for NVDEC: chooses `AV_PIX_FMT_CUDA` only when libavcodec offers it and NVDEC
/// supports the stream (`NVDECDevice.refusal`); otherwise records why and returns
/// `AV_PIX_FMT_NONE`, so that the fallback decoder takes over with that reason.
private let chooseCUDAFormat: @convention(c) (UnsafeMutablePointer<AVCodecContext>?, UnsafePointer<AVPixelFormat>?) -> AVPixelFormat = { ctx, formats in
    HardwareCodec.negotiate(ctx, formats, want: AV_PIX_FMT_CUDA, backend: "CUDA") { ctx in
        NVDECDevice.refusal(context: scanout_cuda_device_context(ctx.pointee.hw_device_ctx), codec: ctx.pointee.codec_id,
                            profile: ctx.pointee.profile, swFormat: PixelFormat(ctx.pointee.sw_pix_fmt),
                            width: Int(ctx.pointee.coded_width), height: Int(ctx.pointee.coded_height), deviceName: "this GPU")
    }
}

/// Hardware decoding through libavcodec's NVDEC hwaccel (`AV_HWDEVICE_TYPE_CUDA`): pictures stay
/// in CUDA device memory (NV12, or P010 for 10-bit) and are handed out as `CUDAFrame`s, which the
/// GLES renderer copies into its textures on the GPU (CUDA–GL interop). For a CPU destination
/// each picture is also downloaded and unpacked into the stream's own pixel format, exactly as
/// for VA-API (`HardwareCodec.deliver`), so `framemd5` sees the software decoder's pixels.
///
/// `libcuda.so.1` is reached at run time (`CUDADriver`), never linked. The `export@N` fault acts
/// where the picture is wrapped for the GPU consumer, the others as for VA-API. One thread; not
/// Sendable.
final class NVDECDecoder: HardwareCodecDecoder {
    let kind = "hw"
    let device: NVDECDevice
    let label: String
    let codec: HardwareCodec
    private let hwFrame = VideoFrame()

    init(for demuxer: Demuxer, device: NVDECDevice, options: DecoderOptions, faults: FaultPlan) throws {
        self.device = device
        let par = demuxer.codecParameters
        if let reason = NVDECDevice.refusal(context: device.cudaContext, codec: par.pointee.codec_id, profile: par.pointee.profile,
                                            swFormat: demuxer.video.pixelFormat, width: demuxer.video.width, height: demuxer.video.height,
                                            deviceName: device.name) {
            throw HardwareUnavailable(reason: reason)
        }
        codec = try HardwareCodec(for: demuxer, device: device.ref, deviceType: AV_HWDEVICE_TYPE_CUDA, backend: "NVDEC",
                                  getFormat: chooseCUDAFormat, options: options, faults: faults)
        label = "NVDEC cuda:\(device.ordinal) (\(device.name))"
    }

    func receive(into frame: VideoFrame) throws -> Bool {
        guard try codec.receive(into: hwFrame, format: .cuda) else { return false }
        try codec.delivery.checkExport()
        let layout = PixelFormat(rawValue: scanout_hwframe_sw_format(hwFrame.pointer))
        guard layout == codec.surfaceFormat else {
            throw HardwareFailure.unsupported("NVDEC output \(layout.name) surfaces, expected \(codec.surfaceFormat.name)")
        }
        guard let context = device.cudaContext else { throw HardwareFailure.exportFailed("the CUDA device has no context") }
        let picture = CUDAFrame(frame: hwFrame.clone(), context: context, layout: layout)
        try codec.deliver(hwFrame, as: .cuda(picture), into: frame)
        return true
    }

}
