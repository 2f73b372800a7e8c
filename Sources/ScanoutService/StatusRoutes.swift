import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ScanoutPlayer

extension ControlAPI {
    /// `GET /version`, `GET /health` (503 while the service is down), `GET /state`, `GET /stats`,
    /// `GET /metrics` (Prometheus text).
    func statusRoutes() -> RouteCollection<ServiceRequestContext> {
        let routes = RouteCollection(context: ServiceRequestContext.self)
        routes.get("/version") { _, _ in jsonResponse(Wire.Version(version: ScanoutVersion.string)) }
        routes.get("/health") { [self] _, _ in
            let health = Wire.Health(player.snapshot)
            return jsonResponse(health, status: health.up ? .ok : .serviceUnavailable)
        }
        routes.get("/state") { [self] _, _ in jsonResponse(Wire.State(player.snapshot)) }
        routes.get("/stats") { [self] _, _ in jsonResponse(stats()) }
        routes.get("/metrics") { [self] _, _ in
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; version=0.0.4"
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: metrics.render(player.snapshot))))
        }
        return routes
    }

    /// `/stats`: the player's figures; on a screen of zones, the main zone's, with the screen's
    /// and every zone's.
    func stats() -> Wire.Stats {
        var stats = Wire.Stats(player.snapshot)
        if let screen {
            let canvas = screen.screen.canvas
            stats.screen = Wire.ScreenStats(width: canvas.width, height: canvas.height, composed: screen.screen.composed)
            stats.zones = screen.placements().map { Wire.ZoneStats(id: $0.id, stats: Wire.Stats($0.player.snapshot), picture: Wire.Picture(screen.watch(zone: $0.id))) }
        }
        if let fleet = fleet.withLock({ $0 }) {
            let c = fleet.counts
            stats.mqtt = Wire.FleetStats(connected: fleet.isConnected, connections: c.connections, commands: c.commands, forwarded: c.forwarded,
                                         acknowledged: c.acknowledged, queued: fleet.queue.count, stored: fleet.queue.store != nil)
        }
        return stats
    }
}
