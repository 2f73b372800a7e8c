import Foundation
import ScanoutPlayer
import Synchronization

/// Plays what the schedule says, when it says it: looks at the wall clock at every change the
/// schedule announces and at least once a second (so a clock stepped back or forward by NTP is
/// followed at once), and when the rule that holds changes, loads its playlist (the config's for
/// a default with none) and says so (`scheduleChanged`). The loop's thread is a task; what it
/// decides is `decide`, a value tested on any clock.
final class ScheduleRunner: Sendable {
    struct State: Sendable {
        var schedule: Schedule?
        /// The rule whose playlist is loaded; nil before the first turn or after a change of schedule.
        var current: Schedule.Rule?
        /// The change whose playlist is being prepared ahead (`preloadLead`).
        var preloaded: Date?
        /// The config's playlist: the default's when it names none.
        var fallback: [PlaylistItem] = []
    }

    let state = Mutex(State())
    private let player: Player
    /// The repeat mode the rules' playlists play with.
    private let repeatMode: RepeatMode
    private let now: @Sendable () -> Date

    /// `schedule`'s playlists have been checked (content tokens) by whoever sets it.
    init(schedule: Schedule?, player: Player, fallback: [PlaylistItem], repeatMode: RepeatMode, now: @escaping @Sendable () -> Date = { Date() }) {
        state.withLock { $0.schedule = schedule; $0.fallback = fallback }
        self.player = player
        self.repeatMode = repeatMode
        self.now = now
    }

    /// How long before a change its playlist's first item starts being prepared, so that the
    /// switch shows it at once.
    static let preloadLead: TimeInterval = 2
    /// How long before a change its playlist is loaded, its first frame held for the change's
    /// second (the picture before stays on screen meanwhile).
    static let switchLead: TimeInterval = 0.1

    /// What to do at `now` with `current` loaded: the choice to switch to (nil: none), how long
    /// until the next look (the next change, at most a second away), and that next change.
    static func decide(_ schedule: Schedule, current: Schedule.Rule?, at now: Date)
        -> (switchTo: Schedule.Choice?, wait: TimeInterval, next: (at: Date, rule: Schedule.Rule)?) {
        let choice = schedule.choice(at: now)
        let next = schedule.changes(from: now, count: 1).first
        let ahead = next.map { $0.at.timeIntervalSince(now) } ?? 1
        return (choice.rule == current ? nil : choice, max(0.001, min(1, ahead)), next)
    }

    /// Replaces the schedule (`PUT /schedule`, a reload), and the config's playlist when given;
    /// the next turn applies it.
    func replace(_ schedule: Schedule?, fallback: [PlaylistItem]? = nil) {
        state.withLock {
            $0.schedule = schedule
            $0.current = nil
            $0.preloaded = nil
            if let fallback { $0.fallback = fallback }
        }
    }

    var fallback: [PlaylistItem] { state.withLock { $0.fallback } }

    var schedule: Schedule? { state.withLock { $0.schedule } }

    /// What plays now and the next change (`GET /schedule/now`); nil without a schedule.
    func now(at t: Date? = nil) -> (choice: Schedule.Choice, next: (at: Date, rule: Schedule.Rule)?)? {
        guard let s = schedule else { return nil }
        let t = t ?? now()
        return (s.choice(at: t), s.changes(from: t, count: 1).first)
    }

    /// One look at the clock; returns how long to wait before the next.
    @discardableResult
    func turn() async -> TimeInterval {
        let t = now()
        let (schedule, current) = state.withLock { ($0.schedule, $0.current) }
        guard let schedule else { return 1 }
        let (choice, wait, next) = Self.decide(schedule, current: current, at: t)
        if let choice { await apply(choice, next: next) }
        guard let next else { return wait }
        let ahead = next.at.timeIntervalSince(t)
        // A change about to come, to a playlist: loaded now, its first frame held for the second.
        if ahead <= Self.switchLead, state.withLock({ $0.current }) != next.rule {
            let upcoming = schedule.choice(at: next.at)
            if upcoming.power {
                await apply(upcoming, next: schedule.changes(from: next.at, count: 1).first, startAt: next.at)
                return max(0.001, next.at.timeIntervalSince(now()) + 0.001)
            }
        }
        if ahead <= Self.preloadLead, state.withLock({ $0.preloaded }) != next.at {
            state.withLock { $0.preloaded = next.at }
            let upcoming = schedule.choice(at: next.at)
            let items = upcoming.playlist.isEmpty ? self.fallback : upcoming.playlist
            if upcoming.power { _ = try? await player.perform { e in if items != e.playlist { e.preload(items) }; return 0 } }
        }
        // Awake `switchLead` before a change, to load it then.
        return ahead > Self.switchLead ? min(wait, max(0.001, ahead - Self.switchLead)) : wait
    }

    /// Plays `choice`, the change after it being `next`; `startAt`: its first frame held for that
    /// instant of the wall clock.
    private func apply(_ choice: Schedule.Choice, next: (at: Date, rule: Schedule.Rule)?, startAt: Date? = nil) async {
        state.withLock { $0.current = choice.rule }
        let items = choice.playlist.isEmpty ? self.fallback : choice.playlist
        let repeatMode = self.repeatMode
        let power = choice.power
        let wall = now
        _ = try? await player.perform { e in
            if !power {
                do { try e.setDisplayPower(on: false) } catch { e.reportWarning("schedule: \(choice.rule): the screens cannot be switched off: \(error)") }
            } else {
                do { try e.setDisplayPower(on: true) } catch { e.reportWarning("schedule: \(choice.rule): the screens cannot be switched on: \(error)") }
                if !items.isEmpty, items != e.playlist || [.idle, .stopped, .ended, .error].contains(e.state) {
                    e.setRepeat(repeatMode)
                    do {
                        try e.load(items, autoplay: true)
                        if let startAt { e.delayStart(by: .nanoseconds(Int64(startAt.timeIntervalSince(wall()) * 1e9))) }
                    } catch {
                        e.reportWarning("schedule: \(choice.rule) cannot play: \(error)")
                    }
                }
            }
            e.report(.scheduleChanged(rule: choice.rule.kind, id: choice.rule.id, next: next?.at, nextRule: next?.rule.kind))
            return 0
        }
    }

    /// Turns until the task is cancelled.
    func run() async {
        while !Task.isCancelled {
            let wait = await turn()
            try? await Task.sleep(for: .milliseconds(Int64((wait * 1000).rounded(.up))))
        }
    }
}

extension Optional {
    /// `transform` of the value, awaited; nil stays nil.
    func asyncMap<U>(_ transform: (Wrapped) async throws -> U) async rethrows -> U? {
        guard let v = self else { return nil }
        return try await transform(v)
    }
}
