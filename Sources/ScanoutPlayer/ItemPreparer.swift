import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio

/// An item opened and its first frame decoded: ready to be shown without a wait.
///
/// Owns its reader (and, after an exact seek, the seeker whose reader playback continues on).
/// Not thread-safe: built by the preparing thread, then handed whole to the player's loop.
public final class PreparedItem {
    public let index: Int
    public let item: PlaylistItem
    public private(set) var reader: FrameReader
    public let firstFrame: VideoFrame
    /// Timestamp of the item's first frame (its media time 0).
    public let originPts: Int64?
    /// The video stream as opened, with HDR10's static metadata from the first frame (its SEI)
    /// where the container states none.
    public var video: VideoStreamInfo {
        var v = reader.video
        v.masteringDisplay = v.masteringDisplay ?? firstMastering
        v.contentLightLevel = v.contentLightLevel ?? firstLightLevel
        return v
    }
    /// The first frame's static metadata, read once (the frame's buffers are reused later).
    private let firstMastering: MasteringDisplay?
    private let firstLightLevel: ContentLightLevel?
    /// How long each step of preparing it took.
    public let stages: PreparationStages
    /// Built on the first exact seek (it indexes the whole input).
    private(set) var seeker: FrameSeeker?
    /// The options it was opened with (its content key among them), for the seeker.
    let demuxerOptions: DemuxerOptions
    /// Whether it was seeked in (its reader skipped packets): the packet count at its end then
    /// cannot tell a short file from the packets skipped.
    var seeked = false

    init(index: Int, item: PlaylistItem, reader: FrameReader, firstFrame: VideoFrame, decodeSeconds: Double = 0,
         demuxerOptions: DemuxerOptions = DemuxerOptions()) {
        self.index = index
        self.item = item
        self.demuxerOptions = demuxerOptions
        self.reader = reader
        self.firstFrame = firstFrame
        originPts = firstFrame.pts
        firstMastering = firstFrame.masteringDisplay
        firstLightLevel = firstFrame.contentLightLevel
        stages = PreparationStages(open: reader.demuxer.openSeconds, probe: reader.demuxer.probeSeconds,
                                   decoder: reader.decoderOpenSeconds, firstDecode: decodeSeconds)
    }

    /// Opens `item` and decodes its first frame. Typed failure: the item's `MediaError`.
    static func open(_ item: PlaylistItem, index: Int, demuxer: DemuxerOptions, decoder: DecoderOptions) -> Result<PreparedItem, MediaError> {
        do {
            var decoder = decoder
            if let type = item.playerType { decoder.playerType = type }
            if let seconds = item.duration { decoder.stillDuration = seconds }
            let reader = try FrameReader(input: item.source, demuxerOptions: demuxer, decoderOptions: decoder, contentHint: item.contentHint)
            let first = VideoFrame()
            let start = ClockTime.now()
            // The audio read with the first frame is kept for the item's start (`takeEarlyAudio`).
            let early = EarlyAudio()
            let audioTracks = reader.demuxer.tracks.filter { $0.kind == .audio }.map(\.index)
            for t in audioTracks { try? reader.demuxer.route(track: t) { early.packets[t, default: []].append($0.clone()) } }
            defer { for t in audioTracks { try? reader.demuxer.route(track: t, to: nil) } }
            guard try reader.next(into: first) else { return .failure(.noFrames(input: item.source)) }
            let decode = (ClockTime.now() - start).secondsValue
            let prepared = PreparedItem(index: index, item: item, reader: reader, firstFrame: first, decodeSeconds: decode, demuxerOptions: demuxer)
            prepared.earlyAudio = early.packets
            return .success(prepared)
        } catch let e as MediaError {
            return .failure(e)
        } catch {
            return .failure(.openFailed(input: item.source, reason: "\(error)"))
        }
    }

    /// The audio packets read with the first frame, by track, until the item's audio starts.
    private var earlyAudio: [Int: [Packet]] = [:]

    /// The early audio, once (the item's first start plays it; a later one does not).
    func takeEarlyAudio() -> [Int: [Packet]] {
        defer { earlyAudio = [:] }
        return earlyAudio
    }

    /// The seeker for exact seeks, built once; playback continues on its reader afterwards.
    func exactSeeker(decoder: DecoderOptions) throws -> FrameSeeker {
        if let s = seeker, s.index.isSeekable { return s }
        // Streams without timestamps count frames from the start: a fresh seeker each time, since
        // playback moved its reader on.
        let s = try FrameSeeker(input: item.source, demuxerOptions: demuxerOptions, decoderOptions: decoder)
        seeker = s
        return s
    }

    /// From now on a network input with an end is read ahead (`PacketReadAhead`), from the
    /// packet after the first frame on: when the item becomes current, not while it waits as
    /// the next one, so that it takes no bandwidth from the item playing.
    func startReadAhead() {
        reader.readAhead(demuxerOptions.readAhead)
    }

    func useSeekerReader() {
        if let s = seeker {
            reader = s.reader
            reader.readAhead(demuxerOptions.readAhead)
        }
    }

    /// The timeshift buffer of a live item, once playing (`startTimeshift`).
    private(set) var timeshift: LiveTimeshift?

    /// From now on the reader takes its packets from a timeshift buffer that a thread of its
    /// own fills from the demuxer (once; the buffer closes when the item goes), with the
    /// packets of `audioTrack` beside the video's.
    func startTimeshift(_ options: TimeshiftOptions, audioTrack: Int?) {
        guard timeshift == nil else { return }
        timeshift = LiveTimeshift(reader: reader, options: options, audioTrack: audioTrack)
    }
}

/// Packets a route hands over while an item is prepared.
private final class EarlyAudio {
    var packets: [Int: [Packet]] = [:]
}

/// Prepares the next item ahead of time: on a thread of its own (`background`, so that opening and
/// the first decode never hold up the frame being shown), or at once on the caller's thread
/// (`inline`, for deterministic tests).
final class ItemPreparer {
    enum Mode { case inline, background }

    /// Hand-over slot between the preparing thread and the loop.
    /// `@unchecked Sendable`: every field is read and written under `condition`; the PreparedItem
    /// stored in it is never touched by the preparing thread after it is stored, so ownership
    /// passes whole to the thread that takes it out.
    private final class Slot: @unchecked Sendable {
        let condition = NSCondition()
        var result: Result<PreparedItem, MediaError>?
    }

    let mode: Mode
    private var slot: Slot?
    private(set) var index: Int?
    private(set) var item: PlaylistItem?

    init(mode: Mode) { self.mode = mode }

    var isPreparing: Bool { slot != nil }

    /// Starts preparing `item` (forgetting any earlier preparation).
    func start(_ item: PlaylistItem, index: Int, demuxer: DemuxerOptions, decoder: DecoderOptions) {
        let s = Slot()
        slot = s
        self.index = index
        self.item = item
        switch mode {
        case .inline:
            s.result = PreparedItem.open(item, index: index, demuxer: demuxer, decoder: decoder)
        case .background:
            let t = Thread(named: "scanout-prepare") {
                let r = PreparedItem.open(item, index: index, demuxer: demuxer, decoder: decoder)
                s.condition.lock()
                s.result = r
                s.condition.broadcast()
                s.condition.unlock()
            }
            t.start()
        }
    }

    /// The prepared item, waiting for the preparation to finish if it has not yet.
    func take() -> Result<PreparedItem, MediaError>? {
        guard let s = slot else { return nil }
        s.condition.lock()
        while s.result == nil { s.condition.wait() }
        let r = s.result!
        s.result = nil
        s.condition.unlock()
        cancel()
        return r
    }

    func cancel() {
        slot = nil
        index = nil
        item = nil
    }
}
