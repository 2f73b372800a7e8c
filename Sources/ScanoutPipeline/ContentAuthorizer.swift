import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ScanoutPolicy
import Synchronization

extension PlayerTypeHint {
    /// The decoder a token's `playerType` claim asks for; nil for `auto` (no preference).
    public var playerType: PlayerType? {
        switch self {
        case .auto: nil
        case .native: .native
        case .hw: .hw
        case .sw: .sw
        }
    }
}

/// An item allowed to play: the input, the policy it plays under, and its token's decoder hint.
public struct AuthorizedItem: Sendable, Equatable {
    public var authorization: ContentAuthorization

    public init(_ authorization: ContentAuthorization) { self.authorization = authorization }

    public var input: String { authorization.input }
    public var policy: ContentPolicy { authorization.policy }
    /// The decoder the token suggests (its `playerType` claim), nil without a token or for `auto`.
    public var contentHint: PlayerType? { authorization.token?.playerType.playerType }
}

/// Verifies items' content tokens against the configured keys, before anything is opened, and
/// remembers the policy of each token it verified, so that the output side (on the player's
/// thread) finds it when the item comes on screen. `Sendable`: the remembered tokens are under a
/// `Mutex`; the rest is immutable.
public final class ContentAuthorizer: Sendable {
    public let configuration: PolicyConfiguration
    private let verified = Mutex<[String: ContentPolicy]>([:])

    public init(configuration: PolicyConfiguration = PolicyConfiguration()) {
        self.configuration = configuration
    }

    /// The key file at `path` (`--keys`, the `keys` config key or `SCANOUT_KEYS`); nil: no keys,
    /// content without a token unrestricted.
    public convenience init(keysFile path: String?) throws {
        self.init(configuration: try path.map(PolicyConfiguration.load(path:)) ?? PolicyConfiguration())
    }

    /// `input` and `token` put together (`PolicyConfiguration.authorize`), at `now` (seconds
    /// since 1970). With `capture`, content whose policy denies capture is refused
    /// (`CaptureRefused`) before anything is opened or written.
    public func authorize(input: String?, token: String?, capture: CapturePurpose? = nil,
                          now: Double = Date().timeIntervalSince1970) async throws -> AuthorizedItem {
        let a = try await configuration.authorize(input: input, token: token, now: now)
        if let capture { try CaptureGate.check(policy: a.policy, purpose: capture) }
        if let token { verified.withLock { $0[token] = a.policy } }
        return AuthorizedItem(a)
    }

    /// The policy of an item that comes with `token`: the verified token's, or the default
    /// policy without a token. A token that was never verified here fails closed (the strictest
    /// policy): it cannot have been played through `authorize`.
    public func policy(token: String?) -> ContentPolicy {
        guard let token else { return configuration.defaultPolicy }
        return verified.withLock { $0[token] } ?? .strictest
    }
}
