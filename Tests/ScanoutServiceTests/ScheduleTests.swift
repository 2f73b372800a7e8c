import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import ScanoutDisplay
import ScanoutPipeline
import ScanoutPlayer
@testable import ScanoutService
import ScanoutTestSupport
import Synchronization
import Testing

/// Schedules: which rule holds at an instant (events over slots over the default, windows across
/// midnight, date ranges, DST changes), the runner's decisions on a clock stepped back and forth,
/// the switch on a real player, the API and `schedule check`.
@Suite("schedules: what plays when")
struct ScheduleTests {
    static let berlin = TimeZone(identifier: "Europe/Berlin")!

    /// The instant of a local time in Berlin.
    static func local(_ y: Int, _ m: Int, _ d: Int, _ h: Int, _ mi: Int = 0, _ s: Int = 0) -> Date {
        var c = Calendar(identifier: .gregorian)
        c.timeZone = berlin
        return c.date(from: DateComponents(year: y, month: m, day: d, hour: h, minute: mi, second: s))!
    }

    static func utc(_ text: String) -> Date {
        let f = ISO8601DateFormatter()
        return f.date(from: text)!
    }

    static func item(_ name: String) -> [PlaylistItem] { [PlaylistItem(source: name)] }

    static let schedule = Schedule(
        timeZone: berlin, defaultPlaylist: item("d.mp4"),
        slots: [
            Schedule.Slot(id: "mornings", days: Set(1...5), start: 7 * 3600, end: 11 * 3600 + 1800, playlist: item("m.mp4")),
            Schedule.Slot(id: "late", start: 22 * 3600, end: 2 * 3600, playlist: item("late.mp4")),
            Schedule.Slot(id: "december", days: [6, 7], start: 10 * 3600, end: 18 * 3600, from: DateComponents(year: 2026, month: 12, day: 1),
                          until: DateComponents(year: 2026, month: 12, day: 24), playlist: item("xmas.mp4")),
        ],
        events: [Schedule.Event(id: "launch", start: local(2026, 12, 5, 12), end: local(2026, 12, 5, 14), playlist: item("launch.mp4"))])

    @Test("events over slots over the default; windows across midnight; a date range; the end of a window is not in it")
    func rules() {
        let s = Self.schedule
        #expect(s.choice(at: Self.local(2026, 12, 1, 8)).rule == .slot("mornings"))          // a Tuesday
        #expect(s.choice(at: Self.local(2026, 12, 1, 11, 30)).rule == .default)
        #expect(s.choice(at: Self.local(2026, 12, 1, 23)).rule == .slot("late"))
        #expect(s.choice(at: Self.local(2026, 12, 2, 1, 59, 59)).rule == .slot("late"))       // started the day before
        #expect(s.choice(at: Self.local(2026, 12, 2, 2)).rule == .default)
        #expect(s.choice(at: Self.local(2026, 12, 5, 13)).rule == .event("launch"))           // a Saturday in December
        #expect(s.choice(at: Self.local(2026, 12, 5, 15)).rule == .slot("december"))
        #expect(s.choice(at: Self.local(2026, 12, 26, 15)).rule == .default)                  // after its range
        #expect(s.choice(at: Self.local(2026, 12, 5, 13)).playlist == Self.item("launch.mp4"))
        #expect(s.nextChange(after: Self.local(2026, 12, 1, 8)) == Self.local(2026, 12, 1, 11, 30))
        let changes = s.changes(from: Self.local(2026, 11, 30, 0), count: 4)
        #expect(changes.map(\.at) == [Self.local(2026, 11, 30, 2), Self.local(2026, 11, 30, 7), Self.local(2026, 11, 30, 11, 30), Self.local(2026, 11, 30, 22)])
        #expect(changes.map(\.rule) == [.default, .slot("mornings"), .default, .slot("late")])
    }

    @Test("across DST in Berlin: a window keeps its local times; a start inside the spring gap is the first instant after it, a time that comes twice in autumn its first")
    func daylightSaving() {
        let s = Schedule(timeZone: Self.berlin, slots: [
            Schedule.Slot(id: "night", start: 2 * 3600 + 1800, end: 4 * 3600, playlist: Self.item("n.mp4")),
            Schedule.Slot(id: "day", start: 9 * 3600, end: 17 * 3600, playlist: Self.item("day.mp4")),
        ])
        // 29 March 2026: 02:00 CET becomes 03:00 CEST; 02:30 does not exist, the window runs 03:00-04:00 CEST.
        #expect(s.choice(at: Self.utc("2026-03-29T00:59:59Z")).rule == .default)
        #expect(s.choice(at: Self.utc("2026-03-29T01:00:00Z")).rule == .slot("night"))
        #expect(s.choice(at: Self.utc("2026-03-29T02:00:00Z")).rule == .default)              // 04:00 CEST
        #expect(s.choice(at: Self.utc("2026-03-30T07:00:00Z")).rule == .slot("day"))          // 09:00 CEST
        #expect(s.choice(at: Self.utc("2026-03-27T07:59:59Z")).rule == .default)              // 08:59:59 CET
        #expect(s.choice(at: Self.utc("2026-03-27T08:00:00Z")).rule == .slot("day"))          // 09:00 CET
        // 25 October 2026: 03:00 CEST becomes 02:00 CET; 02:30 comes twice: the window runs from the
        // first (00:30Z) to 04:00 CET (03:00Z), two and a half hours.
        #expect(s.choice(at: Self.utc("2026-10-25T00:29:59Z")).rule == .default)
        #expect(s.choice(at: Self.utc("2026-10-25T00:30:00Z")).rule == .slot("night"))
        #expect(s.choice(at: Self.utc("2026-10-25T02:59:59Z")).rule == .slot("night"))
        #expect(s.choice(at: Self.utc("2026-10-25T03:00:00Z")).rule == .default)
        #expect(s.nextChange(after: Self.utc("2026-10-25T00:45:00Z")) == Self.utc("2026-10-25T03:00:00Z"))
    }

    @Test("the runner: a switch exactly at a boundary, at once when the clock steps back or forward past one, a look at least every second")
    func decisions() {
        let s = Schedule(timeZone: Self.berlin, slots: [Schedule.Slot(id: "day", start: 9 * 3600, end: 17 * 3600, playlist: Self.item("day.mp4"))])
        let first = ScheduleRunner.decide(s, current: nil, at: Self.local(2026, 12, 1, 8, 59, 59))
        #expect(first.switchTo?.rule == .default && first.wait == 1)
        let before = ScheduleRunner.decide(s, current: .default, at: Self.local(2026, 12, 1, 8, 59, 59).addingTimeInterval(0.75))
        #expect(before.switchTo == nil && abs(before.wait - 0.25) < 1e-6)   // wakes at the boundary second
        #expect(ScheduleRunner.decide(s, current: .default, at: Self.local(2026, 12, 1, 9)).switchTo?.rule == .slot("day"))
        // An NTP step back from 10:00 to 08:30, then forward to 12:00.
        #expect(ScheduleRunner.decide(s, current: .slot("day"), at: Self.local(2026, 12, 1, 8, 30)).switchTo?.rule == .default)
        #expect(ScheduleRunner.decide(s, current: .default, at: Self.local(2026, 12, 1, 12)).switchTo?.rule == .slot("day"))
        #expect(ScheduleRunner.decide(s, current: .slot("day"), at: Self.local(2026, 12, 1, 12)).switchTo == nil)
    }

    @Test("on a real player: the default's playlist (the config's) before the boundary, the slot's from the boundary on, each change said in an event")
    func runnerSwitches() async throws {
        let clip = try Fixtures.path("counter.mp4"), other = try Fixtures.path("counter_open.ts")
        let player = Player(configuration: PlayerConfiguration()) { HeadlessDisplay() }
        defer { player.shutdown() }
        final class Events: @unchecked Sendable {
            // @unchecked Sendable: `all` is read and written under `lock`.
            let lock = NSLock()
            var all: [PlayerEvent] = []
        }
        let seen = Events()
        player.events.addListener { n in seen.lock.withLock { seen.all.append(n.event) } }
        let clock = Mutex(Self.local(2026, 12, 1, 8, 59, 59))
        let s = Schedule(timeZone: Self.berlin, slots: [
            Schedule.Slot(id: "day", start: 9 * 3600, end: 17 * 3600, playlist: [PlaylistItem(source: other)]),
            Schedule.Slot(id: "night", start: 22 * 3600, end: 6 * 3600, playlist: [], power: false),
        ])
        let runner = ScheduleRunner(schedule: s, player: player, fallback: [PlaylistItem(source: clip)], repeatMode: .all, now: { clock.withLock { $0 } })
        // The next look: `switchLead` before the 09:00 change.
        #expect(abs(await runner.turn() - (1 - ScheduleRunner.switchLead)) < 1e-6)
        #expect(player.snapshot.playlist.map(\.source) == [clip] && player.snapshot.state == .playing)
        clock.withLock { $0 = Self.local(2026, 12, 1, 9) }
        await runner.turn()
        #expect(player.snapshot.playlist.map(\.source) == [other] && player.snapshot.state == .playing)
        await runner.turn()   // nothing changed: no load
        // At night the screens are off, and playback waits for them.
        clock.withLock { $0 = Self.local(2026, 12, 1, 22) }
        await runner.turn()
        #expect(!player.snapshot.displayOn && player.snapshot.state == .paused)
        clock.withLock { $0 = Self.local(2026, 12, 2, 6) }
        await runner.turn()
        #expect(player.snapshot.displayOn && player.snapshot.state == .playing && player.snapshot.playlist.map(\.source) == [clip])
        let changes = seen.lock.withLock { seen.all.compactMap { e -> String? in
            if case .scheduleChanged(let rule, let id, _, _) = e { return id.map { "\(rule) \($0)" } ?? rule } else { return nil }
        } }
        #expect(changes == ["default", "slot day", "slot night", "default"])
    }

    @Test("PUT /schedule: every mistake refused naming its field, nothing changed; then set, shown, and what plays now said")
    func api() async throws {
        let s = try await HeadlessService()
        try await s.app.test(.router) { client in
            #expect(try await client.execute(uri: "/schedule", method: .get).status == .notFound)
            let bad: [(String, String)] = [
                (#"{"slots": [{"id": "a", "start": "09:00", "end": "25:00", "playlist": ["x.mp4"]}]}"#, "slots[0].end"),
                (#"{"slots": [{"id": "a", "days": ["mon", "funday"], "start": "09:00", "end": "10:00", "playlist": ["x.mp4"]}]}"#, "slots[0].days[1]"),
                (#"{"slots": [{"id": "a", "start": "09:00", "end": "10:00"}]}"#, "slots[0].playlist"),
                (#"{"timeZone": "Mars/Olympus"}"#, "timeZone"),
                (#"{"events": [{"id": "e", "start": "2026-12-05T18:00:00+01:00", "end": "2026-12-05T17:00:00+01:00", "playlist": ["x.mp4"]}]}"#, "events[0].end"),
                (#"{"slots": [{"id": "a", "start": "09:00", "end": "10:00", "playlist": ["x.mp4"]}, {"id": "a", "start": "11:00", "end": "12:00", "playlist": ["x.mp4"]}]}"#, "slots[1].id"),
                (#"{"slot": []}"#, "slot"),
            ]
            for (body, field) in bad {
                let r = refusal(try await client.execute(uri: "/schedule", method: .put, headers: headers(["Content-Type": "application/json"]), body: ByteBuffer(string: body)))
                #expect(r.status == 400 && r.field == field, "\(body): \(r)")
            }
            #expect(try await client.execute(uri: "/schedule", method: .get).status == .notFound)
            let clip = try Fixtures.path("counter.mp4")
            let body = #"{"timeZone": "Europe/Berlin", "slots": [{"id": "always", "start": "00:00", "end": "24:00", "playlist": ["\#(clip)"]}]}"#
            let put = try await client.execute(uri: "/schedule", method: .put, headers: headers(["Content-Type": "application/json"]), body: ByteBuffer(string: body))
            #expect(put.status == .ok)
            let shown = try await client.execute(uri: "/schedule", method: .get)
            let o = try #require(try JSONSerialization.jsonObject(with: Data(buffer: shown.body)) as? [String: Any])
            let slot = try #require((o["slots"] as? [[String: Any]])?.first)
            #expect(o["timeZone"] as? String == "Europe/Berlin" && slot["start"] as? String == "00:00" && slot["end"] as? String == "24:00")
            #expect(slot["days"] as? [String] == ["mon", "tue", "wed", "thu", "fri", "sat", "sun"])
            let now = try await client.execute(uri: "/schedule/now", method: .get)
            let n = try #require(try JSONSerialization.jsonObject(with: Data(buffer: now.body)) as? [String: Any])
            #expect(n["rule"] as? String == "slot" && n["id"] as? String == "always")
        }
    }

    @Test("schedule check: a config's schedule read, what plays and the next changes printed; a mistake named with its file and field")
    func check() throws {
        let scratch = try Scratch()
        let good = scratch.path("good.json"), bad = scratch.path("bad.json")
        try #"{"playlist": ["a.mp4"], "schedule": {"timeZone": "Europe/Berlin", "slots": [{"id": "day", "days": ["mon"], "start": "09:00", "end": "17:00", "playlist": ["b.mp4", "c.mp4"]}]}}"#
            .write(toFile: good, atomically: true, encoding: .utf8)
        try #"{"slots": [{"id": "day", "start": "9am", "end": "17:00", "playlist": ["b.mp4"]}]}"#.write(toFile: bad, atomically: true, encoding: .utf8)
        let r = try Proc.run(try ScanoutBinary.path(), ["schedule", "check", good, "--at", "2026-11-30T08:00:00+01:00", "--count", "2"])
        #expect(r.status == 0)
        #expect(r.stdoutText.contains("at 2026-11-30T08:00:00+01:00: default (the config's playlist)"))
        #expect(r.stdoutText.contains("  2026-11-30T09:00:00+01:00  slot day (2 items)") && r.stdoutText.contains("  2026-11-30T17:00:00+01:00  default"))
        let b = try Proc.run(try ScanoutBinary.path(), ["schedule", "check", bad])
        #expect(b.status == 1 && b.stderrText.contains("bad.json") && b.stderrText.contains("slots[0].start: must be a local time"))
    }
}

@Suite("service: a reload of the config file takes its schedule")
struct ScheduleReloadTests {
    @Test("SIGHUP's reload: the file's schedule replaces the running one at once; without one any more, the config's playlist plays again")
    func reloadTakesTheSchedule() async throws {
        let (a, b, c) = (try Fixtures.path("counter.mp4"), try Fixtures.path("counter_open.ts"), try Fixtures.path("counter_live.ts"))
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("scanout-schedule-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        func write(_ schedule: String?) throws {
            let s = schedule.map { #", "schedule": {"slots": [{"id": "always", "start": "00:00", "end": "24:00", "playlist": ["\#($0)"]}]}"# } ?? ""
            try #"{"unixSocket": null, "output": "headless", "repeat": "all", "playlist": ["\#(a)"]\#(s)}"#.write(toFile: file, atomically: true, encoding: .utf8)
        }
        try write(b)
        let config = try ServiceConfig.load(file: file)
        let (player, api) = try await ScanoutServer(config: config, logLevel: LogLevelControl(.error), logger: Logger(label: "test"),
                                                    makePipeline: { PlaybackPipeline(display: HeadlessDisplay()) }).assemble()
        defer { player.shutdown() }
        #expect(player.snapshot.playlist.map(\.source) == [b])
        let reloader = ConfigReloader(api: api, logLevel: LogLevelControl(.error), logger: Logger(label: "test"))
        try write(c)
        await reloader.reload()
        #expect(player.snapshot.playlist.map(\.source) == [c] && api.scheduler.schedule?.slots.first?.playlist.map(\.source) == [c])
        try write(nil)
        await reloader.reload()
        #expect(api.scheduler.schedule == nil && player.snapshot.playlist.map(\.source) == [a])
    }
}
