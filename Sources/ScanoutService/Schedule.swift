import Foundation
import ScanoutPlayer

/// What a screen plays when (config `schedule`, `GET|PUT /schedule`): a default playlist, time
/// slots by weekday (windows in the box's time zone, crossing midnight when they end before they
/// start, within a range of dates), and one-off events; an event wins over a slot, a slot over
/// the default, and among several that hold, the first listed. A value with no clock: it answers
/// what holds at an instant (`choice(at:)`) and when that next changes (`nextChange(after:)`);
/// `ScheduleRunner` asks it.
///
/// Local times are resolved in `timeZone` for each day, so a window keeps its wall-clock times
/// across DST changes: a start that does not exist that day (02:30 when clocks spring forward) is
/// the first instant after the gap, a time that happens twice (when they fall back) its first
/// occurrence.
public struct Schedule: Sendable, Equatable {
    /// A window repeated on some weekdays.
    public struct Slot: Sendable, Equatable {
        public var id: String
        /// ISO weekdays: 1 Monday ... 7 Sunday (of the day the window starts).
        public var days: Set<Int>
        /// Seconds from local midnight; `end` ≤ `start`: the window ends the next day.
        public var start: Int
        public var end: Int
        /// The first and last days (local) a window may start on; nil: unbounded.
        public var from: DateComponents?
        public var until: DateComponents?
        public var playlist: [PlaylistItem]
        /// False: the screens are switched off for the window (`power: "off"`).
        public var power = true

        public init(id: String, days: Set<Int> = Set(1...7), start: Int, end: Int, from: DateComponents? = nil, until: DateComponents? = nil,
                    playlist: [PlaylistItem], power: Bool = true) {
            self.id = id; self.days = days; self.start = start; self.end = end; self.from = from; self.until = until
            self.playlist = playlist; self.power = power
        }
    }

    /// A one-off window.
    public struct Event: Sendable, Equatable {
        public var id: String
        public var start: Date
        public var end: Date
        public var playlist: [PlaylistItem]
        public var power = true

        public init(id: String, start: Date, end: Date, playlist: [PlaylistItem], power: Bool = true) {
            self.id = id; self.start = start; self.end = end; self.playlist = playlist; self.power = power
        }
    }

    /// Which rule chose what plays.
    public enum Rule: Sendable, Equatable, CustomStringConvertible {
        case event(String)
        case slot(String)
        case `default`

        public var kind: String {
            switch self {
            case .event: "event"
            case .slot: "slot"
            case .default: "default"
            }
        }
        public var id: String? {
            switch self {
            case .event(let id), .slot(let id): id
            case .default: nil
            }
        }
        public var description: String { id.map { "\(kind) \($0)" } ?? kind }
    }

    /// What holds at an instant: the rule, its playlist, and the window it holds in (nil: open).
    public struct Choice: Sendable, Equatable {
        public var rule: Rule
        public var playlist: [PlaylistItem]
        public var since: Date?
        public var until: Date?
        /// False: the screens are off while it holds.
        public var power = true
    }

    public var timeZone: TimeZone
    /// The default's playlist; empty: the config's playlist.
    public var defaultPlaylist: [PlaylistItem]
    public var slots: [Slot]
    public var events: [Event]

    public init(timeZone: TimeZone = .current, defaultPlaylist: [PlaylistItem] = [], slots: [Slot] = [], events: [Event] = []) {
        self.timeZone = timeZone; self.defaultPlaylist = defaultPlaylist; self.slots = slots; self.events = events
    }

    var calendar: Calendar {
        var c = Calendar(identifier: .gregorian)
        c.timeZone = timeZone
        return c
    }

    /// The instant of `seconds` after local midnight of the day `day` (its start); 86,400: the
    /// next day's midnight.
    func instant(_ day: Date, seconds: Int) -> Date {
        let c = calendar
        if seconds >= 86_400 { return c.date(byAdding: .day, value: 1, to: day).map { c.startOfDay(for: $0) } ?? day }
        let wanted = DateComponents(hour: seconds / 3600, minute: seconds / 60 % 60, second: seconds % 60)
        return c.nextDate(after: day.addingTimeInterval(-0.5), matching: wanted, matchingPolicy: .nextTime, repeatedTimePolicy: .first,
                          direction: .forward) ?? day
    }

    /// Whether a window of `slot` may start on the local day `day`.
    func starts(_ slot: Slot, on day: Date) -> Bool {
        let c = calendar
        let weekday = (c.component(.weekday, from: day) + 5) % 7 + 1   // Sunday 1 → 7, Monday 2 → 1
        guard slot.days.contains(weekday) else { return false }
        let d = c.dateComponents([.year, .month, .day], from: day)
        let key = (d.year ?? 0) * 10_000 + (d.month ?? 0) * 100 + (d.day ?? 0)
        func value(_ x: DateComponents) -> Int { (x.year ?? 0) * 10_000 + (x.month ?? 0) * 100 + (x.day ?? 0) }
        if let from = slot.from, key < value(from) { return false }
        if let until = slot.until, key > value(until) { return false }
        return true
    }

    /// The windows of `slot` that start on the local days from `first` for `count` days.
    func windows(of slot: Slot, from first: Date, days count: Int) -> [(start: Date, end: Date)] {
        let c = calendar
        var out: [(Date, Date)] = []
        for n in 0..<count {
            guard let day = c.date(byAdding: .day, value: n, to: first).map({ c.startOfDay(for: $0) }), starts(slot, on: day) else { continue }
            let start = instant(day, seconds: slot.start)
            let endDay = slot.end <= slot.start ? (c.date(byAdding: .day, value: 1, to: day).map { c.startOfDay(for: $0) } ?? day) : day
            let end = instant(endDay, seconds: slot.end)
            if end > start { out.append((start, end)) }
        }
        return out
    }

    /// What plays at `t`.
    public func choice(at t: Date) -> Choice {
        if let e = events.first(where: { $0.start <= t && t < $0.end }) {
            return Choice(rule: .event(e.id), playlist: e.playlist, since: e.start, until: e.end, power: e.power)
        }
        let yesterday = calendar.date(byAdding: .day, value: -1, to: calendar.startOfDay(for: t)) ?? t
        for slot in slots {
            if let w = windows(of: slot, from: yesterday, days: 2).first(where: { $0.start <= t && t < $0.end }) {
                return Choice(rule: .slot(slot.id), playlist: slot.playlist, since: w.start, until: w.end, power: slot.power)
            }
        }
        return Choice(rule: .default, playlist: defaultPlaylist, since: nil, until: nil)
    }

    /// The first instant after `t` (within `horizonDays`) at which what plays changes; nil: none.
    public func nextChange(after t: Date, horizonDays: Int = 8) -> Date? {
        let now = choice(at: t).rule
        let first = calendar.date(byAdding: .day, value: -1, to: calendar.startOfDay(for: t)) ?? t
        let limit = t.addingTimeInterval(Double(horizonDays) * 86_400)
        var edges = events.flatMap { [$0.start, $0.end] }
        for slot in slots { edges += windows(of: slot, from: first, days: horizonDays + 2).flatMap { [$0.start, $0.end] } }
        var rule = now
        for edge in Set(edges.filter { $0 > t && $0 <= limit }).sorted() {
            let next = choice(at: edge).rule
            if next != rule { return edge }
            rule = next
        }
        return nil
    }

    /// The changes from `t` on: when, and which rule then holds (at most `count`).
    public func changes(from t: Date, count: Int, horizonDays: Int = 8) -> [(at: Date, rule: Rule)] {
        var out: [(Date, Rule)] = []
        var at = t
        while out.count < count, let next = nextChange(after: at, horizonDays: horizonDays) {
            out.append((next, choice(at: next).rule))
            at = next
        }
        return out
    }
}
