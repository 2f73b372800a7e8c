import ScanoutCore
import ScanoutDemux
import ScanoutDecode

/// Reads a still image (PNG, or anything else libavformat's image demuxers and libavcodec
/// decode) into straight-alpha RGBA: the file is opened as a one-frame input, decoded by
/// libavcodec (its PNG decoder for PNG) and converted with swscale.
public enum ImageReader {
    public static func readRGBA(path: String) throws -> RGBAImage {
        let reader = try FrameReader(input: path)
        let frame = VideoFrame()
        guard try reader.next(into: frame) else {
            throw MediaError.ffmpeg(call: "decode \(path)", code: -1, message: "no picture in the file")
        }
        let rgba = VideoFrame()
        try Scaler().convert(frame, to: .rgba, into: rgba)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(rgba.width * rgba.height * 4)
        rgba.withPlaneRows(0) { bytes.append(contentsOf: $0) }
        return RGBAImage(width: rgba.width, height: rgba.height, bytes: bytes)
    }
}
