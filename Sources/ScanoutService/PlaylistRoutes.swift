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
        addPlaylistRoutes(to: routes, at: "") { [self] _ in player }
        return routes
    }

    /// The playlist routes under `prefix` (`""`, or `/zones/:id` for a zone's), each acting on
    /// the player `target` names for the request.
    func addPlaylistRoutes(to routes: RouteCollection<ServiceRequestContext>, at prefix: String,
                           target: @escaping @Sendable (ServiceRequestContext) throws -> Player) {
        routes.post("\(prefix)/load") { [self] request, context in
            let load = try await body(request, context, as: Wire.LoadRequest.self)
            let (start, autoplay, repeatMode) = (load.start, load.autoplay, load.repeatMode)
            let playlist = try await authorize(load.items, field: load.single ? "" : "playlist")
            keepOffline(playlist)
            let snapshot = try await perform(on: try target(context)) { e in
                if let repeatMode { e.setRepeat(repeatMode) }
                try e.load(playlist, start: start, autoplay: autoplay)
                return e.snapshot()
            }
            return jsonResponse(Wire.State(snapshot))
        }
        routes.get("\(prefix)/playlist") { _, context in
            jsonResponse(Wire.Playlist(try target(context).snapshot))
        }
        routes.put("\(prefix)/playlist") { [self] request, context in
            let put = try await body(request, context, as: Wire.PlaylistRequest.self)
            let (start, autoplay) = (put.start, put.autoplay)
            let items = try await authorize(put.items, field: "items")
            keepOffline(items)
            let s = try await perform(on: try target(context)) { e in try e.load(items, start: start, autoplay: autoplay); return e.snapshot() }
            return jsonResponse(Wire.Playlist(s))
        }
        routes.post("\(prefix)/playlist/next") { [self] request, context in
            try await empty(request, context)
            return jsonResponse(Wire.State(try await perform(on: try target(context)) { e in try e.next(); return e.snapshot() }))
        }
        routes.post("\(prefix)/playlist/previous") { [self] request, context in
            try await empty(request, context)
            return jsonResponse(Wire.State(try await perform(on: try target(context)) { e in try e.previous(); return e.snapshot() }))
        }
        routes.post("\(prefix)/playlist/jump") { [self] request, context in
            let index = try await body(request, context, as: Wire.JumpRequest.self).index
            return jsonResponse(Wire.State(try await perform(on: try target(context)) { e in try e.jump(to: index); return e.snapshot() }))
        }
        routes.put("\(prefix)/repeat") { [self] request, context in
            let mode = try await body(request, context, as: Wire.RepeatRequest.self).mode
            return jsonResponse(Wire.State(try await perform(on: try target(context)) { e in e.setRepeat(mode); return e.snapshot() }))
        }
    }
}
