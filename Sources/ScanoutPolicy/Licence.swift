import Foundation

/// The licence a content token carries (`licence` claim) for content kept offline:
///
///     "licence": {"kind": "rental", "expires": 1767225600, "playDuration": 172800}
///
/// A purchase never expires. A rental expires at `expires` (seconds since 1970), or
/// `playDuration` seconds after its first play, whichever comes first; it names at least one.
public struct Licence: Sendable, Equatable, Codable {
    public enum Kind: String, Sendable, Codable, CaseIterable {
        case purchase, rental
    }

    public var kind: Kind
    /// The end of the licence, seconds since 1970 (rentals only).
    public var expires: Double?
    /// Seconds the content may be played from its first play (rentals only).
    public var playDuration: Double?

    public init(kind: Kind, expires: Double? = nil, playDuration: Double? = nil) {
        self.kind = kind
        self.expires = expires
        self.playDuration = playDuration
    }

    /// When it ends, given its first play (nil: not played yet); nil: never (a purchase, or a
    /// rental with only a play window that has not started).
    public func end(firstPlay: Double?) -> Double? {
        guard kind == .rental else { return nil }
        let window: Double? = if let firstPlay, let playDuration { firstPlay + playDuration } else { nil }
        switch (expires, window) {
        case let (e?, w?): return min(e, w)
        case let (e?, nil): return e
        case let (nil, w?): return w
        case (nil, nil): return nil
        }
    }

    /// Where the licence stands at `now` (seconds since 1970; the caller's guard against a clock
    /// turned back: the offline store passes the largest time it has seen).
    public func verdict(firstPlay: Double?, now: Double) -> LicenceVerdict {
        guard let end = end(firstPlay: firstPlay) else { return .valid(remaining: kind == .purchase ? nil : playDuration) }
        if now >= end { return .expired(at: end) }
        // Not played yet: what is left is the window, cut by `expires`.
        if firstPlay == nil, let d = playDuration { return .valid(remaining: min(d, end - now)) }
        return .valid(remaining: end - now)
    }

    /// Checks the claim's values.
    func validated() throws -> Licence {
        if kind == .purchase, expires != nil || playDuration != nil {
            throw ContentTokenError.invalidClaims("licence: a purchase has no expires or playDuration")
        }
        if kind == .rental, expires == nil, playDuration == nil {
            throw ContentTokenError.invalidClaims("licence: a rental needs expires, playDuration or both")
        }
        if let d = playDuration, !(d > 0) { throw ContentTokenError.invalidClaims("licence.playDuration must be more than 0 seconds") }
        return self
    }
}

/// Where a licence stands.
public enum LicenceVerdict: Sendable, Equatable {
    /// Playable; `remaining` seconds (nil: no end).
    case valid(remaining: Double?)
    /// Ended at `at` (seconds since 1970).
    case expired(at: Double)

    public var isExpired: Bool { if case .expired = self { true } else { false } }
}
