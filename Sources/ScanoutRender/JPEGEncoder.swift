import CFFmpeg
import ScanoutCore
import ScanoutDecode
import ScanoutDemux

/// Encodes 8-bit `RGBImage`s as baseline JPEG (full-range 4:2:0, JFIF) with libavcodec's MJPEG
/// encoder, the picture converted by libswscale (`Scaler`): a snapshot smaller than its PNG, for
/// a page that polls one a second. Owns its contexts (freed once); one owner at a time.
public final class JPEGEncoder {
    private var context: UnsafeMutablePointer<AVCodecContext>?
    private var contextSize: (Int, Int)?
    private let rgb = VideoFrame()
    private let yuv = VideoFrame()
    private let packet = Packet()
    private let scaler = Scaler()
    /// libavcodec's quantiser scale: 2 (best) to 31 (smallest).
    public let quality: Int

    public init(quality: Int = 4) {
        self.quality = min(31, max(2, quality))
    }

    deinit { avcodec_free_context(&context) }

    /// The JPEG file bytes of `image` (8 bits per channel: a 16-bit image is refused).
    public func encode(_ image: RGBImage) throws -> [UInt8] {
        guard image.layout == .rgb24 else {
            throw MediaError.ffmpeg(call: "JPEGEncoder.encode", code: -1, message: "JPEG takes 8-bit pictures; this one is \(image.layout)")
        }
        let ctx = try openContext(width: image.width, height: image.height)
        try rgb.fill(with: image)
        try scaler.convert(rgb, to: .yuvj420p, into: yuv)
        yuv.pointer.pointee.quality = Int32(quality) * FF_QP2LAMBDA
        yuv.pointer.pointee.pts = 0
        return try encodeOne(yuv, with: ctx, packet: packet, codec: "mjpeg")
    }

    private func openContext(width: Int, height: Int) throws -> UnsafeMutablePointer<AVCodecContext> {
        if let ctx = context, let s = contextSize, s == (width, height) { return ctx }
        avcodec_free_context(&context)
        guard let codec = avcodec_find_encoder(AV_CODEC_ID_MJPEG) else {
            throw MediaError.ffmpeg(call: "avcodec_find_encoder(mjpeg)", code: SCANOUT_AVERROR_DECODER_NOT_FOUND, message: "this libavcodec has no MJPEG encoder")
        }
        guard let ctx = avcodec_alloc_context3(codec) else { fatalError("avcodec_alloc_context3: out of memory") }
        ctx.pointee.width = Int32(width)
        ctx.pointee.height = Int32(height)
        ctx.pointee.pix_fmt = AV_PIX_FMT_YUVJ420P
        ctx.pointee.color_range = AVCOL_RANGE_JPEG
        ctx.pointee.time_base = AVRational(num: 1, den: 25)
        ctx.pointee.flags |= AV_CODEC_FLAG_QSCALE
        try openEncoder(ctx, codec, "mjpeg")
        context = ctx
        contextSize = (width, height)
        return ctx
    }
}
