import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio

/// When a timeline waits for a network source: the decision `PlaybackSession` takes before it
/// decodes, from its read-ahead's level (a value, tested without a source or a display).
///
/// A VOD source that runs dry pauses the timeline, as a set-top box does: the wait starts when
/// no video packet is held (before the decoder would block on the network), and playback
/// resumes once `resumeSeconds` of media are held again, the read-ahead is full, or the input
/// ended. Frames are never dropped for the time the network took; only a decoder or a renderer
/// that cannot keep up drops them.
public struct BufferingGate: Sendable, Equatable {
    public enum Decision: Sendable, Equatable {
        /// Decode and show as usual.
        case go
        /// The read-ahead ran dry now: the wait starts.
        case startWait
        /// Still waiting.
        case keepWaiting
        /// Enough is held again after a wait this long.
        case resume(waited: Duration)
    }

    /// When the current wait started (clock time); nil when not waiting.
    public private(set) var since: ClockTime?
    public var isWaiting: Bool { since != nil }

    public init() {}

    public mutating func check(_ level: BufferLevel, resumeSeconds: Double, now: ClockTime) -> Decision {
        guard let start = since else {
            guard level.packets == 0, !level.ended else { return .go }
            since = now
            return .startWait
        }
        guard level.ended || level.full || level.seconds >= resumeSeconds else { return .keepWaiting }
        since = nil
        return .resume(waited: now - start)
    }
}

extension BufferLevel {
    /// Why playback waits, in words: what is held and how fast data comes against what the
    /// media needs (`buffering` events, `/state`).
    public func waitReason(source: String) -> String {
        var s = "the read-ahead of \(source) ran dry (\(String(format: "%.1f", seconds)) s held"
        if let rate = inputBytesPerSecond {
            s += "; data arrives at \(Int(rate / 1000)) kB/s"
            if let need = mediaBytesPerSecond { s += ", the media needs \(Int(need / 1000)) kB/s" }
        }
        return s + ")"
    }
}
