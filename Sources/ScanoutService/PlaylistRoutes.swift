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
            var o = try await body(request, context, fields: ["source", "token", "playerType", "scaling", "rotation", "overlay", "playlist", "start", "autoplay", "repeat", "alang", "aid"] + SubtitleFields.names)
            var items: [PlaylistItem]
            var field = "playlist"
            if o.has("source") || o.has("token") {
                guard !o.has("playlist") else { throw APIError.badRequest("playlist", "give either source (or token) or playlist, not both") }
                items = [try parseItem(&o)]
                field = ""
            } else if let list = try o.array("playlist") {
                items = try parsePlaylist(list, field: "playlist")
                guard !items.isEmpty else { throw APIError.badRequest("playlist", "must not be empty") }
            } else {
                throw APIError.badRequest("source", "is required (or token, or playlist)")
            }
            let start = try o.int("start", range: 0...Int.max) ?? 0
            guard start < items.count else { throw APIError(.notFound, "start: item \(start) does not exist (the playlist has \(items.count))", field: "start") }
            let autoplay = try o.bool("autoplay") ?? true
            let repeatMode = try o.string("repeat", allowed: RepeatMode.allCases.map(\.rawValue)).flatMap(RepeatMode.init(rawValue:))
            try o.rejectUnknown()
            let playlist = try await authorize(items, field: field)
            keepOffline(playlist)
            let snapshot = try await perform { e in
                if let repeatMode { e.setRepeat(repeatMode) }
                try e.load(playlist, start: start, autoplay: autoplay)
                return e.snapshot()
            }
            return jsonResponse(WireFormat.state(snapshot))
        }
        routes.get("/playlist") { [self] _, _ in
            let s = player.snapshot
            return jsonResponse(["items": s.playlist.map(itemJSON), "item": s.index ?? NSNull(), "repeat": s.repeatMode.rawValue])
        }
        routes.put("/playlist") { [self] request, context in
            var o = try await body(request, context, fields: ["items", "start", "autoplay"])
            let parsed = try parsePlaylist(try o.array("items", required: true)!, field: "items")
            guard !parsed.isEmpty else { throw APIError.badRequest("items", "must not be empty") }
            let start = try o.int("start", range: 0...Int.max) ?? 0
            guard start < parsed.count else { throw APIError(.notFound, "start: item \(start) does not exist (the playlist has \(parsed.count))", field: "start") }
            let autoplay = try o.bool("autoplay") ?? true
            try o.rejectUnknown()
            let items = try await authorize(parsed, field: "items")
            keepOffline(items)
            let s = try await perform { e in try e.load(items, start: start, autoplay: autoplay); return e.snapshot() }
            return jsonResponse(["items": s.playlist.map(itemJSON), "item": s.index ?? NSNull(), "repeat": s.repeatMode.rawValue])
        }
        routes.post("/playlist/next") { [self] request, context in
            try await empty(request, context)
            return jsonResponse(WireFormat.state(try await perform { e in try e.next(); return e.snapshot() }))
        }
        routes.post("/playlist/previous") { [self] request, context in
            try await empty(request, context)
            return jsonResponse(WireFormat.state(try await perform { e in try e.previous(); return e.snapshot() }))
        }
        routes.post("/playlist/jump") { [self] request, context in
            var o = try await body(request, context, fields: ["index"])
            let index = try o.int("index", required: true, range: 0...1_000_000)!
            try o.rejectUnknown()
            return jsonResponse(WireFormat.state(try await perform { e in try e.jump(to: index); return e.snapshot() }))
        }
        routes.put("/repeat") { [self] request, context in
            var o = try await body(request, context, fields: ["repeat"])
            let mode = RepeatMode(rawValue: try o.string("repeat", required: true, allowed: RepeatMode.allCases.map(\.rawValue))!)!
            try o.rejectUnknown()
            return jsonResponse(WireFormat.state(try await perform { e in e.setRepeat(mode); return e.snapshot() }))
        }
        return routes
    }
}
