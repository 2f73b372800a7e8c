import CFFmpeg
import ScanoutCore
import ScanoutDemux
import ScanoutDecode

/// Encodes `RGBImage`s as PNG with libavcodec's PNG encoder; owns one `AVCodecContext` per
/// image size and layout (freed once). The sample aspect ratio goes into the pHYs chunk.
/// Not thread-safe; one owner at a time.
public final class PNGEncoder {
    private var context: UnsafeMutablePointer<AVCodecContext>?
    private var contextKey: (Int, Int, RGBImage.Layout, Rational)?
    private let frame = VideoFrame()
    private let packet = Packet()

    public init() {}

    deinit { avcodec_free_context(&context) }

    /// The PNG file bytes of `image`.
    public func encode(_ image: RGBImage) throws -> [UInt8] {
        let ctx = try openContext(for: image)
        try frame.fill(with: image)
        return try encodeOne(frame, with: ctx, packet: packet, codec: "png")
    }

    /// Encodes `image` and writes it to `path`.
    public func write(_ image: RGBImage, to path: String) throws {
        try writeFile(path, bytes: try encode(image))
    }

    private func openContext(for image: RGBImage) throws -> UnsafeMutablePointer<AVCodecContext> {
        if let ctx = context, let k = contextKey, k.0 == image.width, k.1 == image.height, k.2 == image.layout, k.3 == image.sampleAspectRatio {
            return ctx
        }
        avcodec_free_context(&context)
        guard let codec = avcodec_find_encoder(AV_CODEC_ID_PNG) else {
            throw MediaError.ffmpeg(call: "avcodec_find_encoder(png)", code: SCANOUT_AVERROR_DECODER_NOT_FOUND, message: "this libavcodec has no PNG encoder")
        }
        guard let ctx = avcodec_alloc_context3(codec) else { fatalError("avcodec_alloc_context3: out of memory") }
        ctx.pointee.width = Int32(image.width)
        ctx.pointee.height = Int32(image.height)
        ctx.pointee.pix_fmt = image.layout.pixelFormat.av
        ctx.pointee.time_base = AVRational(num: 1, den: 25)
        ctx.pointee.sample_aspect_ratio = image.sampleAspectRatio.av
        try openEncoder(ctx, codec, "png")
        context = ctx
        contextKey = (image.width, image.height, image.layout, image.sampleAspectRatio)
        return ctx
    }
}

/// Writes `bytes` to `path` (created or truncated), `-` for stdout.
public func writeFile(_ path: String, bytes: [UInt8]) throws {
    let out = try RawBytesWriter(path: path)
    try out.write(bytes)
    try out.close()
}

extension VideoFrame {
    /// This frame as a copy of `image` (its layout's packed pixel format), in buffers of its own.
    func fill(with image: RGBImage) throws {
        let f = pointer
        av_frame_unref(f)
        f.pointee.format = image.layout.pixelFormat.rawValue
        f.pointee.width = Int32(image.width)
        f.pointee.height = Int32(image.height)
        try check(av_frame_get_buffer(f, 0), "av_frame_get_buffer")
        let stride = lineSize(0)
        guard let dst = planeData(0) else { throw MediaError.ffmpeg(call: "av_frame_get_buffer", code: -1, message: "no plane") }
        image.bytes.withUnsafeBytes { src in
            for y in 0..<image.height {
                (dst + y * stride).update(from: src.baseAddress!.assumingMemoryBound(to: UInt8.self) + y * image.rowBytes, count: image.rowBytes)
            }
        }
    }
}

/// Opens `ctx` with `codec`; frees it when that fails.
func openEncoder(_ ctx: UnsafeMutablePointer<AVCodecContext>, _ codec: UnsafePointer<AVCodec>, _ name: String) throws {
    let r = avcodec_open2(ctx, codec, nil)
    guard r < 0 else { return }
    var c: UnsafeMutablePointer<AVCodecContext>? = ctx
    avcodec_free_context(&c)
    try check(r, "avcodec_open2 (\(name))")
}

/// One frame through an image encoder (PNG, JPEG): the packet's bytes.
func encodeOne(_ frame: VideoFrame, with ctx: UnsafeMutablePointer<AVCodecContext>, packet: Packet, codec: String) throws -> [UInt8] {
    try check(avcodec_send_frame(ctx, frame.pointer), "avcodec_send_frame (\(codec))")
    av_packet_unref(packet.pointer)
    try check(avcodec_receive_packet(ctx, packet.pointer), "avcodec_receive_packet (\(codec))")
    let p = packet.pointer.pointee
    return Array(UnsafeBufferPointer(start: p.data, count: Int(p.size)))
}
