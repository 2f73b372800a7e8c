import Foundation
import JWTKit

// The keys content tokens are verified with, and the policy configuration file that carries them:
//
//     {
//       "defaultPolicy": {"externalOutput": "allow", "hdcp": "none", "capture": "allow"},
//       "leewaySeconds": 0,
//       "keys": [
//         {"kid": "k1", "alg": "HS256", "secret": "at least 32 bytes of shared secret ......"},
//         {"kid": "k2", "alg": "ES256", "publicKeyPEM": "-----BEGIN PUBLIC KEY-----\n..."},
//         {"kid": "k3", "alg": "RS256", "publicKeyPEM": "-----BEGIN PUBLIC KEY-----\n..."}
//       ]
//     }
//
// `defaultPolicy` (the policy of content without a token; unrestricted when absent) and
// `leewaySeconds` (clock difference tolerated on `exp` and `nbf`; 0 when absent) are optional.
// HS256 secrets are UTF-8 text of at least 32 bytes. Only public keys are accepted for RS256 and
// ES256: a player verifies, it never signs.

/// The signature algorithms a content token may use. Anything else (`none` included) is refused.
public enum TokenAlgorithm: String, Sendable, Equatable, CaseIterable, Codable {
    case hs256 = "HS256"
    case rs256 = "RS256"
    case es256 = "ES256"
}

/// Why a key or the policy configuration could not be loaded. `description` is one line for stderr.
public enum KeySetError: Error, Sendable, Equatable, CustomStringConvertible {
    case unreadable(path: String, reason: String)
    case invalidJSON(source: String, reason: String)
    case unsupportedAlgorithm(kid: String, algorithm: String)
    case invalidKey(kid: String, reason: String)
    case duplicateKeyID(String)

    public var description: String {
        switch self {
        case let .unreadable(path, reason): "cannot read the key file \(path): \(reason)"
        case let .invalidJSON(source, reason): "key file \(source) is not valid: \(reason)"
        case let .unsupportedAlgorithm(kid, alg):
            "key \(kid): algorithm \"\(alg)\" is not supported (use \(TokenAlgorithm.allCases.map(\.rawValue).joined(separator: ", ")))"
        case let .invalidKey(kid, reason): "key \(kid): \(reason)"
        case let .duplicateKeyID(kid): "key id \(kid) appears twice in the key set; give every key its own kid"
        }
    }
}

/// One verification key with its key id and the one algorithm it may be used with.
public struct TokenKey: Sendable {
    /// The `kid` a token names to pick this key.
    public let kid: String
    public let algorithm: TokenAlgorithm
    let material: Material

    enum Material: Sendable {
        case hmac(HMACKey)
        case rsa(Insecure.RSA.PublicKey)
        case ecdsa(ES256PublicKey)
    }

    /// Shortest HS256 secret accepted: as long as the SHA-256 output (RFC 7518 §3.2).
    public static let minimumSecretBytes = 32

    /// An HS256 key: a shared secret of at least 32 bytes.
    public static func hs256(kid: String, secret: [UInt8]) throws -> TokenKey {
        guard secret.count >= minimumSecretBytes else {
            throw KeySetError.invalidKey(kid: kid, reason: "HS256 secret has \(secret.count) bytes; it needs at least \(minimumSecretBytes)")
        }
        return TokenKey(kid: kid, algorithm: .hs256, material: .hmac(HMACKey(from: secret)))
    }

    /// An RS256 key from a PEM public key ("-----BEGIN PUBLIC KEY-----"), 2048 bits or more.
    public static func rs256(kid: String, publicKeyPEM: String) throws -> TokenKey {
        guard !publicKeyPEM.contains("PRIVATE KEY") else {
            throw KeySetError.invalidKey(kid: kid, reason: "RS256 needs a public key, not a private one")
        }
        do {
            return TokenKey(kid: kid, algorithm: .rs256, material: .rsa(try Insecure.RSA.PublicKey(pem: publicKeyPEM)))
        } catch {
            throw KeySetError.invalidKey(kid: kid, reason: "RS256 publicKeyPEM is not an RSA public key of 2048 bits or more (\(error))")
        }
    }

    /// An ES256 key from a PEM P-256 public key ("-----BEGIN PUBLIC KEY-----").
    public static func es256(kid: String, publicKeyPEM: String) throws -> TokenKey {
        guard !publicKeyPEM.contains("PRIVATE KEY") else {
            throw KeySetError.invalidKey(kid: kid, reason: "ES256 needs a public key, not a private one")
        }
        do {
            return TokenKey(kid: kid, algorithm: .es256, material: .ecdsa(try ES256PublicKey(pem: publicKeyPEM)))
        } catch {
            throw KeySetError.invalidKey(kid: kid, reason: "ES256 publicKeyPEM is not a P-256 public key (\(error))")
        }
    }

    /// A key collection holding only this key (as its default), for jwt-kit's signature check.
    /// One collection per key, so that jwt-kit can never fall back to another key.
    func collection() async -> JWTKeyCollection {
        let keys = JWTKeyCollection()
        switch material {
        case let .hmac(key): await keys.add(hmac: key, digestAlgorithm: .sha256)
        case let .rsa(key): await keys.add(rsa: key, digestAlgorithm: .sha256)
        case let .ecdsa(key): await keys.add(ecdsa: key)
        }
        return keys
    }
}

/// The verification keys, by key id.
public struct TokenKeySet: Sendable {
    public private(set) var keys: [TokenKey] = []

    public init() {}

    /// Throws `KeySetError.duplicateKeyID` when two keys share a kid.
    public init(_ keys: [TokenKey]) throws {
        for key in keys { try add(key) }
    }

    /// Adds a key (the API path; the file path is `PolicyConfiguration.load`).
    public mutating func add(_ key: TokenKey) throws {
        guard self.key(id: key.kid) == nil else { throw KeySetError.duplicateKeyID(key.kid) }
        keys.append(key)
    }

    public func key(id: String) -> TokenKey? { keys.first { $0.kid == id } }

    public var isEmpty: Bool { keys.isEmpty }
}

/// The content-policy settings: verification keys and the policy of content without a token.
public struct PolicyConfiguration: Sendable {
    public var keys: TokenKeySet
    /// The policy of content that comes without a token.
    public var defaultPolicy: ContentPolicy
    /// Seconds of clock difference tolerated on `exp` and `nbf`.
    public var leewaySeconds: Double

    public init(keys: TokenKeySet = TokenKeySet(), defaultPolicy: ContentPolicy = .unrestricted, leewaySeconds: Double = 0) {
        self.keys = keys
        self.defaultPolicy = defaultPolicy
        self.leewaySeconds = leewaySeconds
    }

    /// Reads the JSON key file at `path` (layout at the top of this file).
    public static func load(path: String) throws -> PolicyConfiguration {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw KeySetError.unreadable(path: path, reason: (error as NSError).localizedDescription)
        }
        return try parse(json: data, source: path)
    }

    /// Parses the JSON layout at the top of this file; `source` names it in errors.
    public static func parse(json: Data, source: String = "(inline)") throws -> PolicyConfiguration {
        let file: KeyFile
        do {
            file = try JSONDecoder().decode(KeyFile.self, from: json)
        } catch let error as DecodingError {
            throw KeySetError.invalidJSON(source: source, reason: describe(error))
        } catch {
            throw KeySetError.invalidJSON(source: source, reason: "\(error)")
        }
        var keys = TokenKeySet()
        for entry in file.keys {
            guard let alg = TokenAlgorithm(rawValue: entry.alg) else {
                throw KeySetError.unsupportedAlgorithm(kid: entry.kid, algorithm: entry.alg)
            }
            let key: TokenKey
            switch alg {
            case .hs256:
                guard let secret = entry.secret, entry.publicKeyPEM == nil else {
                    throw KeySetError.invalidKey(kid: entry.kid, reason: "an HS256 key needs \"secret\" (and no \"publicKeyPEM\")")
                }
                key = try TokenKey.hs256(kid: entry.kid, secret: Array(secret.utf8))
            case .rs256, .es256:
                guard let pem = entry.publicKeyPEM, entry.secret == nil else {
                    throw KeySetError.invalidKey(kid: entry.kid, reason: "an \(alg.rawValue) key needs \"publicKeyPEM\" (and no \"secret\")")
                }
                key = alg == .rs256 ? try TokenKey.rs256(kid: entry.kid, publicKeyPEM: pem)
                                    : try TokenKey.es256(kid: entry.kid, publicKeyPEM: pem)
            }
            try keys.add(key)
        }
        return PolicyConfiguration(keys: keys, defaultPolicy: file.defaultPolicy ?? .unrestricted,
                                   leewaySeconds: file.leewaySeconds ?? 0)
    }

    private struct KeyFile: Decodable {
        var keys: [Entry]
        var defaultPolicy: ContentPolicy?
        var leewaySeconds: Double?
    }

    private struct Entry: Decodable {
        var kid: String
        var alg: String
        var secret: String?
        var publicKeyPEM: String?
    }
}

/// "keys[1].alg: missing" — a decoding error as one line.
func describe(_ error: DecodingError) -> String {
    func path(_ keys: [any CodingKey]) -> String {
        var s = ""
        for k in keys {
            if let i = k.intValue { s += "[\(i)]" } else { s += (s.isEmpty ? "" : ".") + k.stringValue }
        }
        return s.isEmpty ? "top level" : s
    }
    switch error {
    case let .keyNotFound(key, ctx): return "\(path(ctx.codingPath + [key])): missing"
    case let .typeMismatch(type, ctx): return "\(path(ctx.codingPath)): expected \(type)"
    case let .valueNotFound(type, ctx): return "\(path(ctx.codingPath)): expected \(type), found null"
    case let .dataCorrupted(ctx):
        if let underlying = ctx.underlyingError { return "\(path(ctx.codingPath)): \(ctx.debugDescription) (\(underlying.localizedDescription))" }
        return "\(path(ctx.codingPath)): \(ctx.debugDescription)"
    @unknown default: return "\(error)"
    }
}
