import Foundation

// What to play and under which policy: the input the user named, the token that came with it (if
// any), the configured keys and default policy, put together before anything is opened.

/// Why content could not be authorised. `description` is one line for stderr.
public enum AuthorizationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Neither an input nor a token with a `url` claim.
    case noInput
    /// A token was given but no key is configured to verify it.
    case noKeys
    /// The token's `url` claim names other media than the input.
    case urlMismatch(tokenURL: String, input: String)

    public var description: String {
        switch self {
        case .noInput: "no input: name the file or URL, or give a token whose \"url\" claim names it"
        case .noKeys: "a content token needs keys to verify it: give --keys FILE or set SCANOUT_KEYS"
        case let .urlMismatch(tokenURL, input):
            "the content token is for \(tokenURL), not for \(input); use the token issued for this input"
        }
    }
}

/// The media to open and the policy it plays under.
public struct ContentAuthorization: Sendable, Equatable {
    /// The file or URL to open.
    public var input: String
    public var policy: ContentPolicy
    /// The verified token, or nil when the content plays under the default policy.
    public var token: ContentToken?

    public init(input: String, policy: ContentPolicy, token: ContentToken?) {
        self.input = input
        self.policy = policy
        self.token = token
    }

    /// "token k1 (ES256)" or "default policy", for logs.
    public var source: String {
        token.map { "token \($0.keyID) (\($0.algorithm.rawValue))" } ?? "default policy"
    }
}

extension PolicyConfiguration {
    /// Puts `input` and `token` together: without a token, `input` under `defaultPolicy`; with
    /// one, the token is verified at `now` (seconds since 1970) and its policy applies. A token's
    /// `url` claim must name the same media as `input` (`sameMedia`); `input` may be omitted when
    /// the token names it.
    public func authorize(input: String?, token: String?, now: Double) async throws -> ContentAuthorization {
        guard let token else {
            guard let input else { throw AuthorizationError.noInput }
            return ContentAuthorization(input: input, policy: defaultPolicy, token: nil)
        }
        guard !keys.isEmpty else { throw AuthorizationError.noKeys }
        let verified = try await ContentTokenVerifier(keys: keys, leewaySeconds: leewaySeconds).verify(token, now: now)
        switch (input, verified.url) {
        case (nil, nil):
            throw AuthorizationError.noInput
        case let (nil, url?):
            return ContentAuthorization(input: url, policy: verified.policy, token: verified)
        case let (input?, nil):
            return ContentAuthorization(input: input, policy: verified.policy, token: verified)
        case let (input?, url?):
            guard sameMedia(url, input) else { throw AuthorizationError.urlMismatch(tokenURL: url, input: input) }
            return ContentAuthorization(input: input, policy: verified.policy, token: verified)
        }
    }
}

/// Whether a token's `url` claim and an input name the same media: equal strings, or, for local
/// files (a path or a `file://` URL), the same absolute path after resolving `.`, `..` and
/// symbolic links. Network URLs are compared as written: the token issuer and the player must
/// agree on the spelling.
public func sameMedia(_ tokenURL: String, _ input: String) -> Bool {
    if tokenURL == input { return true }
    guard let a = localPath(tokenURL), let b = localPath(input) else { return false }
    return a == b
}

/// The canonical absolute path of a local input, nil for network URLs.
private func localPath(_ s: String) -> String? {
    var path = s
    if s.hasPrefix("file://") {
        guard let url = URL(string: s), url.isFileURL else { return nil }
        path = url.path
    } else if s.contains("://") {
        return nil
    }
    let url = URL(fileURLWithPath: path)
    return url.standardizedFileURL.resolvingSymlinksInPath().path
}
