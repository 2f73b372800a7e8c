import Foundation
import Hummingbird
import ScanoutPlayer

extension ControlAPI {
    /// `GET|PUT /schedule`, `GET /schedule/now`: what plays when (`Schedule`), and what plays
    /// now and why.
    func scheduleRoutes() -> RouteCollection<ServiceRequestContext> {
        let routes = RouteCollection(context: ServiceRequestContext.self)
        routes.get("/schedule") { [self] _, _ in
            guard let s = scheduler.schedule else { throw Self.noSchedule }
            return jsonResponse(Wire.ScheduleShown(schedule: s))
        }
        routes.put("/schedule") { [self] request, context in
            let body = try await body(request, context, as: Wire.ScheduleRequest.self)
            let s = try await authorize(body.schedule)
            scheduler.replace(s)
            startSchedule()
            await scheduler.turn()
            return jsonResponse(Wire.ScheduleShown(schedule: s))
        }
        routes.get("/schedule/now") { [self] _, _ in
            guard let (choice, next) = scheduler.now(), let s = scheduler.schedule else { throw Self.noSchedule }
            let fallback = scheduler.fallback
            return jsonResponse(Wire.ScheduleNow(
                rule: choice.rule.kind, id: choice.rule.id, playlist: (choice.playlist.isEmpty ? fallback : choice.playlist).map(Wire.Item.init),
                since: choice.since.map { ISOTime.format($0, in: s.timeZone) }, until: choice.until.map { ISOTime.format($0, in: s.timeZone) },
                power: choice.power ? "on" : "off",
                next: next.map { ISOTime.format($0.at, in: s.timeZone) }, nextRule: next?.rule.kind))
        }
        return routes
    }

    static let noSchedule = APIError(.notFound, "no schedule is set (config `schedule`, or PUT /schedule)", field: "schedule")

    /// `s` with every playlist's items checked (content tokens), each refusal naming its item.
    func authorize(_ s: Schedule, onRefused: ((String, any Error) -> Void)? = nil) async throws -> Schedule {
        var out = s
        out.defaultPlaylist = try await authorize(s.defaultPlaylist, field: "default", onRefused: onRefused)
        for i in s.slots.indices { out.slots[i].playlist = try await authorize(s.slots[i].playlist, field: "slots[\(i)].playlist", onRefused: onRefused) }
        for i in s.events.indices { out.events[i].playlist = try await authorize(s.events[i].playlist, field: "events[\(i)].playlist", onRefused: onRefused) }
        return out
    }

    /// Starts the schedule's loop (once).
    func startSchedule() {
        let start = scheduleTask.withLock { running in
            defer { running = true }
            return !running
        }
        if start { Task { [scheduler] in await scheduler.run() } }
    }
}
