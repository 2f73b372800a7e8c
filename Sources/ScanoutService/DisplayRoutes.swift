import Foundation
import Hummingbird
import ScanoutPlayer

extension ControlAPI {
    /// `GET|POST /display`: the screens' power. Off, the screens standby (KMS: every CRTC
    /// inactive) and playback pauses, to go on when they are on again.
    func displayRoutes() -> RouteCollection<ServiceRequestContext> {
        let routes = RouteCollection(context: ServiceRequestContext.self)
        routes.get("/display") { [self] _, _ in jsonResponse(Wire.DisplayPower(power: player.snapshot.displayOn ? "on" : "off")) }
        routes.post("/display") { [self] request, context in
            let on = try await body(request, context, as: Wire.DisplayPowerRequest.self).on
            let now = try await player.perform { e in
                try e.setDisplayPower(on: on)
                return e.displayOn
            }
            return jsonResponse(Wire.DisplayPower(power: now ? "on" : "off"))
        }
        return routes
    }
}

extension Wire {
    struct DisplayPower: Encodable, Sendable {
        var power: String
    }

    /// `{"power": "on" | "off"}`.
    struct DisplayPowerRequest: RequestBody {
        enum Field: String, CodingKey, CaseIterable { case power }
        var on: Bool

        init(from decoder: any Swift.Decoder) throws {
            let c = try decoder.container(keyedBy: Field.self)
            guard let p = try c.decodeIfPresent(String.self, forKey: .power, oneOf: ["on", "off"]) else {
                throw APIError.badRequest(c.name(.power), "is required: \"on\" or \"off\"")
            }
            on = p == "on"
        }
    }
}
