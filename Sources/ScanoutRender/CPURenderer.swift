import CFFmpeg
import ScanoutCore
import ScanoutDemux
import ScanoutDecode

/// The bit-exact reference renderer: a decoded frame to upright RGB in CPU memory with
/// libswscale (`Scaler`), so that its output equals
/// `ffmpeg -i INPUT -vf select=eq(n\,N) -frames:v 1 -pix_fmt rgb24` byte for byte.
///
/// Orientation is applied to the YUV planes before conversion, exactly like the ffmpeg tool's
/// autorotation; the sample aspect ratio is carried in the image, not resampled. Reuses its
/// conversion context and buffers between frames. Not thread-safe; one owner at a time.
public final class CPURenderer {
    private let scaler = Scaler()
    /// Used only for rows that FFmpeg would pad (see `render`).
    private let converted = VideoFrame()
    /// Brings HDR frames to SDR first when asked to.
    private lazy var toneMapper = CPUToneMapper()
    /// FFmpeg's line alignment for pictures it allocates (`av_frame_get_buffer`).
    static let directAlignment = 64

    public init() {}

    /// Renders `frame` turned by `orientation` into packed RGB of `layout`; a PQ or HLG frame
    /// tone mapped first when `toneMapping` is given (see `render(_:orientation:toneMapping:into:)`).
    public func render(_ frame: VideoFrame, orientation: Orientation = .identity, toneMapping: ToneMapping? = nil,
                       layout: RGBImage.Layout = .rgb24) throws -> RGBImage {
        var image = RGBImage(width: 0, height: 0, layout: layout, bytes: [])
        try render(frame, orientation: orientation, toneMapping: toneMapping, into: &image)
        return image
    }

    /// Renders into `image`, reusing its storage when the size is unchanged (no allocation per
    /// frame in a playback loop). `image.layout` chooses the output layout.
    /// A GPU-only hardware frame is downloaded first (`VideoFrame.makeCPUResident()`).
    /// With `toneMapping`, a PQ or HLG frame is brought to 8-bit SDR first (`CPUToneMapper`; a
    /// 16-bit layout then holds 8-bit values widened); without it, or for SDR frames, the picture
    /// is ffmpeg's conversion, bit for bit.
    public func render(_ frame: VideoFrame, orientation: Orientation = .identity, toneMapping: ToneMapping? = nil,
                       into image: inout RGBImage) throws {
        try frame.makeCPUResident()
        let frame = try toneMapping.map { try toneMapper.map(frame, $0) } ?? frame
        let layout = image.layout
        var source = frame
        var turnAfter = Orientation.identity
        if !orientation.isIdentity {
            if frame.canOrientPlanes(orientation) {
                source = try frame.oriented(orientation)
            } else {
                turnAfter = orientation
            }
        }
        let rowBytes = source.width * layout.bytesPerPixel
        let count = rowBytes * source.height
        if rowBytes % Self.directAlignment == 0 {
            // Rows laid out as FFmpeg lays out its own pictures of this size: converted straight
            // into the image's storage, with no intermediate picture and no copy. A new image is
            // not zeroed first (the conversion writes every byte), and it keeps FFmpeg's padding
            // after the last row for converters that write in whole vectors.
            let capacity = count + Self.directAlignment
            if image.bytes.count != count || image.bytes.capacity < capacity {
                let bytes = [UInt8](unsafeUninitializedCapacity: capacity) { _, initialized in initialized = count }
                image.bytes = bytes
            }
            try image.bytes.withUnsafeMutableBytes { dst in
                try scaler.convert(source, to: layout.pixelFormat, packedInto: dst, rowBytes: rowBytes)
            }
        } else {
            try scaler.convert(source, to: layout.pixelFormat, into: converted)
            if image.bytes.count != count { image.bytes = [UInt8](repeating: 0, count: count) }
            let stride = converted.lineSize(0)
            guard let base = converted.planeData(0) else { throw MediaError.ffmpeg(call: "sws_scale", code: -1, message: "no output plane") }
            image.bytes.withUnsafeMutableBytes { dst in
                for y in 0..<source.height {
                    (dst.baseAddress! + y * rowBytes).copyMemory(from: base + y * stride, byteCount: rowBytes)
                }
            }
        }
        image.width = source.width
        image.height = source.height
        image.sampleAspectRatio = frame.sampleAspectRatio.isValid ? frame.sampleAspectRatio : Rational(1, 1)
        if !turnAfter.isIdentity { image = image.oriented(turnAfter) }
        if orientation.swapsDimensions, image.sampleAspectRatio != Rational(1, 1) {
            image.sampleAspectRatio = image.sampleAspectRatio.inverted
        }
    }
}

extension RGBImage {
    /// This image turned by `o` (lossless).
    public func oriented(_ o: Orientation) -> RGBImage {
        if o.isIdentity { return self }
        let (w, h) = PlaneTransform.outputSize(width: width, height: height, o)
        var out = [UInt8](repeating: 0, count: bytes.count)
        bytes.withUnsafeBytes { src in
            out.withUnsafeMutableBytes { dst in
                PlaneTransform.apply(o, src: src.baseAddress!, srcStride: rowBytes, width: width, height: height,
                                     elementSize: layout.bytesPerPixel, dst: dst.baseAddress!, dstStride: w * layout.bytesPerPixel)
            }
        }
        return RGBImage(width: w, height: h, layout: layout, bytes: out, sampleAspectRatio: sampleAspectRatio)
    }
}
