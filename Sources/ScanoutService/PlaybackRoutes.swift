import Foundation
import HTTPTypes
import Hummingbird
import Logging
import ScanoutPlayer

extension ControlAPI {
    /// Transport: `POST /play`, `/pause`, `/stop`, `/seek {position, exact}`, `PUT /rate {rate}`,
    /// `POST /volume {volume, mute}`, and for live inputs `POST /timeshift/seek {relative | absolute}`
    /// and `POST /timeshift/live`. Each answers with the state (`/volume` with the sound's settings).
    func playbackRoutes() -> RouteCollection<ServiceRequestContext> {
        let routes = RouteCollection(context: ServiceRequestContext.self)
        addPlaybackRoutes(to: routes, at: "") { [self] _ in player }
        return routes
    }

    /// The transport routes under `prefix` (`""`, or `/zones/:id` for a zone's), each acting on
    /// the player `target` names for the request.
    func addPlaybackRoutes(to routes: RouteCollection<ServiceRequestContext>, at prefix: String,
                           target: @escaping @Sendable (ServiceRequestContext) throws -> Player) {
        routes.post("\(prefix)/play") { [self] request, context in
            try await empty(request, context)
            return jsonResponse(Wire.State(try await perform(on: try target(context)) { e in try e.play(); return e.snapshot() }))
        }
        routes.post("\(prefix)/pause") { [self] request, context in
            try await empty(request, context)
            return jsonResponse(Wire.State(try await perform(on: try target(context)) { e in try e.pause(); return e.snapshot() }))
        }
        routes.post("\(prefix)/stop") { [self] request, context in
            try await empty(request, context)
            return jsonResponse(Wire.State(try await perform(on: try target(context)) { e in e.stop(); return e.snapshot() }))
        }
        routes.post("\(prefix)/seek") { [self] request, context in
            let seek = try await body(request, context, as: Wire.SeekRequest.self)
            let (position, exact) = (seek.position, seek.exact)
            return jsonResponse(Wire.State(try await perform(on: try target(context)) { e in try e.seek(to: position, exact: exact); return e.snapshot() }))
        }
        routes.post("\(prefix)/timeshift/seek") { [self] request, context in
            let seek = try await body(request, context, as: Wire.TimeshiftSeekRequest.self)
            let (relative, absolute) = (seek.relative, seek.absolute)
            guard (relative == nil) != (absolute == nil) else {
                throw APIError(.badRequest, "body: give exactly one of relative (seconds from the frame on screen) and absolute (stream time, seconds)", field: "body")
            }
            return jsonResponse(Wire.State(try await perform(on: try target(context)) { e in
                if let relative { try e.seekTimeshift(relative: relative) } else { try e.seekTimeshift(to: absolute!) }
                return e.snapshot()
            }))
        }
        routes.post("\(prefix)/timeshift/live") { [self] request, context in
            try await empty(request, context)
            return jsonResponse(Wire.State(try await perform(on: try target(context)) { e in try e.playLive(); return e.snapshot() }))
        }
        routes.put("\(prefix)/rate") { [self] request, context in
            let rate = try await body(request, context, as: Wire.RateRequest.self).rate
            if rate > 2 { logger.warning("rate \(rate)x is above 2x: frames may be dropped") }
            var state = Wire.State(try await perform(on: try target(context)) { e in try e.setRate(rate); return e.snapshot() })
            if rate > 2 { state.warning = "rate above 2x: frames may be dropped on this machine" }
            return jsonResponse(state)
        }
        routes.post("\(prefix)/volume") { [self] request, context in
            let change = try await body(request, context, as: Wire.VolumeRequest.self)
            let (volume, mute) = (change.volume, change.mute)
            guard volume != nil || mute != nil else { throw APIError.badRequest("volume", "give volume (0...100), mute (true/false) or both") }
            let audio = try await perform(on: try target(context)) { e in
                e.setVolume(volume ?? e.configuration.audio.volume, muted: mute ?? e.configuration.audio.muted)
                return e.configuration.audio
            }
            // The service's sound settings are the main zone's.
            if prefix.isEmpty { config.withLock { $0.audio.volume = audio.volume; $0.audio.muted = audio.muted } }
            return jsonResponse(Wire.Volume(volume: audio.volume, mute: audio.muted))
        }
    }
}
