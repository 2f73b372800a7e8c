import Foundation
import HTTPTypes
import Hummingbird
import Logging
import ScanoutPlayer

extension ControlAPI {
    /// `POST /load` (one source or a playlist), `GET|PUT /playlist`, `POST /playlist/next`,
    /// `/playlist/previous`, `/playlist/jump {index}`, `PUT /repeat {repeat}`.
    func playlistRoutes() -> RouteCollection<ServiceRequestContext> {
        let routes = RouteCollection(context: ServiceRequestContext.self)
        routes.post("/load") { [self] request, context in
            let load = try await body(request, context, as: Wire.LoadRequest.self)
            let (start, autoplay, repeatMode) = (load.start, load.autoplay, load.repeatMode)
            let playlist = try await authorize(load.items, field: load.single ? "" : "playlist")
            keepOffline(playlist)
            let snapshot = try await perform { e in
                if let repeatMode { e.setRepeat(repeatMode) }
                try e.load(playlist, start: start, autoplay: autoplay)
                return e.snapshot()
            }
            return jsonResponse(Wire.State(snapshot))
        }
        routes.get("/playlist") { [self] _, _ in
            jsonResponse(Wire.Playlist(player.snapshot))
        }
        routes.put("/playlist") { [self] request, context in
            let put = try await body(request, context, as: Wire.PlaylistRequest.self)
            let (start, autoplay) = (put.start, put.autoplay)
            let items = try await authorize(put.items, field: "items")
            keepOffline(items)
            let s = try await perform { e in try e.load(items, start: start, autoplay: autoplay); return e.snapshot() }
            return jsonResponse(Wire.Playlist(s))
        }
        routes.post("/playlist/next") { [self] request, context in
            try await empty(request, context)
            return jsonResponse(Wire.State(try await perform { e in try e.next(); return e.snapshot() }))
        }
        routes.post("/playlist/previous") { [self] request, context in
            try await empty(request, context)
            return jsonResponse(Wire.State(try await perform { e in try e.previous(); return e.snapshot() }))
        }
        routes.post("/playlist/jump") { [self] request, context in
            let index = try await body(request, context, as: Wire.JumpRequest.self).index
            return jsonResponse(Wire.State(try await perform { e in try e.jump(to: index); return e.snapshot() }))
        }
        routes.put("/repeat") { [self] request, context in
            let mode = try await body(request, context, as: Wire.RepeatRequest.self).mode
            return jsonResponse(Wire.State(try await perform { e in e.setRepeat(mode); return e.snapshot() }))
        }
        return routes
    }
}
