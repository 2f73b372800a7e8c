import Foundation
import HTTPTypes
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ScanoutOffline
import ScanoutPipeline
import ScanoutPolicy

/// The content keys the service hands out for self-hosted content (`offline.licenceKeys`), to
/// holders of a content token that verifies against the service's keys and names that key's
/// content: `GET /licence/KID`, and the offline store in the same process (CENC downloads whose
/// token names no key server). The file:
///
///     {"keys": {"KID": "32 hex digits",
///               "KID2": {"key": "32 hex digits", "content": ["https://cdn.example/film.mp4"]}}}
///
/// A key goes to a token that names it (its `kids` claim), or whose `url` is content of the key:
/// a URL the file lists for it, a download the offline store keeps with it (its source or media
/// URL), or (in the process) the source whose encryption names it. The token's licence must
/// allow playback now. The file is read at each ask, so that keys can be added while the service
/// runs. Keys are never logged.
struct LicenceKeys: Sendable {
    let file: String
    let authorizer: ContentAuthorizer
    /// The offline store, whose downloads bind keys to their sources; nil: none.
    var store: OfflineStore? = nil

    /// One key of the file, and the content URLs it lists for it.
    struct Entry {
        var key: [UInt8]
        var content: [String]
    }

    /// Key `kid` for `token`, asked for `content` (the source that names the key, in the
    /// process; nil over HTTP): 401 without a token; 403 for one that does not verify, that names
    /// other content or no content, or whose licence does not allow playback now; 404 for an
    /// unknown KID; 503 when the file cannot be read.
    func key(_ kid: String, token: String?, content: String? = nil, now: Double = Date().timeIntervalSince1970) async throws(APIError) -> [UInt8] {
        guard let token else {
            throw APIError(.unauthorized, "token: a content token is required (X-Content-Token, or Authorization: Bearer)", field: "token")
        }
        let policy = authorizer.configuration
        let claims: ContentToken
        do {
            guard !policy.keys.isEmpty else { throw AuthorizationError.noKeys }
            claims = try await ContentTokenVerifier(keys: policy.keys, leewaySeconds: policy.leewaySeconds).verify(token, now: now)
        } catch {
            throw APIError(.forbidden, "token: \(error)", field: "token")
        }
        let keys = try entries()
        guard let entry = keys[kid] else {
            throw APIError(.notFound, "kid: no 16-byte key \"\(kid)\" in \(file)", field: "kid")
        }
        try checkBinding(claims, kid: kid, entry: entry, content: content)
        if let licence = claims.licence, case .expired(let at) = licence.verdict(firstPlay: nil, now: now) {
            throw APIError(.forbidden, "token: its licence (\(licence.kind.rawValue)) expired at \(Int64(at)) (now \(Int64(now))): "
                           + "no key is handed for it; get a new token", field: "token")
        }
        return entry.key
    }

    /// 403 unless `claims` names key `kid` (`kids`) or content of it (`url`).
    private func checkBinding(_ claims: ContentToken, kid: String, entry: Entry, content: String?) throws(APIError) {
        if let kids = claims.kids {
            guard kids.contains(where: { $0.caseInsensitiveCompare(kid) == .orderedSame }) else {
                throw APIError(.forbidden, "token: its kids claim does not name key \"\(kid)\": a key is handed only to a token for its content",
                               field: "token")
            }
            return
        }
        guard let url = claims.url else {
            throw APIError(.forbidden, "token: it names no content (no url claim) and no key (no kids claim): "
                           + "a key is handed only to a token for its content", field: "token")
        }
        if entry.content.contains(url) || content == url { return }
        let kept = (try? store?.content(ofKey: kid)) ?? []
        guard kept.contains(url) else {
            throw APIError(.forbidden, "token: it is for \(URLRedaction.redact(url)), which is not content of key \"\(kid)\" "
                           + "(neither listed for it in offline.licenceKeys nor kept with it offline): a key is handed only to a token for its content",
                           field: "token")
        }
    }

    /// The keys of the file; 503 when it cannot be read as the format above.
    private func entries() throws(APIError) -> [String: Entry] {
        let unreadable = APIError(.serviceUnavailable, "offline.licenceKeys: \(file) cannot be read as {\"keys\": {\"KID\": \"32 hex digits\" "
                                  + "or {\"key\": \"32 hex digits\", \"content\": [URL, ...]}}}", field: "offline")
        guard let data = FileManager.default.contents(atPath: file),
              let keys = try? JSONDecoder().decode(KeyFile.self, from: data).keys else {
            throw unreadable
        }
        var out: [String: Entry] = [:]
        for (kid, value) in keys {
            // A value that is no 16-byte key is left out: its KID answers 404, naming the file.
            guard let hex = value.hex, let key = ControlAPI.bytes(hex: hex), key.count == 16 else { continue }
            out[kid] = Entry(key: key, content: value.content)
        }
        return out
    }

    /// The file, as the type's comment shows it.
    private struct KeyFile: Decodable {
        var keys: [String: KeyValue]
    }

    /// A key's value: its hex digits, or `{"key": ..., "content": [URL, ...]}`. A `key` that is
    /// missing or not a string reads as none (the KID answers 404); a `content` that is not a
    /// list of strings makes the file unreadable.
    private struct KeyValue: Decodable {
        enum CodingKeys: String, CodingKey { case key, content }
        var hex: String?
        var content: [String] = []

        init(from decoder: any Swift.Decoder) throws {
            if let s = try? decoder.singleValueContainer().decode(String.self) {
                hex = s
                return
            }
            let c = try decoder.container(keyedBy: CodingKeys.self)
            hex = try? c.decode(String.self, forKey: .key)
            if c.contains(.content) { content = try c.decode([String].self, forKey: .content) }
        }
    }

    /// `key` for the offline store: a refusal names the status `/licence/KID` answers with.
    var lookup: LicenceLookup {
        { kid, token, content in
            do throws(APIError) { return try await key(kid, token: token, content: content) } catch {
                throw Refusal(status: error.status, message: error.message)
            }
        }
    }

    /// A refusal as the offline store reports it ("HTTP 403: token: ...").
    struct Refusal: Error, CustomStringConvertible {
        let status: HTTPResponse.Status
        let message: String
        var description: String { "HTTP \(status.code): \(message)" }
    }
}
