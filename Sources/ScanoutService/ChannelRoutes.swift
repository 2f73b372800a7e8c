import Foundation
import Hummingbird
import ScanoutDemux
import ScanoutPlayer

extension ControlAPI {
    /// `GET /channels`, `POST /channel {"id"}`, `POST /channel/next`, `POST /channel/previous`.
    func channelRoutes() -> RouteCollection<ServiceRequestContext> {
        let routes = RouteCollection(context: ServiceRequestContext.self)
        routes.get("/channels") { [self] _, _ in
            let s = player.snapshot
            let tuned = channels.tuned
            let list = channels.channels.map { Wire.Channel($0, snapshot: s, tuned: tuned) }
            return jsonResponse(Wire.Channels(channels: list, current: list.first(where: \.current)?.id))
        }
        routes.post("/channel") { [self] request, context in
            let id = try await body(request, context, as: Wire.ChannelRequest.self).id
            guard let channel = channels.channel(id: id) else {
                throw APIError(.notFound, "id: no channel \"\(id)\" (GET /channels lists them)", field: "id")
            }
            return try await tune(channel)
        }
        routes.post("/channel/next") { [self] request, context in
            try await empty(request, context)
            return try await tune(try neighbour(1))
        }
        routes.post("/channel/previous") { [self] request, context in
            try await empty(request, context)
            return try await tune(try neighbour(-1))
        }
        return routes
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
        let snapshot = try await load(channel, autoplay: true)
        var state = Wire.State(snapshot)
        state.channel = Wire.Channel(channel, snapshot: snapshot, tuned: channel.id)
        return jsonResponse(state)
    }

    /// Tunes `channel` (playing it unless `autoplay` is false) and saves it as the one tuned last.
    private func load(_ channel: Channel, autoplay: Bool) async throws -> PlayerSnapshot {
        let items = try await authorize([PlaylistItem(source: channel.url)], field: "")
        channels.tune(channel)
        let snapshot = try await perform { e in
            e.report(.channelChanged(id: channel.id, name: channel.name, source: channel.url))
            try e.load(items, start: 0, autoplay: autoplay)
            return e.snapshot()
        }
        tunedChannelFile?.record(channel.id) { [logger] error in
            logger.warning("state: the channel tuned was not saved: \(error)")
        }
        return snapshot
    }

    /// The state directory's record of the channel tuned last; nil without a state directory.
    private var tunedChannelFile: TunedChannelFile? {
        currentConfig.stateDirectory(environment: ProcessInfo.processInfo.environment).path.map { TunedChannelFile(directory: $0) }
    }

    /// At start, with a channel list and no playlist: tunes the channel tuned last (kept in the
    /// state directory) while the list still has it, else the list's first, playing it unless
    /// `autoplay` is false. Nothing with an empty list (SAP channels come later). A channel that
    /// cannot be tuned is logged; the service stays up, idle.
    public func tuneAtStart(autoplay: Bool) async {
        let list = channels.channels
        guard let first = list.first else { return }
        var chosen = first
        var why = "the list's first"
        if let file = tunedChannelFile {
            do {
                if let id = try file.read() {
                    if let saved = list.first(where: { $0.id == id }) {
                        chosen = saved
                        why = "the channel tuned last"
                    } else {
                        why = "the list's first (the channel tuned last, \(id), is no longer listed)"
                    }
                }
            } catch {
                why = "the list's first (\(file.file): \(error))"
            }
        }
        logger.notice("channels: tuning \(chosen.id) (\(chosen.name)), \(why)")
        do {
            _ = try await load(chosen, autoplay: autoplay)
        } catch {
            logger.error("channels: \(chosen.id) could not be tuned: \(error)")
        }
    }
}
