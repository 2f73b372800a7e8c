import ScanoutCore
import ScanoutDecode
import ScanoutDemux

/// Figures from one playback.
public struct PlaybackStats: Sendable {
    public var framesDecoded = 0
    public var framesPresented = 0
    /// Frames skipped because they were already more than one frame late when decoded.
    public var framesDropped = 0
    /// Live inputs: frames that were late and were shown anyway, the timeline moved back to
    /// them (`liveSlips`), and the delay those moves added, seconds.
    public var liveSlips = 0
    public var liveSlipSeconds = 0.0
    /// Wall time spent inside the decoder (demux + decode), seconds.
    public var decodeSeconds = 0.0
    /// Wall time spent presenting (conversion + display), seconds.
    public var presentSeconds = 0.0
    /// Wall time of the whole playback, seconds.
    public var wallSeconds = 0.0
    /// Media time covered, seconds.
    public var mediaSeconds = 0.0
    /// Compressed bytes read.
    public var bytesRead = 0
    /// |presentation time − target time| of each presented frame, nanoseconds; sorted once
    /// playback ends (`run`), in presentation order while it goes on. A session with a
    /// `deviationWindow` keeps only the latest ones.
    public var pacingDeviations: [Duration] = []
    public var decodeErrors = DecodeStats()
    /// Copies of decoded pictures between CPU and GPU memory (downloads, uploads) and the ones
    /// that stayed on the GPU (GPU copies, imports), when the session counts them.
    public var transfers = TransferCounts()
    /// Network sources read ahead: the times the timeline paused because the read-ahead ran
    /// dry, and how long those waits lasted in all, seconds (`BufferingGate`).
    public var bufferingWaits = 0
    public var bufferingSeconds = 0.0
    /// Frames that came late because a read waited for the network, shown with the timeline
    /// moved back to them instead of dropped.
    public var networkLateFrames = 0

    public init() {}

    /// Decoded frames per second of decoder time.
    public var decodeFPS: Double { decodeSeconds > 0 ? Double(framesDecoded) / decodeSeconds : 0 }

    /// The `p`-th percentile (0...100) of the pacing deviation, milliseconds (`percentile`).
    public func pacingPercentile(_ p: Double) -> Double { Self.percentile(p, of: pacingDeviations) }

    /// The `p`-th percentile (0...100) of `deviations`, milliseconds. Sorts a copy
    /// when they are not sorted yet: callers off the playback thread (`PlayerSnapshot`) pay for it.
    public static func percentile(_ p: Double, of deviations: [Duration]) -> Double {
        guard !deviations.isEmpty else { return 0 }
        var sorted = deviations
        for i in sorted.indices.dropFirst() where sorted[i] < sorted[i - 1] { sorted.sort(); break }
        let i = min(sorted.count - 1, Int((p / 100 * Double(sorted.count - 1)).rounded()))
        return Double(sorted[i].nanosecondCount) / 1e6
    }
}

/// Where playback stands, reported a few times a second.
public struct PlaybackProgress: Sendable {
    public var position: Double
    public var duration: Double?
    public var stats: PlaybackStats
}

/// Told about each frame as it goes through the loop (metrics). Called on the playback thread.
public protocol PlaybackObserver: AnyObject {
    func frameDecoded(seconds: Double, bytes: Int)
    func framePresented(seconds: Double)
    func frameDropped()
    /// One frame of `output` was drawn censored (a content policy).
    func frameCensored(output: String)
}

extension PlaybackObserver {
    public func frameCensored(output: String) {}
}

/// What one step of the loop did.
public enum PlaybackStep: Equatable, Sendable {
    /// A frame was shown; its timestamp and media time (seconds from the item's first frame).
    case presented(pts: Int64?, media: Double)
    /// A frame came out of the decoder too late and was skipped.
    case dropped(pts: Int64?, media: Double)
    /// The reader is exhausted (or none is set).
    case ended
    /// The network source's read-ahead ran dry: nothing was decoded, the timeline waits
    /// (`BufferingGate`). Step again.
    case buffering(BufferLevel)
}

/// The display failed to show a frame (no output).
public struct PresentError: Error, CustomStringConvertible {
    public var display: String
    public var underlying: any Error
    public var description: String { "cannot present on \(display): \(underlying)" }
}
