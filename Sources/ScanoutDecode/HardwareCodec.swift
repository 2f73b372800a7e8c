import CFFmpeg
import ScanoutCore
import ScanoutDemux

/// The libavcodec side every hardware decoder shares (VA-API, NVDEC): a codec context with a
/// hardware device and a `get_format` that refuses rather than decoding in software, the packet
/// and frame calls with their counting, the fault seams, and the download of a hardware picture
/// into the stream's own pixel format. What differs per backend (syncing, exporting, the memory
/// handed out) stays in the backend's decoder.
///
/// Owns its `AVCodecContext` (freed once, in `deinit`); one thread; not Sendable.
final class HardwareCodec {
    let context: UnsafeMutablePointer<AVCodecContext>
    let errorLines = ErrorLines()
    /// The fault seams and the hand-over to where frames go.
    private(set) var delivery: HardwareDelivery
    var faults: FaultPlan { delivery.faults }
    /// The stream's pixel format (what CPU consumers get) and the surface's (NV12 or P010).
    let streamFormat: PixelFormat
    let surfaceFormat: PixelFormat
    var stats = DecodeStats()

    /// Opens the stream's decoder on `device` (an `AVBufferRef` of `deviceType`) with `getFormat`.
    /// Throws `HardwareUnavailable` with the backend's name in the reason.
    init(for demuxer: Demuxer, device: UnsafeMutablePointer<AVBufferRef>, deviceType: AVHWDeviceType, backend: String,
         getFormat: @escaping @convention(c) (UnsafeMutablePointer<AVCodecContext>?, UnsafePointer<AVPixelFormat>?) -> AVPixelFormat,
         options: DecoderOptions, faults: FaultPlan) throws {
        let par = demuxer.codecParameters
        streamFormat = demuxer.video.pixelFormat
        guard let surface = SurfaceLayout.surfaceFormat(for: streamFormat) else {
            throw HardwareUnavailable(reason: .profileUnsupported("\(streamFormat.name): only 4:2:0 8-bit (NV12) and 10-bit (P010) surfaces are handled"))
        }
        surfaceFormat = surface
        delivery = HardwareDelivery(faults: faults, options: options)
        if faults.hwInit { throw HardwareUnavailable(reason: .initFailed("injected fault hw-init (SCANOUT_FAULTS)")) }
        guard let codec = Self.decoder(for: par.pointee.codec_id, deviceType: deviceType),
              let ctx = avcodec_alloc_context3(codec) else {
            throw HardwareUnavailable(reason: .profileUnsupported("no libavcodec decoder for \(demuxer.video.codecName) decodes through \(backend)"))
        }
        FFmpegLog.ensureInstalled()
        ctx.pointee.opaque = Unmanaged.passUnretained(errorLines).toOpaque()
        var r = avcodec_parameters_to_context(ctx, par)
        if r >= 0 {
            ctx.pointee.pkt_timebase = demuxer.stream.pointee.time_base
            // One thread: the hardware does the work, and frame threads would only add delay.
            ctx.pointee.thread_count = 1
            ctx.pointee.hw_device_ctx = av_buffer_ref(device)
            ctx.pointee.get_format = getFormat
            // Surfaces held by frames handed out (the display's current and next frame, a clone).
            ctx.pointee.extra_hw_frames = 4
            r = avcodec_open2(ctx, codec, nil)
        }
        if r < 0 {
            var c: UnsafeMutablePointer<AVCodecContext>? = ctx
            avcodec_free_context(&c)
            throw HardwareUnavailable(reason: .initFailed("avcodec_open2 with \(backend): \(ffmpegErrorString(r))"))
        }
        context = ctx
    }

    deinit {
        var c: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&c)
    }

    /// The first libavcodec decoder of `id` that decodes through a `deviceType` device. Not simply
    /// `avcodec_find_decoder`: for AV1 that is libdav1d, which has no hardware path.
    static func decoder(for id: AVCodecID, deviceType: AVHWDeviceType) -> UnsafePointer<AVCodec>? {
        var opaque: UnsafeMutableRawPointer?
        while let c = av_codec_iterate(&opaque) {
            guard av_codec_is_decoder(c) != 0, c.pointee.id == id else { continue }
            var i: Int32 = 0
            while let config = avcodec_get_hw_config(c, i) {
                if config.pointee.device_type == deviceType, config.pointee.methods & Int32(AV_CODEC_HW_CONFIG_METHOD_HW_DEVICE_CTX) != 0 {
                    return c
                }
                i += 1
            }
        }
        return nil
    }

    /// The body of every backend's `get_format`: chooses `want` only when libavcodec offers it
    /// and `refusal` (the driver's check of the stream's profile, bit depth and size) finds
    /// nothing; otherwise records why in the context's notes and returns `AV_PIX_FMT_NONE`, so
    /// that the decode fails and the fallback decoder takes over with that reason (never a silent
    /// software decode inside the hardware decoder). Called on the decoding thread.
    static func negotiate(_ ctx: UnsafeMutablePointer<AVCodecContext>?, _ formats: UnsafePointer<AVPixelFormat>?, want: AVPixelFormat,
                          backend: String, refusal: (UnsafeMutablePointer<AVCodecContext>) -> SelectionReason?) -> AVPixelFormat {
        guard let ctx, let formats else { return AV_PIX_FMT_NONE }
        let notes = ctx.pointee.opaque.map { Unmanaged<ErrorLines>.fromOpaque($0).takeUnretainedValue() }
        var offered = false
        var i = 0
        while formats[i] != AV_PIX_FMT_NONE {
            if formats[i] == want { offered = true }
            i += 1
        }
        guard offered else {
            notes?.refuse("libavcodec offers no \(backend) output for this stream")
            return AV_PIX_FMT_NONE
        }
        if let reason = refusal(ctx) {
            notes?.refuse(reason.description)
            return AV_PIX_FMT_NONE
        }
        return want
    }

    /// `avcodec_send_packet`; a rejected packet is counted. Throws `HardwareFailure.unsupported`
    /// when `get_format` refused the stream. The `decode@N` fault rejects packets here.
    func send(_ packet: Packet?) throws {
        if packet != nil, let injected = delivery.injectedRejection {
            stats.rejectedPackets += 1
            errorLines.add(injected)
            return
        }
        let r = avcodec_send_packet(context, packet?.pointer)
        if r < 0 && r != SCANOUT_AVERROR_EOF && r != SCANOUT_AVERROR_EAGAIN {
            if let refusal = errorLines.formatRefusal { throw HardwareFailure.unsupported(refusal) }
            stats.rejectedPackets += 1
        }
        stats.loggedErrors = errorLines.count
    }

    /// `avcodec_receive_frame` into `hwFrame`, which must come out in `format`. False when the
    /// decoder needs input, is drained, or failed on this frame (counted).
    func receive(into hwFrame: VideoFrame, format: PixelFormat) throws -> Bool {
        let r = avcodec_receive_frame(context, hwFrame.pointer)
        if r == SCANOUT_AVERROR_EAGAIN || r == SCANOUT_AVERROR_EOF { return false }
        if r < 0 {
            if let refusal = errorLines.formatRefusal { throw HardwareFailure.unsupported(refusal) }
            stats.rejectedPackets += 1
            stats.loggedErrors = errorLines.count
            return false
        }
        guard hwFrame.pixelFormat == format else {
            throw HardwareFailure.unsupported("libavcodec output \(hwFrame.pixelFormat.name) instead of \(format.name) surfaces")
        }
        return true
    }

    /// Hands `hwFrame`'s picture out in `frame` as `memory` (`HardwareDelivery.deliver`): for a
    /// CPU destination downloaded and unpacked at once, for a GPU one held as it is.
    func deliver(_ hwFrame: VideoFrame, as memory: HardwareFrame.Memory, into frame: VideoFrame) throws {
        let keep = hwFrame.clone()
        let surfaceFormat = surfaceFormat, streamFormat = streamFormat
        try delivery.deliver(memory, props: hwFrame, format: hwFrame.pixelFormat, reference: keep, into: frame) { target in
            try Self.download(keep, surfaceFormat: surfaceFormat, streamFormat: streamFormat, into: target)
        }
        stats.framesDecoded += 1
        if hwFrame.hasDecodeErrors { stats.concealedFrames += 1 }
        stats.loggedErrors = errorLines.count
    }

    /// `av_hwframe_transfer_data` into `surfaceFormat`, then the exact unpack into `streamFormat`.
    static func download(_ hwFrame: VideoFrame, surfaceFormat: PixelFormat, streamFormat: PixelFormat, into frame: VideoFrame) throws {
        let scratch = VideoFrame()
        scratch.pointer.pointee.format = surfaceFormat.rawValue
        let t = av_hwframe_transfer_data(scratch.pointer, hwFrame.pointer, 0)
        guard t >= 0 else { throw HardwareFailure.importFailed("av_hwframe_transfer_data: \(ffmpegErrorString(t))") }
        av_frame_copy_props(scratch.pointer, hwFrame.pointer)
        try SurfaceLayout.unpack(scratch, to: streamFormat, into: frame)
    }

    func flush() { avcodec_flush_buffers(context) }

    var lastError: String? { errorLines.last }
}

/// A hardware decoder built on a `HardwareCodec`: the packet side, the counts and the flush are
/// the codec's; the decoder adds what its backend does with each picture (`receive`).
protocol HardwareCodecDecoder: Decoder {
    var codec: HardwareCodec { get }
}

extension HardwareCodecDecoder {
    var stats: DecodeStats { codec.stats }
    func send(_ packet: Packet?) throws { try codec.send(packet) }
    func flush() { codec.flush() }
    var lastError: String? { codec.lastError }
}
