import CFFmpeg
#if canImport(Glibc)
import Glibc
#endif
import ScanoutCore
import ScanoutDemux
import ScanoutDecode

/// Creates `path` and its parents (`mkdir -p`).
public func makeDirectory(_ path: String) throws {
    var current = path.hasPrefix("/") ? "" : "."
    for part in path.split(separator: "/") {
        current += "/" + part
        if mkdir(current, 0o755) != 0 && errno != EEXIST {
            throw MediaError.outputFailed(path: path, reason: String(cString: strerror(errno)))
        }
    }
}

/// `n` with leading zeros to six digits, as frame files are numbered (frame-000042.png).
public func pad6(_ n: Int) -> String {
    let s = String(n)
    return s.count >= 6 ? s : String(repeating: "0", count: 6 - s.count) + s
}

/// Writes decoded frames to a file or stdout (`-`).
public protocol FrameWriter: AnyObject {
    func write(_ frame: VideoFrame) throws
    /// Flushes and closes the output; further writes are errors.
    func finish() throws
}

/// Makes the writer that the output's extension asks for: `.y4m` → YUV4MPEG2, anything else
/// (`.yuv`, `-`) → raw planar frames with no padding, as `ffmpeg -f rawvideo` writes them.
/// `firstFrame` gives the format, size, aspect ratio and chroma siting of every frame to come.
public func makeFrameWriter(path: String, video: VideoStreamInfo, firstFrame: VideoFrame) throws -> any FrameWriter {
    if path.lowercased().hasSuffix(".y4m") {
        // "-.y4m" is stdout in Y4M.
        return try Y4MWriter(path: path == "-.y4m" ? "-" : path, like: firstFrame,
                             frameRate: video.frameRate.isValid ? video.frameRate : Rational(25, 1))
    }
    return try RawVideoWriter(path: path)
}

/// Raw planar frames back to back, packed with no padding.
public final class RawVideoWriter: FrameWriter {
    private let output: RawBytesWriter
    private var buffer: [UInt8] = []

    public init(path: String) throws {
        output = try RawBytesWriter(path: path)
    }

    public func write(_ frame: VideoFrame) throws {
        let n = try frame.copyPacked(into: &buffer)
        try output.write(buffer[0..<n])
    }

    public func finish() throws { try output.close() }
}

/// YUV4MPEG2 through libavformat's `yuv4mpegpipe` muxer (which writes the header, the
/// colour-space tag and the FRAME markers) fed by the `wrapped_avframe` encoder. Owns the muxer
/// and encoder contexts (freed once).
public final class Y4MWriter: FrameWriter {
    private var output: UnsafeMutablePointer<AVFormatContext>?
    private var encoder: UnsafeMutablePointer<AVCodecContext>?
    private let stream: UnsafeMutablePointer<AVStream>
    private let packet = Packet()
    private let path: String
    private var nextPts: Int64 = 0
    private var finished = false

    /// Opens `path` for frames shaped like `frame` (format, size, sample aspect ratio, colour
    /// range and chroma siting, which the header's `C` tag states) at `frameRate`.
    public init(path: String, like frame: VideoFrame, frameRate: Rational) throws {
        self.path = path
        let pixelFormat = frame.pixelFormat
        let sampleAspectRatio = frame.sampleAspectRatio
        var oc: UnsafeMutablePointer<AVFormatContext>? = nil
        try check(avformat_alloc_output_context2(&oc, nil, "yuv4mpegpipe", nil), "avformat_alloc_output_context2(yuv4mpegpipe)")
        guard let oc, let st = avformat_new_stream(oc, nil),
              let codec = avcodec_find_encoder(AV_CODEC_ID_WRAPPED_AVFRAME),
              let enc = avcodec_alloc_context3(codec) else { fatalError("Y4MWriter: out of memory") }
        output = oc
        stream = st
        encoder = enc
        let tb = frameRate.inverted
        enc.pointee.width = Int32(frame.width)
        enc.pointee.height = Int32(frame.height)
        enc.pointee.chroma_sample_location = frame.pointer.pointee.chroma_location
        enc.pointee.color_range = frame.pointer.pointee.color_range
        enc.pointee.pix_fmt = pixelFormat.av
        enc.pointee.time_base = tb.av
        enc.pointee.sample_aspect_ratio = sampleAspectRatio.av
        try check(avcodec_open2(enc, codec, nil), "avcodec_open2(wrapped_avframe)")
        try check(avcodec_parameters_from_context(st.pointee.codecpar, enc), "avcodec_parameters_from_context")
        st.pointee.time_base = tb.av
        st.pointee.sample_aspect_ratio = sampleAspectRatio.av
        let r = avio_open(&oc.pointee.pb, path == "-" ? "pipe:1" : path, AVIO_FLAG_WRITE)
        if r < 0 { throw MediaError.outputFailed(path: path, reason: ffmpegErrorString(r)) }
        let h = avformat_write_header(oc, nil)
        if h < 0 {
            throw MediaError.outputFailed(path: path, reason: "Y4M cannot store \(pixelFormat.name) (\(ffmpegErrorString(h))); choose one with --pixel-format, e.g. yuv420p")
        }
    }

    deinit {
        if let oc = output {
            if oc.pointee.pb != nil { avio_closep(&oc.pointee.pb) }
            avformat_free_context(oc)
        }
        avcodec_free_context(&encoder)
    }

    public func write(_ frame: VideoFrame) throws {
        guard let enc = encoder, let oc = output, !finished else { throw MediaError.outputFailed(path: path, reason: "already closed") }
        let ref = frame.clone()
        ref.pointer.pointee.pts = nextPts
        nextPts += 1
        try check(avcodec_send_frame(enc, ref.pointer), "avcodec_send_frame(wrapped_avframe)")
        while true {
            packet.unref()
            let r = avcodec_receive_packet(enc, packet.pointer)
            if r == SCANOUT_AVERROR_EAGAIN || r == SCANOUT_AVERROR_EOF { break }
            try check(r, "avcodec_receive_packet(wrapped_avframe)")
            packet.pointer.pointee.stream_index = stream.pointee.index
            av_packet_rescale_ts(packet.pointer, enc.pointee.time_base, stream.pointee.time_base)
            let w = av_write_frame(oc, packet.pointer)
            if w < 0 { throw MediaError.outputFailed(path: path, reason: ffmpegErrorString(w)) }
        }
    }

    public func finish() throws {
        guard let oc = output, !finished else { return }
        finished = true
        let t = av_write_trailer(oc)
        let err = oc.pointee.pb?.pointee.error ?? 0
        avio_closep(&oc.pointee.pb)
        if t < 0 || err < 0 { throw MediaError.outputFailed(path: path, reason: ffmpegErrorString(t < 0 ? t : err)) }
    }
}

/// Bytes to a file or stdout (`-`) through one `AVIOContext` (closed once).
public final class RawBytesWriter {
    private var pb: UnsafeMutablePointer<AVIOContext>?
    private let path: String

    public init(path: String) throws {
        self.path = path
        let r = avio_open(&pb, path == "-" ? "pipe:1" : path, AVIO_FLAG_WRITE)
        if r < 0 { throw MediaError.outputFailed(path: path, reason: ffmpegErrorString(r)) }
    }

    deinit { avio_closep(&pb) }

    /// Appends `bytes`; throws once the output has failed (a full disk, a closed pipe) or closed.
    public func write(_ bytes: some Collection<UInt8>) throws {
        guard let pb else { throw MediaError.outputFailed(path: path, reason: "already closed") }
        let written: Void? = bytes.withContiguousStorageIfAvailable { avio_write(pb, $0.baseAddress, Int32($0.count)) }
        if written == nil { Array(bytes).withUnsafeBufferPointer { avio_write(pb, $0.baseAddress, Int32($0.count)) } }
        if pb.pointee.error < 0 { throw MediaError.outputFailed(path: path, reason: ffmpegErrorString(pb.pointee.error)) }
    }

    public func close() throws {
        guard let p = pb else { return }
        avio_flush(p)
        let err = p.pointee.error
        avio_closep(&pb)
        if err < 0 { throw MediaError.outputFailed(path: path, reason: ffmpegErrorString(err)) }
    }
}
