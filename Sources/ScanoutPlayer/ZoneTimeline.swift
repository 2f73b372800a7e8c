import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutRender

/// Where a zone's playlist is at a time, with no player running: its items one after another
/// from 0, each as long as its video (a still image: its `duration`, else the default), again
/// from the start with `repeat` all (the current item again with `one`); past the end of a
/// playlist that does not repeat, its last frame stays.
public struct ZoneTimeline: Sendable {
    public let playlist: [PlaylistItem]
    public let repeatMode: RepeatMode
    /// Each item's length, seconds.
    public let durations: [Double]

    public init(playlist: [PlaylistItem], repeatMode: RepeatMode, durations: [Double]) {
        self.playlist = playlist
        self.repeatMode = repeatMode
        self.durations = durations
    }

    /// Opens each item to learn its length (`decoder`'s `stillDuration` for images that name none).
    public init(zone: ScreenLayout.Zone, decoder: DecoderOptions, demuxer: DemuxerOptions = DemuxerOptions()) throws {
        let lengths = try zone.playlist.map { item -> Double in
            let reader = try FrameReader(input: item.source, demuxerOptions: demuxer, decoderOptions: ZoneTimeline.options(decoder, item))
            guard let d = reader.video.durationSeconds, d > 0 else { throw MediaError.noFrames(input: item.source) }
            return d
        }
        self.init(playlist: zone.playlist, repeatMode: zone.repeatMode, durations: lengths)
    }

    /// `decoder` with `item`'s own still duration, when it names one.
    public static func options(_ decoder: DecoderOptions, _ item: PlaylistItem) -> DecoderOptions {
        var o = decoder
        if let d = item.duration { o.stillDuration = d }
        if let type = item.playerType { o.playerType = type }
        return o
    }

    /// The item on screen `seconds` after the zone started, and how far into it; nil for an
    /// empty playlist.
    public func locate(_ seconds: Double) -> (item: Int, time: Double)? {
        guard !durations.isEmpty else { return nil }
        let total = durations.reduce(0, +)
        var t = max(seconds, 0)
        switch repeatMode {
        case .all:
            t = t.truncatingRemainder(dividingBy: total)
        case .one:
            return (0, t.truncatingRemainder(dividingBy: durations[0]))
        case .none:
            if t >= total { return (durations.count - 1, max(durations[durations.count - 1] - 1e-6, 0)) }
        }
        for (i, d) in durations.enumerated() {
            if t < d { return (i, t) }
            t -= d
        }
        return (durations.count - 1, max(durations[durations.count - 1] - 1e-6, 0))
    }
}
