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
        routes.get("/stats") { [self] _, _ in jsonResponse(Wire.Stats(player.snapshot)) }
        routes.get("/metrics") { [self] _, _ in
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; version=0.0.4"
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: metrics.render(player.snapshot))))
        }
        return routes
    }
}
