import Crypto
import CryptoExtras
import Foundation
@testable import ScanoutPolicy

// Tokens made here, at test time, with keys generated at test time (nothing secret is committed).
// They are assembled and signed by hand with swift-crypto, independently of jwt-kit, so that the
// verifier is checked against a second implementation and headers can say anything.

func base64URL(_ data: some DataProtocol) -> String {
    Data(data).base64EncodedString()
        .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
}

func json(_ object: [String: Any]) -> Data {
    try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
}

/// Now, for the tests: 2026-01-01T00:00:00Z.
let testNow: Double = 1_767_225_600

/// Claims of a valid token at `testNow`, with a policy.
func claims(url: String? = "https://cdn.example/film.mp4", exp: Double? = testNow + 3600, nbf: Double? = testNow - 60,
            policy: [String: String]? = ["externalOutput": "deny", "hdcp": "type1", "capture": "deny"],
            extra: [String: Any] = [:]) -> [String: Any] {
    var c: [String: Any] = ["playerType": "hw", "live": true]
    if let url { c["url"] = url }
    if let exp { c["exp"] = exp }
    if let nbf { c["nbf"] = nbf }
    if let policy { c["policy"] = policy }
    for (k, v) in extra { c[k] = v }
    return c
}

/// A signer with a key generated now.
enum TestSigner {
    case hs256(secret: [UInt8])
    case rs256(_RSA.Signing.PrivateKey)
    case es256(P256.Signing.PrivateKey)

    static func newHS256() -> TestSigner {
        .hs256(secret: SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) })
    }
    static func newRS256() throws -> TestSigner { .rs256(try _RSA.Signing.PrivateKey(keySize: .bits2048)) }
    static func newES256() -> TestSigner { .es256(P256.Signing.PrivateKey()) }

    var alg: String {
        switch self {
        case .hs256: "HS256"
        case .rs256: "RS256"
        case .es256: "ES256"
        }
    }

    /// The verification key with id `kid`.
    func key(kid: String) throws -> TokenKey {
        switch self {
        case let .hs256(secret): try TokenKey.hs256(kid: kid, secret: secret)
        case let .rs256(key): try TokenKey.rs256(kid: kid, publicKeyPEM: key.publicKey.pemRepresentation)
        case let .es256(key): try TokenKey.es256(kid: kid, publicKeyPEM: key.publicKey.pemRepresentation)
        }
    }

    /// The key's entry in a key file.
    func keyFileEntry(kid: String) -> [String: Any] {
        switch self {
        case let .hs256(secret): ["kid": kid, "alg": alg, "secret": String(decoding: secret, as: UTF8.self)]
        case let .rs256(key): ["kid": kid, "alg": alg, "publicKeyPEM": key.publicKey.pemRepresentation]
        case let .es256(key): ["kid": kid, "alg": alg, "publicKeyPEM": key.publicKey.pemRepresentation]
        }
    }

    func signature(_ input: Data) throws -> Data {
        switch self {
        case let .hs256(secret): Data(HMAC<SHA256>.authenticationCode(for: input, using: SymmetricKey(data: secret)))
        case let .rs256(key): try key.signature(for: input, padding: .insecurePKCS1v1_5).rawRepresentation
        case let .es256(key): try key.signature(for: input).rawRepresentation
        }
    }

    /// A token with `claims`; the header is `{"alg": <alg>, "kid": <kid>, "typ": "JWT"}` unless
    /// `header` is given.
    func token(_ claims: [String: Any], kid: String? = "k1", header: [String: Any]? = nil) throws -> String {
        var h: [String: Any] = header ?? ["alg": alg, "typ": "JWT"]
        if header == nil, let kid { h["kid"] = kid }
        let input = base64URL(json(h)) + "." + base64URL(json(claims))
        return input + "." + base64URL(try signature(Data(input.utf8)))
    }
}

/// An HS256 secret of printable characters (for key files, which carry the secret as text).
func printableSecret() -> [UInt8] {
    let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789".utf8)
    var g = SystemRandomNumberGenerator()
    return (0..<40).map { _ in alphabet[Int(g.next() % UInt64(alphabet.count))] }
}

/// A P-256 private key's PEM with its newlines escaped, to paste into a JSON string.
func privateKeyPEMForJSON() -> String {
    P256.Signing.PrivateKey().pemRepresentation.replacingOccurrences(of: "\n", with: "\\n")
}
