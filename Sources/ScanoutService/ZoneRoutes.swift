import Foundation
import HTTPTypes
import Hummingbird
import Logging
import ScanoutDemux
import ScanoutPlayer
import ScanoutRender

extension ControlAPI {
    /// A screen of zones (config `layout`): `GET|PUT /layout`, `GET /zones`, `GET|PUT /zones/{id}`,
    /// `POST /zones/swap`, `PUT|DELETE /zones/{id}/text`, and every transport and playlist command
    /// of the top level under `/zones/{id}/` acting on that zone (the top-level ones act on the
    /// main zone). On a screen of one picture these answer 404. A body is checked before the
    /// zone is looked up (400 before 404), as every route with a body does.
    func zoneRoutes() -> RouteCollection<ServiceRequestContext> {
        let routes = RouteCollection(context: ServiceRequestContext.self)
        routes.get("/layout") { [self] _, _ in jsonResponse(Wire.Layout(try composed().layout)) }
        routes.put("/layout") { [self] request, context in
            var layout = try await body(request, context, as: Wire.LayoutRequest.self).layout
            let screen = try composed()
            let main = screen.layout.mainZone
            guard layout.mainZone == main else {
                throw APIError(.conflict, "main: the main zone is \"\(main ?? "")\" while the service runs (the top-level commands act on it); keep a zone of that id as main, or restart with another layout",
                               field: "main")
            }
            layout = try await authorize(try tuned(layout, on: screen))
            let (now, change) = try update(screen) { $0 = layout }
            logger.notice("layout: \(now.zones.count) zones", metadata: ["added": "\(change.added)", "removed": "\(change.removed)", "reloaded": "\(change.reloaded)"])
            return jsonResponse(Wire.Layout(now))
        }
        routes.get("/zones") { [self] _, _ in jsonResponse(try zoneList()) }
        routes.get("/zones/:id") { [self] _, context in jsonResponse(try zoneStatus(try zoneID(context))) }
        routes.put("/zones/:id") { [self] request, context in
            let patch = try await body(request, context, as: Wire.ZonePatch.self)
            let id = try zoneID(context)
            try change(zone: id) { patch.applied(to: $0) }
            return jsonResponse(try zoneStatus(id))
        }
        routes.post("/zones/swap") { [self] request, context in
            let swap = try await body(request, context, as: Wire.SwapRequest.self)
            let screen = try composed()
            for (field, id) in [("a", swap.a), ("b", swap.b)] where screen.layout.zone(id) == nil {
                throw APIError(.notFound, "\(field): no zone \"\(id)\" (GET /zones lists them)", field: field)
            }
            _ = try update(screen) { layout in
                guard let i = layout.zones.firstIndex(where: { $0.id == swap.a }), let j = layout.zones.firstIndex(where: { $0.id == swap.b }) else { return }
                let a = layout.zones[i], b = layout.zones[j]
                (layout.zones[i].x, layout.zones[i].y, layout.zones[i].width, layout.zones[i].height, layout.zones[i].z) = (b.x, b.y, b.width, b.height, b.z)
                (layout.zones[j].x, layout.zones[j].y, layout.zones[j].width, layout.zones[j].height, layout.zones[j].z) = (a.x, a.y, a.width, a.height, a.z)
            }
            return jsonResponse(try zoneList())
        }
        routes.put("/zones/:id/text") { [self] request, context in
            let text = try await body(request, context, as: Wire.TextRequest.self).text
            let id = try zoneID(context)
            try change(zone: id) { var z = $0; z.text = text; return z }
            return jsonResponse(try zoneStatus(id))
        }
        routes.delete("/zones/:id/text") { [self] _, context in
            let id = try zoneID(context)
            try change(zone: id) { var z = $0; z.text = nil; return z }
            return jsonResponse(try zoneStatus(id))
        }
        routes.post("/zones/:id/channel") { [self] request, context in
            let channelID = try await body(request, context, as: Wire.ZoneChannelRequest.self).id
            let id = try zoneID(context)
            guard let channel = channels.channel(id: channelID) else {
                throw APIError(.notFound, "id: no channel \"\(channelID)\" (GET /channels lists them)", field: "id")
            }
            let screen = try composed()
            let items = try await authorize([PlaylistItem(source: channel.url)], field: "")
            _ = try update(screen, loadPlaylists: false) { layout in
                guard let i = layout.zones.firstIndex(where: { $0.id == id }) else { return }
                layout.zones[i] = Self.tune(layout.zones[i], to: channel, items: items, canvas: screen.screen.canvas)
            }
            let player = try zonePlayer(context)
            _ = try await perform(on: player) { e in
                e.report(.channelChanged(id: channel.id, name: channel.name, source: channel.url))
                try e.load(items, start: 0, autoplay: true)
                return 0
            }
            return jsonResponse(try zoneStatus(id))
        }
        addPlaybackRoutes(to: routes, at: "/zones/:id") { [self] context in try zonePlayer(context) }
        addPlaylistRoutes(to: routes, at: "/zones/:id") { [self] context in try zonePlayer(context) }
        return routes
    }

    /// Puts a reloaded config's `layout` on the screen as `PUT /layout` does, but a zone whose
    /// channel or token is refused is left empty (and logged) instead of refusing the layout; a
    /// layout with another main zone is refused (logged), the running one kept.
    func reload(layout: ScreenLayout) async {
        guard let screen else { return }
        guard layout.mainZone == screen.layout.mainZone else {
            logger.error("reload: layout: the main zone stays \(screen.layout.mainZone ?? "") while the service runs; the running layout is kept")
            return
        }
        do {
            var next = try tuned(layout, on: screen, lenient: true)
            for (i, zone) in next.zones.enumerated() where !zone.playlist.isEmpty {
                next.zones[i].playlist = try await authorize(zone.playlist, field: "layout.zones.\(zone.id).playlist") { [logger] field, error in
                    logger.error("reload: \(field): \(error); the item is left out")
                }
                keepOffline(next.zones[i].playlist)
            }
            let authorised = next
            let (now, change) = try update(screen) { $0 = authorised }
            logger.notice("reload: layout of \(now.zones.count) zones", metadata: ["added": "\(change.added)", "removed": "\(change.removed)", "reloaded": "\(change.reloaded)"])
        } catch {
            logger.error("reload: layout: \(error); the running layout is kept")
        }
    }

    /// The screen of zones; 404 on a screen of one picture.
    func composed() throws -> ScreenPlayer {
        guard let screen else {
            throw APIError(.notFound, "layout: the service shows one picture (no layout is configured; give `layout` in the config and restart)",
                           field: "layout")
        }
        return screen
    }

    /// The zone the request's path names (404 when the screen has none of that id).
    func zoneID(_ context: ServiceRequestContext) throws -> String {
        let id = context.parameters.get("id") ?? ""
        guard try composed().layout.zone(id) != nil else {
            throw APIError(.notFound, "id: no zone \"\(id)\" (GET /zones lists them)", field: "id")
        }
        return id
    }

    /// The player of the zone the request's path names.
    func zonePlayer(_ context: ServiceRequestContext) throws -> Player {
        let id = try zoneID(context)
        guard let player = try composed().player(zone: id) else {
            throw APIError(.notFound, "id: no zone \"\(id)\" (GET /zones lists them)", field: "id")
        }
        return player
    }

    /// Changes zone `id` with `body` (its place, look or text), its player going on as it was.
    func change(zone id: String, _ body: @escaping (ScreenLayout.Zone) -> ScreenLayout.Zone) throws {
        _ = try update(try composed()) { layout in
            guard let i = layout.zones.firstIndex(where: { $0.id == id }) else { return }
            layout.zones[i] = body(layout.zones[i])
        }
    }

    /// Puts a changed layout on the screen (one change at a time) and keeps it as the running
    /// config's `layout`; a layout that gives two zones the sound is refused (409).
    func update(_ screen: ScreenPlayer, loadPlaylists: Bool = true, _ body: (inout ScreenLayout) throws -> Void) throws -> (ScreenLayout, ScreenPlayer.Change) {
        let (layout, change) = try screen.update(loadPlaylists: loadPlaylists) { layout in
            try body(&layout)
            guard layout.zones.filter(\.audio).count <= 1 else {
                throw APIError(.conflict, "audio: one zone at most has the sound (\(layout.zones.filter(\.audio).map(\.id).joined(separator: ", ")) would)",
                               field: "audio")
            }
        }
        config.withLock { $0.layout = layout }
        return (layout, change)
    }

    /// `layout` with each zone that names a channel tuned to it (`tune`); a channel the list
    /// does not have refuses the layout (400, the zone's `channel` named), or with `lenient` is
    /// logged and leaves the zone empty.
    func tuned(_ layout: ScreenLayout, on screen: ScreenPlayer?, lenient: Bool = false) throws -> ScreenLayout {
        var out = layout
        let canvas = screen?.screen.canvas ?? layout.canvas(outputWidth: layout.width ?? 1920, outputHeight: layout.height ?? 1080)
        for (i, zone) in layout.zones.enumerated() {
            guard let id = zone.channel else { continue }
            guard let channel = channels.channel(id: id) else {
                let message = "zones[\(i)].channel: no channel \"\(id)\" (GET /channels lists them)"
                guard lenient else { throw APIError(.badRequest, message, field: "zones[\(i)].channel") }
                logger.error("layout: \(message); the zone is left empty")
                out.zones[i].playlist = []
                continue
            }
            out.zones[i] = Self.tune(zone, to: channel, items: [PlaylistItem(source: channel.url)], canvas: canvas)
        }
        return out
    }

    /// `zone` playing `channel` (`items`, its URL authorised): labelled with the channel's name
    /// along its bottom unless it has text of its own (a label it had from another channel is
    /// replaced).
    static func tune(_ zone: ScreenLayout.Zone, to channel: Channel, items: [PlaylistItem], canvas: Canvas) -> ScreenLayout.Zone {
        var z = zone
        let labelled = zone.text == nil || zone.channel.map { old in zone.text?.text == old || zone.text?.placement == .bottom } ?? false
        z.channel = channel.id
        z.playlist = items
        z.repeatMode = .none
        if labelled {
            let h = z.rect(canvasWidth: canvas.width, canvasHeight: canvas.height).height
            z.text = ZoneText(text: channel.name, size: min(48, max(12, h / 12)), placement: .bottom)
        }
        return z
    }

    /// `layout` with every zone's items authorised (`authorize(_:field:)`): a token that does not
    /// verify refuses the whole layout, the item's field named (`zones[1].playlist[0].token`).
    func authorize(_ layout: ScreenLayout) async throws -> ScreenLayout {
        var out = layout
        for (i, zone) in layout.zones.enumerated() where !zone.playlist.isEmpty {
            out.zones[i].playlist = try await authorize(zone.playlist, field: "zones[\(i)].playlist")
            keepOffline(out.zones[i].playlist)
        }
        return out
    }

    func zoneList() throws -> Wire.ZoneList {
        let screen = try composed()
        let size = screen.screen.canvas
        let main = screen.layout.mainZone ?? ""
        let zones = screen.placements().map { p in
            Wire.ZoneStatus(id: p.id, main: p.id == main, rect: Wire.Rect(p.rect), z: p.z, state: Wire.State(p.player.snapshot))
        }
        return Wire.ZoneList(width: size.width, height: size.height, main: main, zones: zones)
    }

    func zoneStatus(_ id: String) throws -> Wire.ZoneStatus {
        guard let zone = try zoneList().zones.first(where: { $0.id == id }) else {
            throw APIError(.notFound, "id: no zone \"\(id)\" (GET /zones lists them)", field: "id")
        }
        return zone
    }
}
