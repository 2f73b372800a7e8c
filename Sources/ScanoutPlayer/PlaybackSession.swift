import ScanoutDisplay
import ScanoutMedia

/// Figures from one playback.
public struct PlaybackStats: Sendable {
    public var framesDecoded = 0
    public var framesPresented = 0
    /// Frames skipped because they were already more than one frame late when decoded.
    public var framesDropped = 0
    /// Wall time spent inside the decoder (demux + decode), seconds.
    public var decodeSeconds = 0.0
    /// Wall time spent presenting (conversion + display), seconds.
    public var presentSeconds = 0.0
    /// Wall time of the whole playback, seconds.
    public var wallSeconds = 0.0
    /// Media time covered, seconds.
    public var mediaSeconds = 0.0
    /// |presentation time − target time| of each presented frame, sorted, nanoseconds.
    public var pacingDeviations: [UInt64] = []
    public var decodeErrors = DecodeStats()

    /// Decoded frames per second of decoder time.
    public var decodeFPS: Double { decodeSeconds > 0 ? Double(framesDecoded) / decodeSeconds : 0 }

    /// The `p`-th percentile (0...100) of the pacing deviation, milliseconds.
    public func pacingPercentile(_ p: Double) -> Double {
        guard !pacingDeviations.isEmpty else { return 0 }
        let i = min(pacingDeviations.count - 1, Int((p / 100 * Double(pacingDeviations.count - 1)).rounded()))
        return Double(pacingDeviations[i]) / 1e6
    }
}

/// Where playback stands, reported a few times a second.
public struct PlaybackProgress: Sendable {
    public var position: Double
    public var duration: Double?
    public var stats: PlaybackStats
}

/// Plays one input on one display: decode → (wait for the frame's time) → present.
///
/// With `timed` each frame is shown when the clock reaches its presentation time (scaled by
/// `rate`); a frame already more than one frame interval late when it comes out of the decoder
/// is dropped, as mpv's and GStreamer's sinks do, and counted. Untimed playback shows every frame
/// as fast as it decodes (benchmarks). Runs on the calling thread. Not thread-safe.
public final class PlaybackSession {
    public let reader: FrameReader
    public let display: any Display
    public let clock: any PlaybackClock
    public var timed: Bool
    public var rate: Double
    public var progressInterval: UInt64 = 250_000_000

    public init(reader: FrameReader, display: any Display, clock: any PlaybackClock = MonotonicClock(), timed: Bool = true, rate: Double = 1) {
        self.reader = reader
        self.display = display
        self.clock = clock
        self.timed = timed
        self.rate = rate
    }

    /// Plays to the end (or until `shouldStop` returns true) and returns the figures.
    public func run(orientation: Orientation? = nil, shouldStop: () -> Bool = { false }, progress: (PlaybackProgress) -> Void = { _ in }) throws -> PlaybackStats {
        var stats = PlaybackStats()
        let frame = VideoFrame()
        let video = reader.video
        let tb = video.timeBase.doubleValue
        let interval = video.frameRate.isValid ? 1e9 / video.frameRate.doubleValue / rate : 1e9 / 30 / rate
        let orient = orientation ?? video.orientation
        let duration = video.durationSeconds
        let start = clock.now()
        var firstPts: Int64?
        var lastProgress = start
        var lastMedia = 0.0
        while !shouldStop() {
            let d0 = clock.now()
            guard try reader.next(into: frame) else { break }
            let d1 = clock.now()
            stats.decodeSeconds += Double(d1 &- d0) / 1e9
            stats.framesDecoded += 1
            let pts = frame.pts ?? (firstPts ?? 0) + Int64(Double(stats.framesDecoded - 1) * interval * rate / 1e9 / max(tb, 1e-12))
            if firstPts == nil { firstPts = pts }
            let media = Double(pts - firstPts!) * tb
            lastMedia = max(lastMedia, media)
            let target = start &+ UInt64(max(0, media / rate * 1e9))
            if timed {
                let now = clock.now()
                if stats.framesPresented > 0, now > target &+ UInt64(interval) {
                    stats.framesDropped += 1
                    continue
                }
                clock.sleep(until: target)
            }
            let p0 = clock.now()
            try display.present(frame, orientation: orient)
            let p1 = clock.now()
            stats.presentSeconds += Double(p1 &- p0) / 1e9
            stats.framesPresented += 1
            if timed { stats.pacingDeviations.append(p0 > target ? p0 - target : target - p0) }
            if p1 &- lastProgress >= progressInterval {
                lastProgress = p1
                stats.wallSeconds = Double(p1 &- start) / 1e9
                stats.mediaSeconds = lastMedia
                stats.decodeErrors = reader.decoder.stats
                progress(PlaybackProgress(position: media, duration: duration, stats: stats))
            }
        }
        stats.wallSeconds = Double(clock.now() &- start) / 1e9
        stats.mediaSeconds = lastMedia
        stats.decodeErrors = reader.decoder.stats
        stats.pacingDeviations.sort()
        return stats
    }
}
