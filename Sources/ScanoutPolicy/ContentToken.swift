import Foundation
import JWTKit

// A content token is a JWT (RFC 7519) signed by whoever publishes the content. Its claims:
//
//     {
//       "url": "https://cdn.example/film.mp4",     optional: the media it is for
//       "exp": 1767225600,                          required: expiry, seconds since 1970
//       "nbf": 1767139200,                          optional: not valid before, seconds since 1970
//       "playerType": "auto",                       optional: auto | native | hw | sw (default auto)
//       "live": false,                              optional (default false)
//       "policy": {"externalOutput": "deny", "hdcp": "type1", "capture": "deny"}   required
//       "licence": {"kind": "rental", "expires": 1767225600, "playDuration": 172800}
//                                                   optional: for content kept offline (`Licence`)
//       "keyServer": "https://keys.example/licence/{kid}"
//                                                   optional: where the content keys of content kept
//                                                   offline are asked for, with this token as bearer
//                                                   ({kid}: the key's id); http or https
//       "kids": ["0123456789abcdef0123456789abcdef"]
//                                                   optional: the content keys the token may be
//                                                   handed (`/licence/KID`), by key id
//     }
//
// The header is read here before jwt-kit sees the token: jwt-kit verifies with the key's own
// algorithm whatever the header says, and with its default key when the kid is unknown, so
// `alg: none`, an unknown algorithm, an unknown kid and a key of the wrong type would all come
// back as "signature verification failed" or, worse, be checked against another key.

/// Why a content token was refused. `description` is one line for stderr.
public enum ContentTokenError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not three base64url parts with a JSON header, or a header field of the wrong type.
    case malformed(String)
    /// `alg: none`: the token carries no signature.
    case unsigned
    /// An algorithm other than HS256, RS256 and ES256.
    case unsupportedAlgorithm(String)
    /// The header names a key id the key set does not have.
    case unknownKeyID(String)
    /// No kid in the header, and no key of the header's algorithm.
    case noKeyForAlgorithm(String)
    /// The key named by the kid is of another type than the header's algorithm.
    case keyTypeMismatch(kid: String, keyAlgorithm: String, tokenAlgorithm: String)
    /// The signature does not verify with the key.
    case badSignature(kid: String)
    /// The claims are not the content-token claims (wrong types, unknown values).
    case invalidClaims(String)
    /// A required claim is absent.
    case missingClaim(String)
    /// `exp` is at or before now.
    case expired(expiry: Double, now: Double)
    /// `nbf` is after now.
    case notYetValid(notBefore: Double, now: Double)

    public var description: String {
        switch self {
        case let .malformed(reason): "content token is malformed: \(reason)"
        case .unsigned: "content token is unsigned (alg \"none\"); only signed tokens are accepted (HS256, RS256, ES256)"
        case let .unsupportedAlgorithm(alg):
            "content token algorithm \"\(alg)\" is not supported; sign it with HS256, RS256 or ES256"
        case let .unknownKeyID(kid): "content token names key \"\(kid)\", which is not in the key set; add the key or re-sign the token"
        case let .noKeyForAlgorithm(alg): "content token has no kid and the key set has no \(alg) key; add a kid to the token or the key to the set"
        case let .keyTypeMismatch(kid, keyAlg, tokenAlg):
            "content token is signed with \(tokenAlg) but key \"\(kid)\" is an \(keyAlg) key; re-sign it with the right key"
        case let .badSignature(kid): "content token signature does not verify with key \"\(kid)\"; the token was altered or signed with another key"
        case let .invalidClaims(reason): "content token claims are invalid: \(reason)"
        case let .missingClaim(name): "content token has no \"\(name)\" claim, which is required"
        case let .expired(exp, now): "content token expired at \(Int64(exp)) (now \(Int64(now))); get a new token"
        case let .notYetValid(nbf, now): "content token is not valid before \(Int64(nbf)) (now \(Int64(now)))"
        }
    }
}

/// A verified content token's claims.
public struct ContentToken: Sendable, Equatable {
    /// The key that verified it.
    public var keyID: String
    public var algorithm: TokenAlgorithm
    /// The media the token is for (`url`), when it names one.
    public var url: String?
    /// `exp`, seconds since 1970.
    public var expiry: Double
    /// `nbf`, seconds since 1970.
    public var notBefore: Double?
    public var playerType: PlayerTypeHint
    public var live: Bool
    public var policy: ContentPolicy
    /// The `licence` claim, for content kept offline; nil when the token has none.
    public var licence: Licence?
    /// The `keyServer` claim: the URL content keys are fetched from (`{kid}` replaced by the
    /// key's id), overriding an HLS playlist's key URI; nil when the token names none.
    public var keyServer: String?
    /// The `kids` claim: the ids of the content keys the token may be handed (`/licence/KID`);
    /// nil when the token names none (then only its `url` binds it to keys).
    public var kids: [String]?

    public init(keyID: String, algorithm: TokenAlgorithm, url: String?, expiry: Double, notBefore: Double?,
                playerType: PlayerTypeHint, live: Bool, policy: ContentPolicy, licence: Licence? = nil, keyServer: String? = nil,
                kids: [String]? = nil) {
        self.kids = kids
        self.keyID = keyID
        self.algorithm = algorithm
        self.url = url
        self.expiry = expiry
        self.notBefore = notBefore
        self.playerType = playerType
        self.live = live
        self.policy = policy
        self.licence = licence
        self.keyServer = keyServer
    }
}

/// Verifies content tokens against a key set, at a given wall-clock time.
public struct ContentTokenVerifier: Sendable {
    public var keys: TokenKeySet
    /// Seconds of clock difference tolerated on `exp` and `nbf`.
    public var leewaySeconds: Double

    public init(keys: TokenKeySet, leewaySeconds: Double = 0) {
        self.keys = keys
        self.leewaySeconds = leewaySeconds
    }

    /// The verified claims of `token` at wall-clock time `now` (seconds since 1970). Checks, in
    /// order: the token's shape and header, the algorithm (`none` and unknown ones refused), the key
    /// (by kid, of the header's algorithm), the signature, the claims, then `nbf` and `exp`.
    /// Throws `ContentTokenError`.
    public func verify(_ token: String, now: Double) async throws -> ContentToken {
        let text = token.trimmingCharacters(in: .whitespacesAndNewlines)
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else {
            throw ContentTokenError.malformed("a JWT has 3 dot-separated parts, this has \(parts.count)")
        }
        guard let headerBytes = base64URLDecode(parts[0]) else { throw ContentTokenError.malformed("the header is not base64url") }
        guard base64URLDecode(parts[1]) != nil else { throw ContentTokenError.malformed("the payload is not base64url") }
        guard base64URLDecode(parts[2]) != nil else { throw ContentTokenError.malformed("the signature is not base64url") }
        guard let header = try? JSONDecoder().decode(TokenHeader.self, from: headerBytes) else {
            throw ContentTokenError.malformed("the header is not a JSON object")
        }
        guard let alg = header.alg else { throw ContentTokenError.malformed("the header has no \"alg\" string") }
        if alg.lowercased() == "none" { throw ContentTokenError.unsigned }
        guard let algorithm = TokenAlgorithm(rawValue: alg) else { throw ContentTokenError.unsupportedAlgorithm(alg) }
        if header.hasCrit {
            throw ContentTokenError.malformed("the header has critical extensions (\"crit\"), which are not understood")
        }

        let key: TokenKey
        if let kidValue = header.kid {
            guard let kid = kidValue else { throw ContentTokenError.malformed("the header's \"kid\" is not a string") }
            guard let named = keys.key(id: kid) else { throw ContentTokenError.unknownKeyID(kid) }
            guard named.algorithm == algorithm else {
                throw ContentTokenError.keyTypeMismatch(kid: kid, keyAlgorithm: named.algorithm.rawValue, tokenAlgorithm: alg)
            }
            key = named
        } else {
            let candidates = keys.keys.filter { $0.algorithm == algorithm }
            guard candidates.count == 1 else {
                if candidates.isEmpty { throw ContentTokenError.noKeyForAlgorithm(alg) }
                throw ContentTokenError.malformed("the header has no \"kid\" and the key set has \(candidates.count) \(alg) keys; name one with kid")
            }
            key = candidates[0]
        }

        let claims: Claims
        do {
            claims = try await key.collection().verify(text, as: Claims.self)
        } catch let error as JWTError where error.errorType == .malformedToken {
            throw ContentTokenError.invalidClaims(error.reason ?? "\(error)")
        } catch {
            // signatureVerificationFailed, or a signature of the wrong size for the key.
            throw ContentTokenError.badSignature(kid: key.kid)
        }
        let verified = try claims.validated(keyID: key.kid, algorithm: algorithm)
        if let nbf = verified.notBefore, now + leewaySeconds < nbf {
            throw ContentTokenError.notYetValid(notBefore: nbf, now: now)
        }
        if now - leewaySeconds >= verified.expiry {
            throw ContentTokenError.expired(expiry: verified.expiry, now: now)
        }
        return verified
    }
}

/// The JOSE header (RFC 7515 §4) as far as the verifier reads it. A member of the wrong type is
/// kept as such, for the check that names it ("no \"alg\" string", "\"kid\" is not a string").
struct TokenHeader: Decodable {
    enum CodingKeys: String, CodingKey { case alg, kid, crit }
    /// nil when absent or not a string.
    var alg: String?
    /// nil when absent; `.some(nil)` when it is not a string (null included).
    var kid: String??
    /// Whether `crit` is given, whatever its value (null included).
    var hasCrit: Bool

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        alg = try? c.decode(String.self, forKey: .alg)
        kid = c.contains(.kid) ? .some(try? c.decode(String.self, forKey: .kid)) : nil
        hasCrit = c.contains(.crit)
    }
}

/// The claims as they are in the JSON, checked by `validated` (so that errors name the claim).
struct Claims: JWTPayload {
    struct Policy: Codable, Sendable {
        var externalOutput: String?
        var hdcp: String?
        var capture: String?
    }
    var url: String?
    var exp: Double?
    var nbf: Double?
    var playerType: String?
    var live: Bool?
    var policy: Policy?
    var licence: LicenceClaim?
    var keyServer: String?
    var kids: [String]?

    struct LicenceClaim: Codable, Sendable {
        var kind: String?
        var expires: Double?
        var playDuration: Double?
    }

    /// Nothing to check here: `exp` and `nbf` are checked by `ContentTokenVerifier` against the
    /// time it is given (jwt-kit would read the system clock, which tests cannot set).
    func verify(using algorithm: some JWTAlgorithm) async throws {}

    func validated(keyID: String, algorithm: TokenAlgorithm) throws -> ContentToken {
        guard let exp else { throw ContentTokenError.missingClaim("exp") }
        guard let policy else { throw ContentTokenError.missingClaim("policy") }
        func value<T: RawRepresentable & CaseIterable>(_ raw: String?, _ name: String, _: T.Type) throws -> T where T.RawValue == String {
            guard let raw else { throw ContentTokenError.missingClaim(name) }
            guard let v = T(rawValue: raw) else {
                throw ContentTokenError.invalidClaims("\(name) is \"\(raw)\" (expected \(T.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            return v
        }
        let contentPolicy = ContentPolicy(
            externalOutput: try value(policy.externalOutput, "policy.externalOutput", ContentPolicy.ExternalOutput.self),
            hdcp: try value(policy.hdcp, "policy.hdcp", ContentPolicy.HDCP.self),
            capture: try value(policy.capture, "policy.capture", ContentPolicy.Capture.self))
        let hint = try playerType.map { try value($0, "playerType", PlayerTypeHint.self) } ?? .auto
        if let url, url.isEmpty { throw ContentTokenError.invalidClaims("url is empty") }
        if let keyServer, !(keyServer.hasPrefix("http://") || keyServer.hasPrefix("https://")) || URL(string: keyServer.replacingOccurrences(of: "{kid}", with: "k")) == nil {
            throw ContentTokenError.invalidClaims("keyServer is \"\(keyServer)\" (expected an http or https URL, {kid} standing for the key's id)")
        }
        if let kids {
            guard !kids.isEmpty else { throw ContentTokenError.invalidClaims("kids is empty (name at least one key id, or leave it out)") }
            if let bad = kids.first(where: { !Self.isKeyID($0) }) {
                throw ContentTokenError.invalidClaims("kids holds \"\(bad)\" (expected key ids: 1 to 128 letters, digits, '-', '_' or '.', such as 32 hexadecimal digits)")
            }
        }
        let licence = try self.licence.map { l in
            try Licence(kind: value(l.kind, "licence.kind", Licence.Kind.self), expires: l.expires, playDuration: l.playDuration).validated()
        }
        return ContentToken(keyID: keyID, algorithm: algorithm, url: url, expiry: exp, notBefore: nbf,
                            playerType: hint, live: live ?? false, policy: contentPolicy, licence: licence, keyServer: keyServer,
                            kids: kids)
    }

    static func isKeyID(_ s: String) -> Bool {
        (1...128).contains(s.count) && s.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == ".") }
    }
}

/// Bytes of base64url text (RFC 4648 §5, padding optional); nil when it is not base64url.
func base64URLDecode(_ text: Substring) -> Data? {
    guard text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "=") }) else { return nil }
    var s = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    while s.count % 4 != 0 { s += "=" }
    return Data(base64Encoded: s)
}
