import Foundation
import HTTPTypes
import Hummingbird
import ScanoutOffline
import ScanoutPolicy

/// Offline assets (register, status, refresh, unregister under a local content id): a download
/// whose id the client chooses, kept with the licence its content token carries.
extension ControlAPI {
    /// `POST /assets {id, source?, token, maxBitrate? | maxHeight?}`, `GET|DELETE /assets/ID`,
    /// `POST /assets/ID/refresh {token}`.
    func assetRoutes() -> RouteCollection<ServiceRequestContext> {
        let routes = RouteCollection(context: ServiceRequestContext.self)
        routes.post("/assets") { [self] request, context in
            let asset = try await body(request, context, as: Wire.AssetRequest.self)
            let (id, source, token, maxBitrate, maxHeight) = (asset.id, asset.source, asset.token, asset.maxBitrate, asset.maxHeight)
            let (input, claims) = try await verified(source: source, token: token)
            let status = try await Self.offlineAnswer { () async throws(OfflineError) in
                try await store().add(DownloadRequest(source: input, token: token, maxBitrate: maxBitrate, maxHeight: maxHeight,
                                                      id: id, licence: claims?.licence, keyServer: claims?.keyServer))
            }
            return jsonResponse(try assetJSON(status), status: .created)
        }
        routes.get("/assets/:id") { [self] _, context in
            let id = context.parameters.get("id") ?? ""
            return jsonResponse(try assetJSON(try Self.offlineAnswer { () throws(OfflineError) in try store().status(id) }))
        }
        routes.delete("/assets/:id") { [self] _, context in
            let id = context.parameters.get("id") ?? ""
            try await Self.offlineAnswer { () async throws(OfflineError) in try await store().remove(id) }
            return jsonResponse(Wire.Removed(id: id))
        }
        routes.post("/assets/:id/refresh") { [self] request, context in
            let id = context.parameters.get("id") ?? ""
            let token = try await body(request, context, as: Wire.RefreshRequest.self).token
            let status = try Self.offlineAnswer { () throws(OfflineError) in try store().status(id) }
            let (_, claims) = try await verified(source: status.record.source, token: token)
            guard let licence = claims?.licence else { throw APIError(.unprocessableContent, "token: the token carries no licence claim to refresh with", field: "token") }
            _ = try Self.offlineAnswer { () throws(OfflineError) in try store().refresh(id, licence: licence) }
            return jsonResponse(try assetJSON(try Self.offlineAnswer { () throws(OfflineError) in try store().status(id) }))
        }
        return routes
    }

    /// `GET /licence/KID`: a content key, for a valid content token (`licenceKey`).
    func licenceRoutes() -> RouteCollection<ServiceRequestContext> {
        let routes = RouteCollection(context: ServiceRequestContext.self)
        routes.get("/licence/:kid") { [self] request, context in
            try await licenceKey(request, kid: context.parameters.get("kid") ?? "")
        }
        return routes
    }

    /// `GET /licence/KID`: the 16 bytes of content key KID from `offline.licenceKeys`, for a
    /// valid content token (`X-Content-Token`, or `Authorization: Bearer` from a local client,
    /// whose Authorization the API does not need) that names that key's content and whose licence
    /// allows playback now (`LicenceKeys`). 401 without a token, 403 for one that does not verify
    /// or is not for that key's content, 404 for an unknown KID. Keys are never logged.
    private func licenceKey(_ request: Request, kid: String) async throws -> Response {
        guard let file = try Self.offlineAnswer({ () throws(OfflineError) in try store() }).settings.licenceKeys else {
            throw APIError(.notFound, "kid: no licence keys are configured (offline.licenceKeys)", field: "kid")
        }
        let bearer = request.headers[.authorization].flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil }
        let token = request.headers[HTTPField.Name("X-Content-Token")!] ?? bearer
        let key = try await LicenceKeys(file: file, authorizer: authorizer, store: try? store().store).key(kid, token: token)
        var headers = HTTPFields()
        headers[.contentType] = "application/octet-stream"
        headers[.cacheControl] = "no-store"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: key)))
    }

    /// The bytes of hexadecimal text; nil when it is not.
    static func bytes(hex: String) -> [UInt8]? {
        let digits = Array(hex)
        guard digits.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        for i in stride(from: 0, to: digits.count, by: 2) {
            guard let b = UInt8(String(digits[i...i + 1]), radix: 16) else { return nil }
            out.append(b)
        }
        return out
    }

    /// The token verified for `source` (or the source it names): the input and the token's
    /// claims; 403 naming what is wrong otherwise.
    func verified(source: String?, token: String) async throws -> (input: String, claims: ContentToken?) {
        do {
            let a = try await authorizer.authorize(input: source, token: token)
            return (a.input, a.authorization.token)
        } catch {
            throw Self.refusal(error, field: "token", source: "source")
        }
    }

    /// A download's answer with its licence (`null` when it has none) and where it stands.
    private func assetJSON(_ s: DownloadStatus) throws -> Wire.Download {
        var asset = Wire.Download(s)
        let id = s.record.id
        let licence = try Self.offlineAnswer({ () throws(OfflineError) in try store().licenceStatus(id) })
        asset.licence = Nullable(wrappedValue: licence.map(Wire.AssetLicence.init))
        return asset
    }
}
