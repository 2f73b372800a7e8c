import Foundation
import HTTPTypes
import Hummingbird
import Logging
import ScanoutPlayer

extension ControlAPI {
    /// `GET|PUT /config` (the runtime fields) and `GET|PUT /log-level`.
    func configRoutes() -> RouteCollection<ServiceRequestContext> {
        let routes = RouteCollection(context: ServiceRequestContext.self)
        routes.get("/config") { [self] _, _ in jsonResponse(Wire.Config(config.withLock { $0 })) }
        routes.put("/config") { [self] request, context in
            let change = try await body(request, context, as: Wire.ConfigChange.self).body
            var c = config.withLock { $0 }
            c.apply(change)
            let updated = c
            let repeatGiven = change.service.repeatMode != nil
            config.withLock { $0 = updated }
            logLevel.current = updated.logLevel
            _ = try await perform { e in
                e.adoptRuntimeSettings(of: updated)
                if repeatGiven { e.setRepeat(updated.repeatMode) }
                return 0
            }
            logger.info("configuration changed", metadata: ["fields": "\(change.given)"])
            return jsonResponse(Wire.Config(updated))
        }
        routes.get("/log-level") { [self] _, _ in jsonResponse(Wire.LogLevel(level: logLevel.current.rawValue)) }
        routes.put("/log-level") { [self] request, context in
            let level = try await body(request, context, as: Wire.LogLevelRequest.self).level
            logLevel.current = level
            config.withLock { $0.logLevel = level }
            return jsonResponse(Wire.LogLevel(level: level.rawValue))
        }
        return routes
    }
}
