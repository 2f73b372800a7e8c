import CFFmpeg
import ScanoutCore
import ScanoutDemux

/// One picture handed out again and again: the "video" of an audio-only input (the input's
/// cover, else `DecoderOptions.stillImage`, else black) as the audio is read, or a still image
/// shown for a time (`DecoderOptions.stillDuration`), at the times a `StillTimeline` gives.
/// The picture is decoded once.
///
/// The demuxer of an audio-only input reads its audio track (`Demuxer.audioOnly`), so the
/// reader's packets are audio packets: each one sent whose time reaches the next due still
/// gives the picture re-stamped with that time (`frameRate` a second), and the end of the
/// input gives it once more at the audio's end, so the item ends when its sound does. Positions,
/// seeks and the end then work as they do for video, on the audio track's timeline.
public final class StillDecoder: Decoder {
    public let kind = "still"
    /// How often the still is shown again: enough for positions and seeks, few renders.
    public static var frameRate: Rational { VideoStreamInfo.stillFrameRate }
    public private(set) var stats = DecodeStats()
    /// The picture, at its own size.
    public let picture: VideoFrame
    private let interval: Int64
    private var nextDue: Int64?
    private var end: Int64?
    /// Times due (and how long each is shown), oldest first.
    private var pending: [(pts: Int64, duration: Int64)] = []
    /// The times of a still image shown for a time; nil for an audio-only input's still.
    let timeline: StillTimeline?

    public init(for demuxer: Demuxer, options: DecoderOptions) throws {
        interval = Self.interval(timeBase: demuxer.video.timeBase)
        picture = try Self.picture(demuxer: demuxer, options: options)
        timeline = nil
    }

    /// For a still image shown for a time: `picture` at each time `timeline` gives, each for the
    /// time until the next.
    init(picture: VideoFrame, timeline: StillTimeline) {
        self.picture = picture
        interval = timeline.interval
        self.timeline = timeline
    }

    /// How often the still is shown, in units of `timeBase` (at least 1).
    static func interval(timeBase tb: Rational) -> Int64 {
        max(1, Int64((Double(tb.den) / Double(max(tb.num, 1)) / frameRate.doubleValue).rounded()))
    }

    /// Decodes the picture of a still-image input (its one packet) with libavcodec, once.
    static func decodeImage(_ demuxer: Demuxer) throws -> VideoFrame {
        let packet = Packet()
        guard try demuxer.read(into: packet) else { throw MediaError.noFrames(input: demuxer.input) }
        let d = try SoftwareDecoder(for: demuxer, options: DecoderOptions(threads: 1, playerType: .sw))
        try d.send(packet)
        try d.send(nil)
        let frame = VideoFrame()
        guard try d.receive(into: frame) else { throw MediaError.noFrames(input: demuxer.input) }
        return frame
    }

    private static func picture(demuxer: Demuxer, options: DecoderOptions) throws -> VideoFrame {
        let frame = VideoFrame()
        if let cover = demuxer.coverPacket(), let track = demuxer.coverTrack, let par = demuxer.codecParameters(ofTrack: track),
           let st = demuxer.context.pointee.streams[track] {
            let name = String(cString: avcodec_get_name(par.pointee.codec_id))
            let d = try SoftwareDecoder(parameters: par, timeBase: st.pointee.time_base, codecName: name, input: demuxer.input,
                                        options: DecoderOptions(threads: 1))
            try d.send(cover)
            try d.send(nil)
            if try d.receive(into: frame) { return frame }
        }
        if let path = options.stillImage {
            let reader = try FrameReader(input: path, decoderOptions: DecoderOptions(threads: 1, playerType: .sw))
            guard try reader.next(into: frame) else { throw MediaError.noFrames(input: path) }
            return frame
        }
        return VideoFrame.black()
    }

    public func send(_ packet: Packet?) throws {
        if timeline != nil {
            // Every packet of the timeline is a due time.
            if let packet, let pts = packet.pts { pending.append((pts, packet.duration)) }
            return
        }
        guard let packet else {
            if let end, end != pending.last?.pts { pending.append((end, interval)) }
            return
        }
        guard let pts = packet.pts else { return }
        end = max(end ?? pts, pts + max(packet.duration, 0))
        if nextDue == nil || pts >= nextDue! || pts < nextDue! - interval {
            // The first packet, the next due time, or a seek backwards.
            pending.append((pts, interval))
            nextDue = pts + interval
        }
    }

    public func receive(into frame: VideoFrame) throws -> Bool {
        guard !pending.isEmpty else { return false }
        let (pts, duration) = pending.removeFirst()
        frame.unref()
        av_frame_ref(frame.pointer, picture.pointer)
        frame.stamp(pts: pts, duration: duration)
        stats.framesDecoded += 1
        return true
    }

    public func flush() {
        pending.removeAll()
        nextDue = nil
        end = nil
    }
}
