import CFFmpeg

/// Reads the decoded frames of an input in presentation order: the demux → decode loop that
/// every command builds on. Owns its demuxer and decoder. Not thread-safe; one owner at a time.
///
/// Frame numbering is the ffmpeg tool's: frame n is the n-th frame the decoder outputs, counting
/// from 0, which is the frame `select=eq(n\,N)` picks.
public final class FrameReader {
    public let demuxer: Demuxer
    public let decoder: any Decoder
    public var input: String { demuxer.input }
    public var video: VideoStreamInfo { demuxer.video }

    private let packet = Packet()
    private var draining = false
    private var finished = false
    /// Compressed bytes read so far.
    public private(set) var bytesRead = 0

    public init(input: String, demuxerOptions: DemuxerOptions = DemuxerOptions(), decoderOptions: DecoderOptions = DecoderOptions()) throws {
        demuxer = try Demuxer(input: input, options: demuxerOptions)
        decoder = try SoftwareDecoder(for: demuxer, options: decoderOptions)
    }

    public init(demuxer: Demuxer, decoder: any Decoder) {
        self.demuxer = demuxer
        self.decoder = decoder
    }

    /// Decodes until the next frame is ready and stores it in `frame`. Returns false when the
    /// input is exhausted and the decoder drained.
    public func next(into frame: VideoFrame) throws -> Bool {
        while true {
            if try decoder.receive(into: frame) { return true }
            if finished { return false }
            if draining {
                finished = true
                continue
            }
            if try demuxer.read(into: packet) {
                bytesRead += packet.size
                try decoder.send(packet)
            } else {
                draining = true
                try decoder.send(nil)
            }
        }
    }

    /// Forgets the decoding state after the demuxer was repositioned.
    func restart() {
        decoder.flush()
        draining = false
        finished = false
    }

    /// Seeks the demuxer (see `Demuxer.seek`) and flushes the decoder.
    public func seek(toTimestamp ts: Int64, position: Int64?) throws {
        try demuxer.seek(toTimestamp: ts, position: position)
        restart()
    }

    /// The error a finished read should end with, if the stream was damaged: a truncated file
    /// (short reads) or concealed decode errors. Nil when the input was clean.
    public func damage() -> MediaError? {
        if let damage = demuxer.containerDamage() { return damage }
        let s = decoder.stats
        if s.hasErrors {
            return .corruptBitstream(input: input, errors: max(s.errorCount, s.concealedFrames), affectedFrames: s.concealedFrames)
        }
        return nil
    }
}
