import CFFmpeg
import ScanoutCore
import ScanoutDemux

/// Reads the decoded frames of an input in presentation order: the demux → decode loop that
/// every command builds on. Owns its demuxer and decoder. Not thread-safe; one owner at a time.
///
/// Frame numbering is the ffmpeg tool's: frame n is the n-th frame the decoder outputs, counting
/// from 0, which is the frame `select=eq(n\,N)` picks.
public final class FrameReader {
    public let demuxer: Demuxer
    public let decoder: any Decoder
    public var input: String { demuxer.input }
    /// The video stream; for an audio-only input, its audio track with the still's size.
    /// For a still image shown for a time, its picture's facts and the showing's length.
    public var video: VideoStreamInfo {
        guard let still = decoder as? StillDecoder else { return demuxer.video }
        var v = demuxer.video
        v.width = still.picture.width
        v.height = still.picture.height
        v.pixelFormat = still.picture.pixelFormat
        if let timeline = still.timeline {
            v.startTime = 0
            v.duration = timeline.end
            v.frameRate = StillDecoder.frameRate
            v.declaredFrameCount = Int((timeline.end + timeline.interval - 1) / timeline.interval)
        }
        return v
    }

    /// Whether the input is a still image shown for a time (`DecoderOptions.stillDuration`).
    public var isTimedStill: Bool { (decoder as? StillDecoder)?.timeline != nil }
    /// Where packets come from: the demuxer, or a cursor over a timeshift buffer that a thread
    /// of its own fills from the demuxer (`TimeshiftBuffer`).
    public var source: any PacketSource

    /// Called (on the reading thread) when the source has no packet left: the input is read to
    /// its end, every packet of every routed track included. Again after a seek, at the end.
    public var onInputEnd: (() -> Void)?

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
        source = demuxer
        let start = ClockTime.now()
        let (decoder, decision): (any Decoder, DecoderDecision?)
        if demuxer.audioOnly {
            (decoder, decision) = (try StillDecoder(for: demuxer, options: decoderOptions), nil)
        } else if let seconds = decoderOptions.stillDuration, demuxer.isStillImage {
            guard seconds > 0, seconds.isFinite else {
                throw MediaError.openFailed(input: name, reason: "a still image is shown for more than 0 s, not \(seconds)")
            }
            let tb = demuxer.video.timeBase
            let timeline = StillTimeline(interval: StillDecoder.interval(timeBase: tb),
                                         end: Int64((seconds / max(tb.doubleValue, 1e-12)).rounded()))
            (decoder, decision) = (StillDecoder(picture: try StillDecoder.decodeImage(demuxer), timeline: timeline), nil)
            source = timeline
        } else {
            (decoder, decision) = try DecoderSelector.makeDecoder(for: demuxer, options: decoderOptions, hint: hint)
        }
        decoderOpenSeconds = (ClockTime.now() - start).secondsValue
        self.decoder = decoder
        self.decision = decision
    }

    public init(demuxer: Demuxer, decoder: any Decoder) {
        self.demuxer = demuxer
        source = demuxer
        self.decoder = decoder
        decision = nil
        decoderOpenSeconds = 0
    }

    /// Seconds choosing and opening the decoder took (0 when the caller gave it).
    public let decoderOpenSeconds: Double

    /// The mid-stream switch to software, if one happened.
    public var fallback: DecoderFallback? { (decoder as? FallbackDecoder)?.fallback }

    /// The player type decoding now (after any fallback).
    public var activeType: PlayerType {
        if let f = decoder as? FallbackDecoder { return f.activeType }
        return decision?.chosen ?? (decoder.kind == "hw" ? .hw : .sw)
    }

    /// Pictures shown before this presentation timestamp that no other picture refers to are
    /// skipped instead of decoded, where the decoder can do so exactly
    /// (`Decoder.skipUnreferencedPictures`): a seek to frame N needs the references before N,
    /// not the rest. Nil (the default) decodes every picture; set it only while heading for a
    /// frame, since the skipped frames are never handed out.
    public var skipUnreferencedBefore: Int64?
    /// Whether the decoder is skipping unreferenced pictures now.
    private var skipping = false
    /// After a seek to a keyframe: frames shown before it (the leading pictures of an open GOP,
    /// whose references precede the keyframe) are dropped, as `ffmpeg -ss` drops them.
    private var dropShownBefore: Int64?

    /// Whether nothing was read yet: the first picture may then be decoded at once
    /// (`Decoder.decodeAtOnce`).
    private var atStart = true

    /// Decodes until the next frame is ready and stores it in `frame`. Returns false when the
    /// input is exhausted and the decoder drained.
    public func next(into frame: VideoFrame) throws -> Bool {
        if atStart {
            atStart = false
            if try readFirstPacket() {
                bytesRead += packet.size
                let first: FirstPicture = !packet.isDiscarded && packet.pts != nil ? try decoder.decodeAtOnce(packet, into: frame) : .notSent
                switch first {
                case .decoded where frame.pts == packet.pts:
                    // The decoder has the packet too: its picture comes out a second time, dropped.
                    dropShownBefore = packet.pts! + 1
                    return true
                case .decoded, .sent:
                    break
                case .notSent:
                    try send(packet)
                }
            }
        }
        while true {
            if try decoder.receive(into: frame) {
                if let limit = dropShownBefore, let pts = frame.pts {
                    if pts < limit { continue }
                    dropShownBefore = nil
                }
                return true
            }
            if finished { return false }
            if draining {
                finished = true
                continue
            }
            if try source.read(into: packet) {
                bytesRead += packet.size
                try send(packet)
            } else {
                draining = true
                onInputEnd?()
                try decoder.send(nil)
            }
        }
    }

    /// Reads the first packet to decode. A live input is joined mid-stream: the pictures before
    /// its first keyframe refer to pictures never received, so they are passed over, and the
    /// keyframe can be decoded at once instead of after them.
    private func readFirstPacket() throws -> Bool {
        guard demuxer.isLive else { return try source.read(into: packet) }
        while try source.read(into: packet) {
            guard packet.isKeyframe else { continue }
            startedAtKeyframe = true
            return true
        }
        return false
    }

    /// Sends `packet` to the decoder, its picture skipped when `skipUnreferencedBefore` says so
    /// and nothing refers to it.
    private func send(_ packet: Packet) throws {
        var skip = false
        if let limit = skipUnreferencedBefore, let pts = packet.pts { skip = pts < limit }
        if skip != skipping { skipping = decoder.skipUnreferencedPictures(skip) }
        try decoder.send(packet)
    }

    /// Forgets the decoding state after the demuxer was repositioned.
    func restart() {
        decoder.flush()
        draining = false
        finished = false
        dropShownBefore = nil
        atStart = false
    }

    /// Seeks to the keyframe at or before presentation timestamp `ts` and flushes the decoder:
    /// the next frame is that keyframe's. With `position`, the keyframe at that byte offset
    /// (see `seek(toKeyframe:)`) when the container can seek by bytes.
    ///
    /// The container's own search is only a start: MPEG-TS bisects on timestamps and stops on
    /// whatever packet is nearest, often not a keyframe, and decoding from there would show the
    /// next keyframe, after `ts`. So the packets after the landing point are read (not decoded)
    /// to find the last keyframe at or before `ts`, stepping back further when there is none,
    /// and the reader is then put on that keyframe exactly.
    public func seek(toTimestamp ts: Int64, position: Int64?) throws {
        if let position, try seek(toKeyframe: FrameIndex.Keyframe(pts: ts, dts: nil, position: position)) { return }
        let second = max(Int64(1 / max(video.timeBase.doubleValue, 1e-9)), 1)
        var back: Int64 = 0
        for _ in 0..<6 {
            try source.seek(toTimestamp: ts - back, position: nil)
            if let key = try lastKeyframe(notAfter: ts), try seek(toKeyframe: key) { return }
            back = back == 0 ? second : back * 4
        }
        // No keyframe with a timestamp at or before `ts` (a stream without timestamps, or `ts`
        // before the first keyframe): the container's own landing, as it is.
        try source.seek(toTimestamp: ts, position: nil)
        restart()
        startedAtKeyframe = true
    }

    /// Reads packets from the demuxer's position on (without decoding them) and returns the
    /// last keyframe whose presentation timestamp is not after `ts`, stopping at the first
    /// packet decoded after `ts` or keyframe shown after it.
    private func lastKeyframe(notAfter ts: Int64) throws -> FrameIndex.Keyframe? {
        var found: FrameIndex.Keyframe?
        source.sinksPaused = true
        defer { source.sinksPaused = false }
        while try source.read(into: packet) {
            bytesRead += packet.size
            if packet.isKeyframe, let pts = packet.pts ?? packet.dts {
                if pts > ts { break }
                found = FrameIndex.Keyframe(pts: pts, dts: packet.dts, position: packet.position)
            }
            if let dts = packet.dts, dts > ts { break }
        }
        return found
    }

    /// Puts the reader on `key` exactly (from the frame index, or found by reading) and flushes
    /// the decoder. Packets read before the keyframe (a container search that landed early:
    /// MP4's can land a GOP before) are dropped undecoded, and frames shown before the keyframe
    /// are dropped after decoding. Returns false when the search landed after the keyframe (the
    /// reader is then somewhere after it: seek again).
    ///
    /// Byte seeks where the container allows them (MPEG-TS, where the index's position is
    /// exact); timestamp seeks otherwise, on the timeline the container searches
    /// (`Demuxer.seeksByPresentationTime`).
    public func seek(toKeyframe key: FrameIndex.Keyframe) throws -> Bool {
        let ts = source.seeksByPresentationTime ? key.pts : (key.dts ?? key.pts)
        try source.seek(toTimestamp: ts, position: key.position)
        restart()
        startedAtKeyframe = true
        while try source.read(into: packet) {
            bytesRead += packet.size
            if packet.isKeyframe, (packet.pts ?? packet.dts) == key.pts {
                dropShownBefore = key.pts
                try send(packet)
                return true
            }
            // Decoding order passed the keyframe: the search landed after it.
            if let dts = packet.dts, dts > (key.dts ?? key.pts) { return false }
        }
        return false
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
