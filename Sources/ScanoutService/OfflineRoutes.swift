import Foundation
import HTTPTypes
import Hummingbird
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ScanoutOffline
import ScanoutPlayer

extension ControlAPI {
    /// `GET /downloads`, `POST /downloads {source, token?, maxBitrate? | maxHeight?}`,
    /// `GET|DELETE /downloads/ID`, `POST /downloads/ID/pause`, `POST /downloads/ID/resume`.
    func downloadRoutes() -> RouteCollection<ServiceRequestContext> {
        let routes = RouteCollection(context: ServiceRequestContext.self)
        routes.get("/downloads") { [self] _, _ in
            let list = try Self.offlineAnswer { () throws(OfflineError) in try store().statuses() }
            return jsonResponse(Wire.Downloads(downloads: list.map(Wire.Download.init)))
        }
        routes.post("/downloads") { [self] request, context in
            let download = try await body(request, context, as: Wire.DownloadRequest.self)
            let (source, token, maxBitrate, maxHeight) = (download.source, download.token, download.maxBitrate, download.maxHeight)
            // The token, when given, must verify for the source, as for playback.
            let item = try await authorize([PlaylistItem(source: source, token: token)], field: "")[0]
            // Its claims name where its keys come from (`keyServer`), if it is encrypted.
            var keyServer: String?
            if let token { keyServer = try await verified(source: item.source, token: token).claims?.keyServer }
            let status = try await Self.offlineAnswer { () async throws(OfflineError) in
                try await store().add(DownloadRequest(source: item.source, token: token, maxBitrate: maxBitrate, maxHeight: maxHeight,
                                                      keyServer: keyServer))
            }
            return jsonResponse(Wire.Download(status), status: .created)
        }
        routes.get("/downloads/:id") { [self] _, context in
            let id = context.parameters.get("id") ?? ""
            return jsonResponse(Wire.Download(try Self.offlineAnswer { () throws(OfflineError) in try store().status(id) }))
        }
        routes.delete("/downloads/:id") { [self] _, context in
            let id = context.parameters.get("id") ?? ""
            try await Self.offlineAnswer { () async throws(OfflineError) in try await store().remove(id) }
            return jsonResponse(Wire.Removed(id: id))
        }
        routes.post("/downloads/:id/pause") { [self] request, context in
            try await empty(request, context)
            let id = context.parameters.get("id") ?? ""
            return jsonResponse(Wire.Download(try Self.offlineAnswer { () throws(OfflineError) in try store().pause(id) }))
        }
        routes.post("/downloads/:id/resume") { [self] request, context in
            try await empty(request, context)
            let id = context.parameters.get("id") ?? ""
            return jsonResponse(Wire.Download(try Self.offlineAnswer { () throws(OfflineError) in try store().resume(id) }))
        }
        return routes
    }

    /// With `offline.keepAll`, queues a download of every item not yet kept (in the background).
    func keepOffline(_ items: [PlaylistItem]) {
        guard let offline, offline.settings.keepAll else { return }
        let sources = items.map(\.source)
        Task { await offline.keep(sources: sources) }
    }

    /// The manager, or 503 naming why the store is off.
    func store() throws(OfflineError) -> OfflineManager {
        guard let offline else { throw .store("the offline store is off: \(offlineOff)") }
        return offline
    }

    static func offlineAnswer<T>(_ body: () async throws(OfflineError) -> T) async throws(APIError) -> T {
        do { return try await body() } catch { throw apiError(error) }
    }

    static func offlineAnswer<T>(_ body: () throws(OfflineError) -> T) throws(APIError) -> T {
        do { return try body() } catch { throw apiError(error) }
    }

    static func apiError(_ e: OfflineError) -> APIError {
        switch e {
        case .insufficientSpace: return APIError(HTTPResponse.Status(code: 507, reasonPhrase: "Insufficient Storage"), "source: \(e)", field: "source")
        case .sourceUnusable: return APIError(.unprocessableContent, "source: \(e)", field: "source")
        case .notFound: return APIError(.notFound, "id: \(e)", field: "id")
        case .idTaken: return APIError(.conflict, "id: \(e)", field: "id")
        case .invalidState: return APIError(.conflict, "state: \(e)", field: "state")
        case .store: return APIError(.serviceUnavailable, "offline: \(e)", field: "offline")
        case .database:
            // SQLite's words are in the log (the store logged them), not in the answer.
            return APIError(.serviceUnavailable, "offline: the offline store cannot answer now; try again (the service's log says why)", field: "offline")
        }
    }
}

/// Removes the playlists naming content keys that this process wrote in `/dev/shm` for the
/// demuxer (`KeyedPlaylists`): called when the service stops, after playback has ended.
public func removeOfflineKeyPlaylists() { KeyedPlaylists.removeThisProcess() }
