import ScanoutDisplay
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ScanoutRender

/// Where the current item's subtitles stand, as `/state` and `POST /subtitles` say it.
public struct SubtitleStatus: Sendable, Equatable {
    /// Shown (true), or hidden with their events kept.
    public var enabled = true
    /// Seconds added to every event's times (positive: later).
    public var delay = 0.0
    /// The embedded track shown (stream index); nil for a sideband file or none.
    public var track: Int?
    /// The sideband file or URL shown; nil for none.
    public var file: String?
    /// Why the item's subtitles are not shown (a file that does not open, a bitmap track); nil otherwise.
    public var error: String?
    public init() {}
}

/// The subtitles of the item playing: a libass renderer fed with the selected track's packets as
/// the item's reader reads them (`Demuxer.route`), or with a sideband file read whole when the
/// item starts. The engine owns one; it runs on the engine's thread only.
///
/// An embedded track shows its events from the packets read after it was chosen; for a local
/// file or a VOD HLS playlist, the lines that started before the position (a track chosen mid-item, a seek) are read
/// by a second reader of the same input (`catchUp`, as mpv does). After a seek the packets come
/// again, and the renderer keeps each event once.
final class PlayerSubtitles {
    /// How far before the position a catch-up reads: a line longer than this that started
    /// before it is missed.
    static let catchUpSeconds = 30.0
    private(set) var status = SubtitleStatus()
    private(set) var renderer: SubtitleRenderer?
    /// What kept the last `start` from setting the subtitles up (`status.error` in words).
    private(set) var failure: (any Error)?
    /// The reader whose demuxer hands the track's packets over, and the track.
    private var routed: (reader: ObjectIdentifier, demuxer: Demuxer, source: any PacketSource, track: Int)?
    /// The API's choices, kept across items: nil where the item's own selection decides.
    var enabledOverride: Bool?
    var delayOverride: Double?
    var trackOverride: Int??

    /// Sets up the subtitles of `item` as `selection` (the item's, or the player's) and the API's
    /// overrides choose, and hands them to `display`.
    func start(_ item: PreparedItem, selection: SubtitleSelection, display: any Display, timeoutSeconds: Double) {
        stop(display: display)
        var s = selection
        if let t = trackOverride { s.track = t; s.file = nil; s.enabled = t != nil }
        status = SubtitleStatus()
        failure = nil
        status.enabled = enabledOverride ?? s.enabled
        status.delay = delayOverride ?? s.delay
        do {
            if let (r, track) = try SubtitleFeed.open(s, reader: item.reader, timeoutSeconds: timeoutSeconds) {
                if let track { routed = (ObjectIdentifier(item.reader), item.reader.demuxer, item.reader.source, track) }
                status.track = track
                status.file = track == nil ? s.file : nil
                install(r, display: display)
            } else if let t = s.track, s.enabled {
                status.error = "stream \(t) is not a subtitle track"
            }
        } catch {
            status.error = "\(error)"
            failure = error
            stop(display: display)
        }
    }

    private func install(_ r: SubtitleRenderer, display: any Display) {
        r.delay = status.delay
        r.enabled = status.enabled
        renderer = r
        display.subtitles = r
    }

    /// Adds the lines of the routed track that started before `time` (seconds, the video's
    /// clock) and still show then: the packets read from the position on miss them. A second
    /// reader (`SubtitleFile`) seeks in a local file or a VOD HLS playlist; other network and
    /// live inputs show the lines that start from the position on. A failure loses those lines,
    /// not the item.
    ///
    /// HLS: the demuxer starts a rendition chosen after its first read (and every rendition after
    /// a seek) at its current time on the video's clock and drops the cues before it; the cues'
    /// clock lags that one by the video's start (`SubtitleFeed.hlsOffset`), so the cues of that
    /// lag after the position are read here too.
    func catchUp(_ item: PreparedItem, at time: Double, timeoutSeconds: Double) {
        guard let (_, demuxer, _, track) = routed, let r = renderer, !demuxer.isLive,
              let info = demuxer.tracks.first(where: { $0.index == track }) else { return }
        let hls = demuxer.formatName == "hls"
        guard hls || !demuxer.input.contains("://"), hls || time > 0 else { return }
        let offset = SubtitleFeed.hlsOffset(info, reader: item.reader)
        let t = time - offset
        let window = max(0, t - Self.catchUpSeconds)..<(hls ? t + offset + 2 : t)
        let file = try? SubtitleFile(input: demuxer.input, timeoutSeconds: timeoutSeconds)
        for var e in (try? file?.read(track: track, window: window))?.events ?? [] where e.start + e.duration > t {
            e.start += offset
            r.add(e)
        }
    }

    /// Routes the track again when the item's reader changed (an exact seek reads on with the
    /// seeker's reader).
    func follow(_ item: PreparedItem) {
        guard let (id, _, old, track) = routed, id != ObjectIdentifier(item.reader), let r = renderer else { return }
        try? old.route(track: track, to: nil)
        let offset = item.reader.demuxer.tracks.first { $0.index == track }.map { SubtitleFeed.hlsOffset($0, reader: item.reader) } ?? 0
        try? SubtitleFeed.route(track: track, of: item.reader, to: r, offset: offset)
        routed = (ObjectIdentifier(item.reader), item.reader.demuxer, item.reader.source, track)
    }

    /// No subtitles on `display`; the route to the renderer is taken down.
    func stop(display: any Display) {
        if let (_, _, source, track) = routed { try? source.route(track: track, to: nil) }
        routed = nil
        renderer = nil
        display.subtitles = nil
        status.track = nil
        status.file = nil
    }

    /// Applies the API's `enabled` and `delay` now.
    func set(enabled: Bool?, delay: Double?) {
        if let enabled { enabledOverride = enabled; status.enabled = enabled; renderer?.enabled = enabled }
        if let delay { delayOverride = delay; status.delay = delay; renderer?.delay = delay }
    }
}

/// Subtitles for a reader's input, as `play` and the player set them up.
public enum SubtitleFeed {
    /// A renderer for what `selection` shows over `reader`'s input, and the embedded track whose
    /// packets `reader`'s demuxer now hands it (nil for a sideband file, read whole here); nil when
    /// the selection shows nothing.
    public static func open(_ selection: SubtitleSelection, reader: FrameReader,
                            timeoutSeconds: Double) throws -> (renderer: SubtitleRenderer, track: Int?)? {
        guard selection.enabled else { return nil }
        let video = reader.video
        let renderer: SubtitleRenderer
        var track: Int?
        if selection.file != nil {
            let start = Double(video.startTime ?? 0) * video.timeBase.doubleValue
            guard let script = try selection.script(input: reader.demuxer.input, tracks: [], videoStart: start,
                                                    timeoutSeconds: timeoutSeconds) else { return nil }
            renderer = try SubtitleRenderer(script: script)
        } else {
            guard let t = selection.embeddedTrack(in: reader.demuxer.tracks) else { return nil }
            renderer = try SubtitleRenderer(header: try SubtitleDecoder(demuxer: reader.demuxer, track: t.index).header)
            try route(track: t.index, of: reader, to: renderer, offset: hlsOffset(t, reader: reader))
            track = t.index
        }
        renderer.videoTimeBase = video.timeBase
        renderer.delay = selection.delay
        renderer.safeMargin = selection.margin
        return (renderer, track)
    }

    /// Hands the packets of `track` that `reader` reads from now on to `renderer`, decoded,
    /// their times moved by `offset` seconds. Through the reader's packet source: a read-ahead
    /// hands them out as the reader reaches them, on its thread.
    static func route(track: Int, of reader: FrameReader, to renderer: SubtitleRenderer, offset: Double = 0) throws {
        let decoder = try SubtitleDecoder(demuxer: reader.demuxer, track: track)
        try reader.source.route(track: track) { packet in
            // A packet that does not decode loses its line, not the item.
            for var e in (try? decoder.decode(packet)) ?? [] {
                e.start += offset
                renderer.add(e)
            }
        }
    }

    /// Where an HLS WebVTT rendition's cue times start on the video's clock. libavformat's hls
    /// demuxer hands the cues out with their own times (it does not apply the segments'
    /// `X-TIMESTAMP-MAP`), while the video keeps its MPEG-TS timestamps (which start at 1.4 s
    /// or more): the cues are taken to count from the first picture, as a sideband file's do
    /// (the map packagers write: `LOCAL:00:00:00.000` at the first picture's MPEGTS). 0 otherwise.
    static func hlsOffset(_ track: TrackInfo, reader: FrameReader) -> Double {
        guard reader.demuxer.formatName == "hls", track.codecName == "webvtt" else { return 0 }
        return Double(reader.video.startTime ?? 0) * reader.video.timeBase.doubleValue
    }
}

extension PlayerEngine {
    /// Sets up `p`'s subtitles: its own choice of text, else the player's, with the player's
    /// on/off, delay and margin and the API's choices.
    /// `pts`: the frame shown (video time base); nil: the item's first.
    func startSubtitles(_ p: PreparedItem, at pts: Int64? = nil) {
        subtitles.start(p, selection: configuration.subtitles.overridden(by: p.item.subtitles), display: display,
                        timeoutSeconds: configuration.demuxer.timeoutSeconds)
        catchUpSubtitles(p, pts: pts ?? p.originPts)
    }

    /// Adds the lines that show on `item`'s frame `pts` (video time base) but started before
    /// the read position (`PlayerSubtitles.catchUp`): after a seek, or a track chosen mid-item.
    func catchUpSubtitles(_ item: PreparedItem, pts: Int64?) {
        guard let pts else { return }
        let t = Double(pts) * item.video.timeBase.doubleValue - subtitles.status.delay
        subtitles.catchUp(item, at: t, timeoutSeconds: configuration.demuxer.timeoutSeconds)
    }

    /// `POST /subtitles`: shows or hides the subtitles, sets their delay (seconds, positive: later),
    /// or picks an embedded track (`.some(nil)`: none); nil leaves a setting as it is. The choices
    /// hold for the following items too. Emits `subtitlesChanged`.
    public func setSubtitles(enabled: Bool? = nil, delay: Double? = nil, track: Int?? = nil) throws {
        let delay = delay.flatMap { $0.isFinite ? $0 : nil }
        if let t = track, let t, let item = current,
           !item.reader.demuxer.tracks.contains(where: { $0.index == t && $0.kind == .subtitle }) {
            throw PlayerError.subtitleTrackInvalid(t)
        }
        subtitles.set(enabled: enabled, delay: delay)
        if let track {
            subtitles.trackOverride = .some(track)
            if let item = current {
                startSubtitles(item, at: session.lastPresentedPts)
            }
        }
        emit(.subtitlesChanged(subtitles.status))
    }

    /// The current item's subtitles as the API shows them.
    public var subtitleStatus: SubtitleStatus { subtitles.status }
}
