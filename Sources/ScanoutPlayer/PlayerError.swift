import ScanoutCore
import ScanoutDemux

/// A command the player cannot carry out. Each case says what was asked and why not.
public enum PlayerError: Error, Equatable, Sendable, CustomStringConvertible {
    case emptyPlaylist
    case itemOutOfRange(index: Int, count: Int)
    case invalidState(command: String, state: PlayerState)
    case rateOutOfRange(Double)
    case rotationInvalid(Int)
    case seekOutOfRange(seconds: Double, duration: Double?)
    /// A timeshift command on an item that is not a live input.
    case notLive(command: String)
    /// `seek` on a live item: its positions are the timeshift buffer's (`seekTimeshift`).
    case seekOnLive
    /// A timeshift position outside what the buffer holds (stream time, seconds).
    case timeshiftOutOfRange(seconds: Double, start: Double?, end: Double?)
    case noNextItem
    case noPreviousItem
    case noPlayableItem(failures: Int)
    /// An item could not be opened or decoded.
    case media(item: Int, MediaError)
    /// The display failed.
    case output(String)
    /// A subtitle track the current item does not have (stream index).
    case subtitleTrackInvalid(Int)

    public var description: String {
        switch self {
        case .emptyPlaylist: return "the playlist is empty"
        case .itemOutOfRange(let i, let n): return "item \(i) does not exist (the playlist has \(n) item\(n == 1 ? "" : "s"))"
        case .invalidState(let c, let s): return "cannot \(c) while \(s.rawValue)"
        case .rateOutOfRange(let r): return "rate \(r) is outside 0.25...4"
        case .rotationInvalid(let r): return "rotation \(r) is not 0, 90, 180 or 270"
        case .seekOutOfRange(let s, let d): return "position \(s) s is outside the item" + (d.map { " (0...\($0) s)" } ?? "")
        case .notLive(let c): return "cannot \(c): the current item is not a live input (udp://, rtp://) with a timeshift buffer"
        case .seekOnLive: return "a live item has no item timeline to seek in: seek within its timeshift buffer (POST /timeshift/seek with relative or absolute)"
        case .timeshiftOutOfRange(let t, let a, let b):
            guard let a, let b else { return "position \(t) s: the timeshift buffer is still empty" }
            return "position \(t) s is outside the timeshift buffer (\(a)...\(b) s)"
        case .noNextItem: return "no item after the last one (repeat is none)"
        case .noPreviousItem: return "no item before the first one (repeat is none)"
        case .noPlayableItem(let n): return "no item of the playlist can be played (\(n) failed)"
        case .media(let i, let e): return "item \(i): \(e.description)"
        case .output(let s): return "output failed: \(s)"
        case .subtitleTrackInvalid(let t): return "stream \(t) is not a subtitle track of the current item (see tracks in /state)"
        }
    }
}
