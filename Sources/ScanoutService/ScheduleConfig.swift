import Foundation
import ScanoutPlayer

/// `schedule` (the config key, and the body of `PUT /schedule`):
///
///     schedule {timeZone ("Europe/Berlin"; default the box's), default [playlist] (default: the
///               config's playlist), slots [{id, days ["mon"...], start "HH:MM[:SS]",
///               end "HH:MM[:SS]" ("24:00"; before start: the next day), from, until ("YYYY-MM-DD"),
///               playlist}], events [{id, start, end (ISO 8601; without an offset: in timeZone),
///               playlist}]}
///
/// Every mistake is refused naming its field (`schedule.slots[1].end`).
extension Wire {
    struct ScheduleRequest: RequestBody {
        enum Field: String, CodingKey, CaseIterable { case timeZone, `default`, slots, events }
        var schedule: Schedule

        init(from decoder: any Swift.Decoder) throws {
            let c = try decoder.container(keyedBy: Field.self)
            var s = Schedule()
            if let name = try c.decodeIfPresent(String.self, forKey: .timeZone) {
                guard let zone = TimeZone(identifier: name) else {
                    throw APIError.badRequest(c.name(.timeZone), "must be a time zone name of the tz database, e.g. Europe/Berlin (got \"\(name)\")")
                }
                s.timeZone = zone
            }
            s.defaultPlaylist = try c.decodeIfPresent([ItemRequest].self, forKey: .default)?.map(\.item) ?? []
            let zone = s.timeZone
            s.slots = try c.decodeIfPresent([SlotRequest].self, forKey: .slots)?.map(\.slot) ?? []
            s.events = try (c.decodeIfPresent([EventRequest].self, forKey: .events) ?? []).enumerated().map { i, e in
                try e.event(in: zone, field: "\(c.name(.events))[\(i)]")
            }
            try Self.unique(s.slots.map(\.id), field: c.name(.slots))
            try Self.unique(s.events.map(\.id), field: c.name(.events))
            schedule = s
        }

        static func unique(_ ids: [String], field: String) throws {
            var seen = Set<String>()
            for (i, id) in ids.enumerated() where !seen.insert(id).inserted {
                throw APIError.badRequest("\(field)[\(i)].id", "\"\(id)\" is used twice; ids must differ")
            }
        }
    }

    struct SlotRequest: Decodable {
        enum Field: String, CodingKey, CaseIterable { case id, days, start, end, from, until, playlist, power }
        static let dayNames = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
        var slot: Schedule.Slot

        init(from decoder: any Swift.Decoder) throws {
            let c = try decoder.container(keyedBy: Field.self)
            guard let id = try c.decodeIfPresent(String.self, forKey: .id), !id.isEmpty else {
                throw APIError.badRequest(c.name(.id), "is required: a name for the slot")
            }
            var days = Set(1...7)
            if let names = try c.decodeStrings(forKey: .days, each: "must be a weekday: mon, tue, wed, thu, fri, sat or sun") {
                days = []
                for (i, n) in names.enumerated() {
                    guard let d = Self.dayNames.firstIndex(of: n.lowercased()) else {
                        throw APIError.badRequest("\(c.name(.days))[\(i)]", "must be a weekday: mon, tue, wed, thu, fri, sat or sun (got \"\(n)\")")
                    }
                    days.insert(d + 1)
                }
                guard !days.isEmpty else { throw APIError.badRequest(c.name(.days), "must name at least one weekday") }
            }
            let start = try Self.time(c, .start), end = try Self.time(c, .end)
            guard start != end else { throw APIError.badRequest(c.name(.end), "must differ from start (a whole day: 00:00 to 24:00)") }
            let power = try c.decodeIfPresent(String.self, forKey: .power, oneOf: ["on", "off"]) != "off"
            let playlist = try c.decodeIfPresent([ItemRequest].self, forKey: .playlist)?.map(\.item) ?? []
            guard !playlist.isEmpty || !power else {
                throw APIError.badRequest(c.name(.playlist), "is required: the items the slot plays (or \"power\": \"off\")")
            }
            let from = try Self.day(c, .from), until = try Self.day(c, .until)
            if let from, let until, (from.year!, from.month!, from.day!) > (until.year!, until.month!, until.day!) {
                throw APIError.badRequest(c.name(.until), "must not be before from")
            }
            slot = Schedule.Slot(id: id, days: days, start: start, end: end == 0 && start > 0 ? 86_400 : end, from: from, until: until,
                                 playlist: playlist, power: power)
        }

        /// `HH:MM` or `HH:MM:SS` (24:00 for the end of a day), as seconds from midnight.
        static func time(_ c: KeyedDecodingContainer<Field>, _ key: Field) throws -> Int {
            guard let text = try c.decodeIfPresent(String.self, forKey: key) else {
                throw APIError.badRequest(c.name(key), "is required: a local time, HH:MM or HH:MM:SS")
            }
            let parts = text.split(separator: ":", omittingEmptySubsequences: false).map { Int($0) }
            guard (2...3).contains(parts.count), parts.allSatisfy({ $0 != nil }), text.split(separator: ":").allSatisfy({ $0.count == 2 }) else {
                throw APIError.badRequest(c.name(key), "must be a local time, HH:MM or HH:MM:SS (got \"\(text)\")")
            }
            let h = parts[0]!, m = parts[1]!, s = parts.count == 3 ? parts[2]! : 0
            let total = h * 3600 + m * 60 + s
            guard h <= 24, m < 60, s < 60, total <= 86_400, key == .end || total < 86_400 else {
                throw APIError.badRequest(c.name(key), "must be a local time from 00:00 to \(key == .end ? "24:00" : "23:59:59") (got \"\(text)\")")
            }
            return total
        }

        /// `YYYY-MM-DD`.
        static func day(_ c: KeyedDecodingContainer<Field>, _ key: Field) throws -> DateComponents? {
            guard let text = try c.decodeIfPresent(String.self, forKey: key) else { return nil }
            let p = text.split(separator: "-").map { Int($0) }
            guard p.count == 3, let y = p[0], let m = p[1], let d = p[2], (1...9999).contains(y), (1...12).contains(m), (1...31).contains(d) else {
                throw APIError.badRequest(c.name(key), "must be a date, YYYY-MM-DD (got \"\(text)\")")
            }
            return DateComponents(year: y, month: m, day: d)
        }
    }

    struct EventRequest: Decodable {
        enum Field: String, CodingKey, CaseIterable { case id, start, end, playlist, power }
        var id: String
        var power: Bool
        var start: String
        var end: String
        var playlist: [PlaylistItem]
        var startField: String
        var endField: String

        init(from decoder: any Swift.Decoder) throws {
            let c = try decoder.container(keyedBy: Field.self)
            guard let id = try c.decodeIfPresent(String.self, forKey: .id), !id.isEmpty else {
                throw APIError.badRequest(c.name(.id), "is required: a name for the event")
            }
            self.id = id
            for key in [Field.start, .end] where !c.contains(key) {
                throw APIError.badRequest(c.name(key), "is required: a date and time, e.g. 2026-12-05T18:00:00+01:00")
            }
            start = try c.decode(String.self, forKey: .start)
            end = try c.decode(String.self, forKey: .end)
            (startField, endField) = (c.name(.start), c.name(.end))
            power = try c.decodeIfPresent(String.self, forKey: .power, oneOf: ["on", "off"]) != "off"
            playlist = try c.decodeIfPresent([ItemRequest].self, forKey: .playlist)?.map(\.item) ?? []
            guard !playlist.isEmpty || !power else {
                throw APIError.badRequest(c.name(.playlist), "is required: the items the event plays (or \"power\": \"off\")")
            }
        }

        /// The event, its times read in `zone` when they carry no offset.
        func event(in zone: TimeZone, field: String) throws -> Schedule.Event {
            let s = try Self.instant(start, field: startField, zone: zone), e = try Self.instant(end, field: endField, zone: zone)
            guard e > s else { throw APIError.badRequest(endField, "must be after start") }
            return Schedule.Event(id: id, start: s, end: e, playlist: playlist, power: power)
        }

        /// ISO 8601 (`2026-12-05T18:00:00+01:00`, `...Z`); without an offset, in `zone`.
        static func instant(_ text: String, field: String, zone: TimeZone) throws -> Date {
            if let d = ISOTime.parse(text) { return d }
            let local = DateFormatter()
            local.locale = Locale(identifier: "en_US_POSIX")
            local.timeZone = zone
            for format in ["yyyy-MM-dd'T'HH:mm:ss", "yyyy-MM-dd'T'HH:mm"] {
                local.dateFormat = format
                if let d = local.date(from: text) { return d }
            }
            throw APIError.badRequest(field, "must be a date and time, e.g. 2026-12-05T18:00:00+01:00 (got \"\(text)\")")
        }
    }

    /// `GET /schedule`: the schedule as it is set (times as given, events with their offsets).
    struct ScheduleShown: Encodable, Sendable {
        var schedule: Schedule

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: WireKey.self)
            let s = schedule
            try c.encode(s.timeZone.identifier, forKey: "timeZone")
            try c.encode(s.defaultPlaylist.map(Item.init), forKey: "default")
            var slots = c.nestedUnkeyedContainer(forKey: "slots")
            for slot in s.slots {
                var o = slots.nestedContainer(keyedBy: WireKey.self)
                try o.encode(slot.id, forKey: "id")
                try o.encode(slot.days.sorted().map { SlotRequest.dayNames[$0 - 1] }, forKey: "days")
                try o.encode(Self.clock(slot.start), forKey: "start"); try o.encode(Self.clock(slot.end), forKey: "end")
                try o.encodeNullable(slot.from.map(Self.day), forKey: "from"); try o.encodeNullable(slot.until.map(Self.day), forKey: "until")
                try o.encode(slot.playlist.map(Item.init), forKey: "playlist"); try o.encode(slot.power ? "on" : "off", forKey: "power")
            }
            var events = c.nestedUnkeyedContainer(forKey: "events")
            for e in s.events {
                var o = events.nestedContainer(keyedBy: WireKey.self)
                try o.encode(e.id, forKey: "id")
                try o.encode(ISOTime.format(e.start, in: s.timeZone), forKey: "start"); try o.encode(ISOTime.format(e.end, in: s.timeZone), forKey: "end")
                try o.encode(e.playlist.map(Item.init), forKey: "playlist"); try o.encode(e.power ? "on" : "off", forKey: "power")
            }
        }

        static func clock(_ seconds: Int) -> String {
            seconds % 60 == 0 ? String(format: "%02d:%02d", seconds / 3600, seconds / 60 % 60)
                : String(format: "%02d:%02d:%02d", seconds / 3600, seconds / 60 % 60, seconds % 60)
        }
        static func day(_ d: DateComponents) -> String { String(format: "%04d-%02d-%02d", d.year ?? 0, d.month ?? 0, d.day ?? 0) }
    }

    /// `GET /schedule/now`: what plays, which rule chose it, since and until when, and the next
    /// change.
    struct ScheduleNow: Encodable, Sendable {
        var rule: String
        var id: String?
        var playlist: [Item]
        var since: String?
        var until: String?
        /// "off" while the rule switches the screens off.
        var power: String
        var next: String?
        var nextRule: String?
    }
}

extension Schedule {
    /// A schedule read from `file`: a schedule object, or a config file with one under
    /// `schedule`; a mistake is a `ConfigFileError` naming the file and the field.
    public static func load(file: String) throws -> Schedule {
        try ServiceConfig.readJSONFile(file) { data throws(APIError) in
            if let inner = try RequestDecoder.object(data)["schedule"] {
                return try RequestDecoder.decode(Wire.ScheduleRequest.self, from: inner, path: [WireKey(stringValue: "schedule")]).schedule
            }
            return try RequestDecoder.decodeBody(Wire.ScheduleRequest.self, from: data).schedule
        }
    }

    /// What `scanout schedule check` prints: what holds at `t` and the next `count` changes, in
    /// the schedule's time zone.
    public func report(at t: Date, count: Int) -> [String] {
        func when(_ d: Date) -> String { ISOTime.format(d, in: timeZone) }
        func items(_ c: Choice) -> String { c.playlist.isEmpty ? "the config's playlist" : "\(c.playlist.count) item\(c.playlist.count == 1 ? "" : "s")" }
        let now = choice(at: t)
        var lines = ["time zone \(timeZone.identifier); \(slots.count) slot\(slots.count == 1 ? "" : "s"), \(events.count) event\(events.count == 1 ? "" : "s")",
                     "at \(when(t)): \(now.rule) (\(items(now)))" + (now.until.map { " until \(when($0))" } ?? "")]
        let next = changes(from: t, count: count)
        lines.append(next.isEmpty ? "no change within a week" : "next changes:")
        for (at, rule) in next { lines.append("  \(when(at))  \(rule) (\(items(choice(at: at))))") }
        return lines
    }
}
