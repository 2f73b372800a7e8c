import Foundation
import ScanoutCore

/// Where the engine stands: the public `PlayerState`, with what only one state needs carried
/// in it, so that it cannot outlive that state.
enum EnginePhase: Equatable {
    case idle, preparing, playing, buffering, seeking, ended, stopped
    /// An item is prepared and not playing. `resumeAt`: the media time of the frame on screen
    /// (shown by a seek); nil while the item's first frame is still to be shown.
    case ready(resumeAt: Double?)
    /// Playback stopped on a frame. `resumeAt`: that frame's media time (the next one is due
    /// one frame after it on `play`); nil when the item's first frame was never shown.
    case paused(resumeAt: Double?)
    /// Nothing can be played: the playlist is tried again at `retryAt` (the engine's clock);
    /// nil while that retry runs, or after a failure with no retry due.
    case error(retryAt: ClockTime?)

    var state: PlayerState {
        switch self {
        case .idle: .idle
        case .preparing: .preparing
        case .ready: .ready
        case .playing: .playing
        case .paused: .paused
        case .buffering: .buffering
        case .seeking: .seeking
        case .ended: .ended
        case .stopped: .stopped
        case .error: .error
        }
    }

    /// Where a `play` from here resumes (ready, paused); nil elsewhere.
    var resumeAt: Double? {
        switch self {
        case .ready(let m), .paused(let m): m
        default: nil
        }
    }
}

/// Why the loop waits on the current item's source, while it does. Kept beside the phase, not
/// in it: a wait outlives the state that announced it (a pause during a network wait, a seek
/// out of `buffering`, the `playing` that a resume goes back to while the read-ahead still
/// fills); it ends when its source says so, or with the item.
struct BufferingWait {
    /// Said in the `buffering` event and `/state` (`bufferingReason`).
    var reason: String
    /// Announced from inside a read of the current item that is still blocked (HTTP, HLS);
    /// it ends when that read returns, or with the item.
    var insideRead = false
    /// When the timeline started waiting for the read-ahead (the engine's clock); nil for the
    /// other waits.
    var readAheadSince: ClockTime?
}

/// The item after the current one: not wanted (none, or being prepared already), wanted once
/// the current one has settled, or due at a clock time (counted from the current item's first
/// frame shown after it was wanted).
enum Upcoming: Equatable {
    case none
    case wanted
    case due(ClockTime)
}

/// When the command that made an item current began, until the item's first frame is shown.
struct FirstFrameRequest {
    var startedAt: ClockTime?
}

extension PlayerEngine {
    /// Hands `event` on; an `error` is kept as the latest failure too.
    func emit(_ event: PlayerEvent) {
        if case let .error(message, item, skipped) = event {
            let source = item.flatMap { playlist.indices.contains($0) ? playlist[$0].source : nil }
            lastFailure = ItemFailure(item: item, source: source, message: message, skipped: skipped)
        }
        sink(event)
    }

    /// Moves to `p`; `stateChanged` when the public state changes.
    func set(_ p: EnginePhase) {
        let old = state
        phase = p
        guard p.state != old else { return }
        emit(.stateChanged(from: old, to: p.state))
    }

    func setReasons(_ r: ServiceReasons) {
        guard r != reasons else { return }
        reasons = r
        emit(.serviceState(up: r.isEmpty, reasons: r))
    }
}
