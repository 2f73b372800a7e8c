import Foundation
import HTTPTypes
import ScanoutOffline
import ScanoutPipeline
import ScanoutPolicy

/// The content keys the service hands out for self-hosted content (`offline.licenceKeys`, a
/// file `{"keys": {"KID": "32 hex digits"}}`), to holders of a content token that verifies
/// against the service's keys: `GET /licence/KID`, and the offline store in the same process
/// (CENC downloads whose token names no key server). The file is read at each ask, so that keys
/// can be added while the service runs. Keys are never logged.
struct LicenceKeys: Sendable {
    let file: String
    let authorizer: ContentAuthorizer

    /// Key `kid` for `token`: 401 without a token, 403 for one that does not verify, 404 for an
    /// unknown KID, 503 when the file cannot be read.
    func key(_ kid: String, token: String?) async throws(APIError) -> [UInt8] {
        guard let token else {
            throw APIError(.unauthorized, "token: a content token is required (X-Content-Token, or Authorization: Bearer)", field: "token")
        }
        let policy = authorizer.configuration
        do {
            guard !policy.keys.isEmpty else { throw AuthorizationError.noKeys }
            _ = try await ContentTokenVerifier(keys: policy.keys, leewaySeconds: policy.leewaySeconds).verify(token, now: Date().timeIntervalSince1970)
        } catch {
            throw APIError(.forbidden, "token: \(error)", field: "token")
        }
        guard let data = FileManager.default.contents(atPath: file),
              let keys = (try? JSONSerialization.jsonObject(with: data) as? [String: Any])?["keys"] as? [String: String] else {
            throw APIError(.serviceUnavailable, "offline.licenceKeys: \(file) cannot be read as {\"keys\": {\"KID\": \"32 hex digits\"}}", field: "offline")
        }
        guard let hex = keys[kid], let key = ControlAPI.bytes(hex: hex), key.count == 16 else {
            throw APIError(.notFound, "kid: no 16-byte key \"\(kid)\" in \(file)", field: "kid")
        }
        return key
    }

    /// `key` for the offline store: a refusal names the status `/licence/KID` answers with.
    var lookup: LicenceLookup {
        { kid, token in
            do throws(APIError) { return try await key(kid, token: token) } catch { throw Refusal(status: error.status, message: error.message) }
        }
    }

    /// A refusal as the offline store reports it ("HTTP 403: token: ...").
    struct Refusal: Error, CustomStringConvertible {
        let status: HTTPResponse.Status
        let message: String
        var description: String { "HTTP \(status.code): \(message)" }
    }
}
