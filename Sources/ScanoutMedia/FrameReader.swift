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
    /// Set once the reader has sought (to a keyframe, as every seek lands): from then on the
    /// decoder may meet pictures that name references from before that keyframe (the leading
    /// pictures of an open GOP, memory-management commands of the pictures after it). The ffmpeg
    /// tool meets the same after `-ss`; they are not damage, and `decodeStats` leaves them out.
    public private(set) var startedAtKeyframe = false

    /// The decoder's counts, less its missing-reference lines after `startedAtKeyframe`.
    public var decodeStats: DecodeStats {
        var s = decoder.stats
        if startedAtKeyframe {
            s.loggedErrors = max(0, s.loggedErrors - s.missingReferenceErrors)
            s.missingReferenceErrors = 0
        }
        return s
    }

    /// Compressed bytes read so far.
    public private(set) var bytesRead = 0

    /// How the decoder was chosen; nil when the caller gave the decoder.
    public let decision: DecoderDecision?

    /// Opens `input` (a `?playerType=` hint on it is taken off and given to the selector) and
    /// the decoder `DecoderSelector` chooses for it. `contentHint` is the hint from elsewhere (a
    /// content token's `playerType` claim); the one on the URL wins over it.
    public init(input: String, demuxerOptions: DemuxerOptions = DemuxerOptions(), decoderOptions: DecoderOptions = DecoderOptions(),
                contentHint: PlayerType? = nil) throws {
        let (name, urlHint) = try ContentHint.split(input)
        let hint = urlHint ?? contentHint
        demuxer = try Demuxer(input: name, options: demuxerOptions)
        let (decoder, decision) = try DecoderSelector.makeDecoder(for: demuxer, options: decoderOptions, hint: hint)
        self.decoder = decoder
        self.decision = decision
    }

    public init(demuxer: Demuxer, decoder: any Decoder) {
        self.demuxer = demuxer
        self.decoder = decoder
        decision = nil
    }

    /// The mid-stream switch to software, if one happened.
    public var fallback: DecoderFallback? { (decoder as? FallbackDecoder)?.fallback }

    /// The player type decoding now (after any fallback).
    public var activeType: PlayerType {
        if let f = decoder as? FallbackDecoder { return f.activeType }
        return decision?.chosen ?? (decoder.kind == "hw" ? .hw : .sw)
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
        startedAtKeyframe = true
    }

    /// The error a finished read should end with, if the stream was damaged: a truncated file
    /// (short reads) or concealed decode errors. Nil when the input was clean.
    public func damage() -> MediaError? {
        if let damage = demuxer.containerDamage() { return damage }
        let s = decodeStats
        if s.hasErrors {
            return .corruptBitstream(input: input, errors: max(s.errorCount, s.concealedFrames), affectedFrames: s.concealedFrames)
        }
        return nil
    }
}
