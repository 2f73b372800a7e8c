import CFFmpeg
import ScanoutCore
import ScanoutDemux

/// Turns packets of one stream into frames, in presentation order.
///
/// The contract follows libavcodec's send/receive model: after each `send`, call `receive` until
/// it returns false; `send(nil)` starts draining, after which `receive` returns the delayed frames
/// and then false. `flush()` drops everything in flight (after a seek).
public protocol Decoder: AnyObject {
    /// Short name of the implementation for logs and stats ("sw", "hw").
    var kind: String { get }
    func send(_ packet: Packet?) throws
    func receive(into frame: VideoFrame) throws -> Bool
    func flush()
    var stats: DecodeStats { get }
    /// The last error line the decoder logged, if any (for fallback reasons and messages).
    var lastError: String? { get }
    /// From the next packet sent on, skips (`true`) or decodes (`false`) the pictures that no
    /// other picture refers to. Returns whether they are being skipped: a decoder that cannot
    /// skip them without changing the pictures it does decode keeps decoding everything.
    func skipUnreferencedPictures(_ skip: Bool) -> Bool
    /// Decodes `packet` and returns its picture at once, when the packet is a picture that is
    /// shown first and refers to nothing (an H.264 IDR picture), instead of after the decoder's
    /// reorder delay; decoding then goes on from that packet, and its picture comes out once
    /// more, which the caller drops. Says whether the picture is in `frame`, and whether the
    /// packet was sent to the decoder (if not, the caller sends it).
    func decodeAtOnce(_ packet: Packet, into frame: VideoFrame) throws -> FirstPicture
}

extension Decoder {
    public var lastError: String? { nil }
    public func skipUnreferencedPictures(_ skip: Bool) -> Bool { false }
    public func decodeAtOnce(_ packet: Packet, into frame: VideoFrame) throws -> FirstPicture { .notSent }
}

/// What `Decoder.decodeAtOnce` did with a stream's first packet.
public enum FirstPicture: Sendable {
    /// Nothing: the packet is for the caller to send.
    case notSent
    /// The packet went to the decoder; its picture comes out in turn.
    case sent
    /// The packet went to the decoder, and its picture is in the frame already.
    case decoded
}

/// What went wrong inside a stream, counted rather than fatal, as the ffmpeg tool does.
public struct DecodeStats: Sendable, Equatable {
    /// Packets the decoder rejected (`avcodec_send_packet` < 0) plus failed receives.
    public var rejectedPackets = 0
    /// Frames the decoder output with concealed errors (`decode_error_flags`, `AV_FRAME_FLAG_CORRUPT`).
    public var concealedFrames = 0
    /// Error lines libavcodec logged while decoding (how most concealed errors show up).
    public var loggedErrors = 0
    /// Of `loggedErrors`, the lines saying that a picture names a reference the decoder does not
    /// hold. In a stream read from its start they mean damage; after a seek to a keyframe of an
    /// open GOP they are expected (see `FrameReader.decodeStats`).
    public var missingReferenceErrors = 0
    public var framesDecoded = 0

    public var errorCount: Int { rejectedPackets + loggedErrors }
    public var hasErrors: Bool { rejectedPackets > 0 || concealedFrames > 0 || loggedErrors > 0 }
    public init() {}
}

/// Decoding options: threads, and how the decoder is chosen (see `DecoderSelector`).
public struct DecoderOptions: Sendable {
    /// Decoding threads of the software decoder; 0 lets libavcodec pick (one per core).
    public var threads: Int = 0
    /// The player type asked for; `auto` tries native → hw → sw. A content hint applies only
    /// when this is `auto`.
    public var playerType: PlayerType = .auto
    /// Consecutive decode errors after which a hardware decoder is replaced by software.
    public var fallbackAfter: Int = 3
    /// false: a hardware type that is unavailable, or fails mid-stream, is an error instead of a
    /// switch to software (`--no-fallback`).
    public var allowFallback = true
    /// What the selector is told about the machine (KMS planes, EGL import, render node, faults).
    public var environment = SelectorEnvironment()
    /// Told of the decision and of any fallback, on the decoding thread, as they happen.
    public var observer: (@Sendable (DecoderEvent) -> Void)?
    /// Where frames go: `cpu` (hardware frames downloaded as decoded) or `gpu` (kept in GPU
    /// memory until a consumer asks for planes).
    public var destination: FrameDestination = .cpu
    /// Counts the pipeline's copies between CPU and GPU memory (downloads here; the renderer
    /// counts its uploads into the same object).
    public var transfers: FrameTransfers?
    /// Where the software stand-in for VA-API exports its pictures: nil for memory files
    /// (`MemfdSurfaceAllocator`), or GBM buffer objects of the display's device, which a GPU
    /// consumer imports as they are. Used on the decoding thread (see `SurfaceAllocator`).
    public var surfaceAllocator: (any SurfaceAllocator)?
    /// The picture shown while an audio-only input without a cover plays (the player's slate);
    /// nil: black.
    public var stillImage: String?
    /// How long a still image (a PNG, JPEG, WebP... input) is shown, seconds: its picture,
    /// decoded once, is handed out `StillDecoder.frameRate` times a second until then. Nil: the
    /// picture once, as one frame (what `render` and `framemd5` take).
    public var stillDuration: Double?

    public init(threads: Int = 0, playerType: PlayerType = .auto, fallbackAfter: Int = 3, allowFallback: Bool = true,
                environment: SelectorEnvironment = SelectorEnvironment(), observer: (@Sendable (DecoderEvent) -> Void)? = nil) {
        self.threads = threads; self.playerType = playerType; self.fallbackAfter = fallbackAfter
        self.allowFallback = allowFallback; self.environment = environment; self.observer = observer
    }
}

/// libavcodec software decoding with frame and slice threading; owns the `AVCodecContext`
/// (freed once, in `deinit`). Not thread-safe; one owner at a time (libavcodec runs its own
/// worker threads internally).
public final class SoftwareDecoder: Decoder {
    public let kind = "sw"
    public let codecName: String
    let context: UnsafeMutablePointer<AVCodecContext>
    private let input: String
    public private(set) var stats = DecodeStats()
    private let errorLines = ErrorLines()

    /// Opens the decoder for the demuxer's video stream.
    public convenience init(for demuxer: Demuxer, options: DecoderOptions = DecoderOptions()) throws {
        try self.init(parameters: demuxer.codecParameters, timeBase: demuxer.stream.pointee.time_base, codecName: demuxer.video.codecName,
                      input: demuxer.input, options: options)
    }

    /// Opens the decoder for a stream's codec parameters (a cover picture's, `StillDecoder`).
    init(parameters par: UnsafeMutablePointer<AVCodecParameters>, timeBase: AVRational, codecName: String, input: String,
         options: DecoderOptions) throws {
        self.input = input
        self.codecName = codecName
        guard let codec = avcodec_find_decoder(par.pointee.codec_id) else {
            var name = codecName
            if name == "none" || name == "unknown" {
                let tag = par.pointee.codec_tag
                name = tag == 0 ? "unknown" : "unknown (tag \(fourCC(tag)))"
            }
            throw MediaError.unsupportedCodec(input: input, codec: name)
        }
        guard let ctx = avcodec_alloc_context3(codec) else { fatalError("avcodec_alloc_context3: out of memory") }
        context = ctx
        FFmpegLog.ensureInstalled()
        ctx.pointee.opaque = Unmanaged.passUnretained(errorLines).toOpaque()
        var r = avcodec_parameters_to_context(ctx, par)
        if r >= 0 {
            ctx.pointee.pkt_timebase = timeBase
            ctx.pointee.thread_count = Int32(options.threads)
            ctx.pointee.thread_type = FF_THREAD_FRAME | FF_THREAD_SLICE
            r = avcodec_open2(ctx, codec, nil)
        }
        if r < 0 {
            var c: UnsafeMutablePointer<AVCodecContext>? = ctx
            avcodec_free_context(&c)
            throw MediaError.decoderOpenFailed(input: input, codec: codecName, reason: ffmpegErrorString(r))
        }
    }

    deinit {
        // Joins libavcodec's threads before `errorLines`, which they may log into, is released.
        var c: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&c)
    }

    /// Feeds one packet, or `nil` to drain (`avcodec_send_packet`). A packet the decoder rejects
    /// is counted and skipped, as the ffmpeg tool does; it does not end decoding.
    public func send(_ packet: Packet?) throws {
        let r = avcodec_send_packet(context, packet?.pointer)
        if r < 0 && r != SCANOUT_AVERROR_EOF && r != SCANOUT_AVERROR_EAGAIN {
            stats.rejectedPackets += 1
        }
        syncLoggedErrors()
    }

    /// Takes the next decoded frame (`avcodec_receive_frame`); false when the decoder needs input
    /// or is drained.
    public func receive(into frame: VideoFrame) throws -> Bool {
        frame.unref()
        let r = avcodec_receive_frame(context, frame.pointer)
        if r == SCANOUT_AVERROR_EAGAIN || r == SCANOUT_AVERROR_EOF { return false }
        if r < 0 {
            stats.rejectedPackets += 1
            syncLoggedErrors()
            return false
        }
        stats.framesDecoded += 1
        if frame.hasDecodeErrors { stats.concealedFrames += 1 }
        syncLoggedErrors()
        return true
    }

    /// H.264 only (`AVCodecContext.skip_frame = AVDISCARD_NONREF`): a picture whose
    /// `nal_ref_idc` is 0 is never a reference, so the pictures decoded around it are the same
    /// bits. (HEVC's non-reference NAL types may still be referenced from a higher temporal
    /// layer, and other decoders interpret the setting loosely: they decode everything.)
    /// Frame threads take the setting with each packet submitted, so it applies per packet.
    public func skipUnreferencedPictures(_ skip: Bool) -> Bool {
        guard context.pointee.codec_id == AV_CODEC_ID_H264 else { return false }
        context.pointee.skip_frame = skip ? AVDISCARD_NONREF : AVDISCARD_DEFAULT
        return skip
    }

    /// A decoder holds each picture until as many have followed as the stream may reorder (x264's
    /// B-pyramid: two more, and one more per extra frame thread), so the first picture of a
    /// stream costs four decodes. An IDR picture refers to nothing: a second, single-threaded
    /// context decodes it alone on the calling thread, while this decoder's frame threads decode
    /// the same packet at the same time, so that decoding goes on from it with nothing left to
    /// redo. The same for a keyframe that is not IDR (an open GOP's I picture with its recovery
    /// point, where a live channel is joined); when it cannot be decoded alone it is left to the
    /// frame threads. The pictures are the same bits (FFmpeg's decoders do not depend on threading).
    /// Counted once in `stats`.
    public func decodeAtOnce(_ packet: Packet, into frame: VideoFrame) throws -> FirstPicture {
        guard context.pointee.codec_id == AV_CODEC_ID_H264, isIDR(packet) || packet.isKeyframe,
              let alone = SingleThreadContext(copying: context) else { return .notSent }
        try send(packet)
        guard alone.decode(packet, into: frame) else {
            // Not decodable alone after all: the frame threads have it, and it comes out in turn.
            frame.unref()
            return .sent
        }
        return .decoded
    }

    /// Whether `packet` holds an H.264 IDR slice (NAL unit type 5): length-prefixed NAL units
    /// when the stream's extradata is an avcC record (MP4, Matroska), start codes otherwise.
    private func isIDR(_ packet: Packet) -> Bool {
        let p = packet.pointer.pointee
        guard let data = p.data, p.size > 0 else { return false }
        let bytes = UnsafeBufferPointer(start: data, count: Int(p.size))
        if let extra = context.pointee.extradata, context.pointee.extradata_size >= 7, extra[0] == 1 {
            let lengthSize = Int(extra[4] & 3) + 1
            var i = 0
            while i + lengthSize < bytes.count {
                var length = 0
                for k in 0..<lengthSize { length = length << 8 | Int(bytes[i + k]) }
                if bytes[i + lengthSize] & 0x1f == 5 { return true }
                i += lengthSize + length
            }
            return false
        }
        var i = 0
        while i + 3 < bytes.count {
            if bytes[i] == 0, bytes[i + 1] == 0, bytes[i + 2] == 1 {
                if bytes[i + 3] & 0x1f == 5 { return true }
                i += 3
            } else {
                i += 1
            }
        }
        return false
    }

    /// Drops frames in flight and resets the decoder's state (`avcodec_flush_buffers`).
    public func flush() {
        avcodec_flush_buffers(context)
    }

    public var lastError: String? { errorLines.last }

    private func syncLoggedErrors() {
        stats.loggedErrors = errorLines.count
        stats.missingReferenceErrors = errorLines.missingReferences
    }
}

/// A one-thread copy of a decoder's context, for one picture decoded alone on the calling thread
/// (`SoftwareDecoder.decodeAtOnce`). Owns its `AVCodecContext`, freed once in `deinit`.
private final class SingleThreadContext {
    private let context: UnsafeMutablePointer<AVCodecContext>

    /// Nil when the copy cannot be opened (the caller then does without it). Its log lines are
    /// not counted: the decoder it copies decodes the same picture and counts them once.
    init?(copying source: UnsafeMutablePointer<AVCodecContext>) {
        guard let codec = source.pointee.codec, let ctx = avcodec_alloc_context3(codec) else { return nil }
        context = ctx
        guard let par = avcodec_parameters_alloc() else { return nil }
        defer { var p: UnsafeMutablePointer<AVCodecParameters>? = par; avcodec_parameters_free(&p) }
        guard avcodec_parameters_from_context(par, source) >= 0, avcodec_parameters_to_context(ctx, par) >= 0 else { return nil }
        ctx.pointee.pkt_timebase = source.pointee.pkt_timebase
        ctx.pointee.thread_count = 1
        guard avcodec_open2(ctx, codec, nil) >= 0 else { return nil }
    }

    deinit {
        var c: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&c)
    }

    /// Decodes `packet` alone (sent, then drained) into `frame`; false when no picture came.
    func decode(_ packet: Packet, into frame: VideoFrame) -> Bool {
        frame.unref()
        guard avcodec_send_packet(context, packet.pointer) >= 0 else { return false }
        _ = avcodec_send_packet(context, nil)
        return avcodec_receive_frame(context, frame.pointer) >= 0
    }
}

func fourCC(_ tag: UInt32) -> String {
    let bytes = (0..<4).map { UInt8((tag >> ($0 * 8)) & 0xff) }
    return String(decoding: bytes.map { (32...126).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
}
