import Foundation
import Hummingbird
import ScanoutPlayer

extension ControlAPI {
    /// `POST /subtitles {enabled, delay, track}` (`Wire.SubtitlesRequest`); answers with the state.
    func subtitleRoutes() -> RouteCollection<ServiceRequestContext> {
        let routes = RouteCollection(context: ServiceRequestContext.self)
        routes.post("/subtitles") { [self] request, context in
            let change = try await body(request, context, as: Wire.SubtitlesRequest.self)
            return jsonResponse(Wire.State(try await perform { e in
                try e.setSubtitles(enabled: change.enabled, delay: change.delay, track: change.track)
                return e.snapshot()
            }))
        }
        return routes
    }
}
