import Foundation
import ScanoutCore
import ScanoutAudio

// MARK: Playing to the end on the calling thread (`scanout play`)

extension PlayerEngine {
    /// Plays what is loaded to its end on the calling thread, or until `shouldStop` says so:
    /// the turns of the loop (`tick`) one after the other, as the service's thread runs them,
    /// with no command between them. `progress` gets the figures every
    /// `session.progressInterval` of frames shown.
    ///
    /// Throws the error that stopped the item (`lastPlaybackError`): a read or decode failure,
    /// the display refusing frames. Returns the figures, with the wall time of the run and every
    /// pacing deviation of it, sorted.
    public func run(shouldStop: () -> Bool = { false }, progress: (PlaybackProgress) -> Void = { _ in }) throws -> PlaybackStats {
        if state == .ready || state == .paused { try play(userInitiated: false) }
        session.deviationWindow = nil
        lastPlaybackError = nil
        let start = clock.now()
        var lastProgress = start
        func figures(at now: ClockTime) -> PlaybackStats {
            var stats = session.currentStats()
            stats.wallSeconds = (now - start).secondsValue
            return stats
        }
        while !shouldStop() {
            let shown = session.stats.framesPresented
            tick()
            if let e = lastPlaybackError { throw e }
            guard isRunning else { break }
            let now = clock.now()
            if session.stats.framesPresented > shown, now - lastProgress >= session.progressInterval {
                lastProgress = now
                progress(PlaybackProgress(position: position, duration: duration, stats: figures(at: now)))
            }
        }
        var stats = figures(at: clock.now())
        stats.pacingDeviations.sort()
        return stats
    }

    /// After `run` reached the end: waits while the sound plays to its last sample (what the
    /// decoder and the stretcher hold, then what is queued and in the device: as long as the
    /// queue can hold, played at the rate, and a second), or until `shouldStop` says so.
    public func waitForTheSound(shouldStop: () -> Bool = { false }) {
        audio.finish()
        let limit = Int((audio.output.map { $0.maxQueuedSeconds } ?? 0) / rate * 10) + 10
        for _ in 0..<limit where !shouldStop() {
            if audio.waitUntilHeard(timeout: 0.1) { break }
        }
    }
}
