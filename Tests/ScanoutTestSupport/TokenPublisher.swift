import Foundation
import JWTKit

/// Content-token claims as a publisher would sign them.
private struct PublisherClaims: JWTPayload {
    var url: String?
    var exp: Int
    var policy: [String: String]
    var licence: LicenceClaim?
    var keyServer: String?
    var kids: [String]?
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// A `licence` claim (kind `purchase` or `rental`, times in seconds since 1970 and seconds).
public struct LicenceClaim: Codable, Sendable {
    public var kind: String
    public var expires: Double?
    public var playDuration: Double?
    public init(kind: String, expires: Double? = nil, playDuration: Double? = nil) {
        self.kind = kind
        self.expires = expires
        self.playDuration = playDuration
    }
}

/// A content publisher for tests: a key file with one HS256 key (secret made now) and tokens
/// signed with it by jwt-kit, as a publisher's server might sign them.
public struct TokenPublisher: Sendable {
    public let scratch: Scratch
    public let keyFile: String
    private let keys = JWTKeyCollection()

    public init() async throws {
        scratch = try Scratch()
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789")
        var g = SystemRandomNumberGenerator()
        let secret = String((0..<40).map { _ in alphabet[Int(g.next() % UInt64(alphabet.count))] })
        keyFile = scratch.path("keys.json")
        let file: [String: Any] = ["keys": [["kid": "k1", "alg": "HS256", "secret": secret]]]
        try JSONSerialization.data(withJSONObject: file).write(to: URL(fileURLWithPath: keyFile))
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256, kid: "k1")
    }

    /// A token for `url` (none: the input names the media) under the policy given, expiring
    /// `expiresIn` seconds from now (negative: already expired); `keyServer`: the claim naming
    /// where content keys are fetched; `kids`: the claim naming the content keys it may be handed.
    public func token(url: String? = nil, externalOutput: String = "allow", hdcp: String = "none", capture: String = "allow",
                      expiresIn: Int = 3600, licence: LicenceClaim? = nil, keyServer: String? = nil, kids: [String]? = nil) async throws -> String {
        let exp = Int(Date().timeIntervalSince1970) + expiresIn
        return try await keys.sign(PublisherClaims(url: url, exp: exp,
                                                   policy: ["externalOutput": externalOutput, "hdcp": hdcp, "capture": capture],
                                                   licence: licence, keyServer: keyServer, kids: kids),
                                   kid: "k1")
    }
}
