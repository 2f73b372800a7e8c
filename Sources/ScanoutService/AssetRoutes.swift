import Foundation
import Hummingbird
import ScanoutOffline
import ScanoutPolicy

/// Offline assets (register, status, refresh, unregister under a local content id): a download
/// whose id the client chooses, kept with the licence its content token carries.
extension ControlAPI {
    static let assetRoutes: [(method: String, path: String)] = [
        ("POST", "/assets"), ("GET", "/assets/{id}"), ("DELETE", "/assets/{id}"), ("POST", "/assets/{id}/refresh"),
    ]

    /// `POST /assets {id, source?, token, maxBitrate? | maxHeight?}`, `GET|DELETE /assets/ID`,
    /// `POST /assets/ID/refresh {token}`.
    func addAssetRoutes(to router: Router<ServiceRequestContext>) {
        router.post("/assets") { [self] request, context in
            var o = try await body(request, context, fields: ["id", "source", "token", "maxBitrate", "maxHeight"])
            let id = try o.string("id", required: true)!
            let source = try o.string("source")
            let token = try o.string("token", required: true)!
            let maxBitrate = try o.int("maxBitrate", range: 1...1_000_000_000)
            let maxHeight = try o.int("maxHeight", range: 1...16384)
            try o.rejectUnknown()
            guard Self.isAssetID(id) else {
                throw APIError.badRequest("id", "must be 1 to 64 letters, digits, '-', '_' or '.', not starting with '.'")
            }
            if maxBitrate != nil && maxHeight != nil {
                throw APIError.badRequest("maxHeight", "give maxBitrate or maxHeight, not both")
            }
            let (input, licence) = try await verified(source: source, token: token)
            let status = try await Self.offlineAnswer { () async throws(OfflineError) in
                try await store().add(DownloadRequest(source: input, token: token, maxBitrate: maxBitrate, maxHeight: maxHeight,
                                                      id: id, licence: licence))
            }
            return jsonResponse(try assetJSON(status), status: .created)
        }
        router.get("/assets/:id") { [self] _, context in
            let id = context.parameters.get("id") ?? ""
            return jsonResponse(try assetJSON(try Self.offlineAnswer { () throws(OfflineError) in try store().status(id) }))
        }
        router.delete("/assets/:id") { [self] _, context in
            let id = context.parameters.get("id") ?? ""
            try await Self.offlineAnswer { () async throws(OfflineError) in try await store().remove(id) }
            return jsonResponse(["id": id, "state": DownloadState.cancelled.rawValue])
        }
        router.post("/assets/:id/refresh") { [self] request, context in
            let id = context.parameters.get("id") ?? ""
            var o = try await body(request, context, fields: ["token"])
            let token = try o.string("token", required: true)!
            try o.rejectUnknown()
            let status = try Self.offlineAnswer { () throws(OfflineError) in try store().status(id) }
            let (_, licence) = try await verified(source: status.record.source, token: token)
            guard let licence else { throw APIError(.unprocessableContent, "token: the token carries no licence claim to refresh with", field: "token") }
            _ = try Self.offlineAnswer { () throws(OfflineError) in try store().refresh(id, licence: licence) }
            return jsonResponse(try assetJSON(try Self.offlineAnswer { () throws(OfflineError) in try store().status(id) }))
        }
    }

    /// The token verified for `source` (or the source it names): the input and its licence; 403
    /// naming what is wrong otherwise.
    private func verified(source: String?, token: String) async throws -> (input: String, licence: Licence?) {
        do {
            let a = try await authorizer.authorize(input: source, token: token)
            return (a.input, a.authorization.token?.licence)
        } catch {
            throw Self.refusal(error, field: "token", source: "source")
        }
    }

    /// A download's answer with its licence (`null` when it has none) and where it stands.
    private func assetJSON(_ s: DownloadStatus) throws -> [String: Any] {
        var json = Self.downloadJSON(s)
        let id = s.record.id
        guard let l = try Self.offlineAnswer({ () throws(OfflineError) in try store().licenceStatus(id) }) else {
            json["licence"] = NSNull()
            return json
        }
        var licence: [String: Any] = ["kind": l.licence.kind.rawValue, "expires": l.licence.expires ?? NSNull(),
                                      "playDuration": l.licence.playDuration ?? NSNull(), "firstPlay": l.firstPlay ?? NSNull()]
        switch l.verdict {
        case .valid(let remaining):
            licence["state"] = "valid"
            licence["remaining"] = remaining ?? NSNull()
            licence["expiredAt"] = NSNull()
        case .expired(let at):
            licence["state"] = "expired"
            licence["remaining"] = 0
            licence["expiredAt"] = at
        }
        json["licence"] = licence
        return json
    }

    static func isAssetID(_ id: String) -> Bool {
        (1...64).contains(id.count) && !id.hasPrefix(".")
            && id.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == ".") }
    }
}
