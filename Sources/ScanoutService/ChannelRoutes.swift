import Foundation
import Hummingbird
import ScanoutPlayer

extension ControlAPI {
    /// `GET /channels`, `POST /channel {"id"}`, `POST /channel/next`, `POST /channel/previous`.
    func addChannelRoutes(to router: Router<ServiceRequestContext>) {
        router.get("/channels") { [self] _, _ in
            let s = player.snapshot
            let tuned = channels.tuned
            let list = channels.channels.map { channels.json($0, snapshot: s, tuned: tuned) }
            let current = list.first { $0["current"] as? Bool == true }?["id"]
            return jsonResponse(["channels": list, "current": current ?? NSNull()])
        }
        router.post("/channel") { [self] request, context in
            var o = try await body(request, context, fields: ["id"])
            let id = try o.string("id", required: true)!
            try o.rejectUnknown()
            guard let channel = channels.channel(id: id) else {
                throw APIError(.notFound, "id: no channel \"\(id)\" (GET /channels lists them)", field: "id")
            }
            return try await tune(channel)
        }
        router.post("/channel/next") { [self] request, context in
            try await empty(request, context)
            return try await tune(try neighbour(1))
        }
        router.post("/channel/previous") { [self] request, context in
            try await empty(request, context)
            return try await tune(try neighbour(-1))
        }
    }

    private func neighbour(_ step: Int) throws -> Channel {
        guard let c = channels.channel(step: step) else {
            throw APIError(.conflict, "channels: the channel list is empty", field: "channels")
        }
        return c
    }

    /// Loads `channel`'s URL as the only item and plays it, as `POST /load` would (its token
    /// rules included); `channelChanged` comes first. The answer is the state, with the channel.
    private func tune(_ channel: Channel) async throws -> Response {
        let items = try await authorize([PlaylistItem(source: channel.url)], field: "")
        channels.tune(channel)
        let snapshot = try await perform { e in
            e.report(.channelChanged(id: channel.id, name: channel.name, source: channel.url))
            try e.load(items, start: 0, autoplay: true)
            return e.snapshot()
        }
        var json = WireFormat.state(snapshot)
        json["channel"] = channels.json(channel, snapshot: snapshot, tuned: channel.id)
        return jsonResponse(json)
    }
}
