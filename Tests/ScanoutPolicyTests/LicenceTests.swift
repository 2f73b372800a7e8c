import Foundation
import ScanoutPolicy
import Testing

/// The `licence` claim of content tokens and the verdict on a licence at a given time.
@Suite struct LicenceTests {
    private func verified(_ licence: Any) async throws -> ContentToken {
        let signer = TestSigner.newHS256()
        let keys = try TokenKeySet([try signer.key(kid: "k1")])
        return try await ContentTokenVerifier(keys: keys).verify(try signer.token(claims(extra: ["licence": licence])), now: testNow)
    }

    @Test func theClaimIsParsed() async throws {
        let rental = try await verified(["kind": "rental", "expires": testNow + 86400, "playDuration": 7200])
        #expect(rental.licence == Licence(kind: .rental, expires: testNow + 86400, playDuration: 7200))
        #expect(try await verified(["kind": "purchase"]).licence == Licence(kind: .purchase))
        let signer = TestSigner.newHS256()
        let plain = try await ContentTokenVerifier(keys: try TokenKeySet([try signer.key(kid: "k1")]))
            .verify(try signer.token(claims()), now: testNow)
        #expect(plain.licence == nil)
    }

    @Test func badClaimsAreRefusedByName() async throws {
        let cases: [([String: Any], String)] = [
            (["kind": "lease"], "licence.kind is \"lease\""),
            (["kind": "rental"], "a rental needs expires, playDuration or both"),
            (["kind": "purchase", "expires": 1.0], "a purchase has no expires or playDuration"),
            (["kind": "rental", "playDuration": 0.0], "licence.playDuration must be more than 0"),
        ]
        for (licence, message) in cases {
            do {
                _ = try await verified(licence)
                Issue.record("accepted \(licence)")
            } catch let e as ContentTokenError {
                guard case .invalidClaims = e else { Issue.record("\(e)"); continue }
                #expect(e.description.contains(message), "\(e)")
            }
        }
    }

    @Test func aRentalEndsAtTheEarlierOfExpiresAndThePlayWindow() {
        let t0 = testNow
        let both = Licence(kind: .rental, expires: t0 + 1000, playDuration: 100)
        // Not played: the window has not started; what is left is the window.
        #expect(both.verdict(firstPlay: nil, now: t0 + 500) == .valid(remaining: 100))
        #expect(both.verdict(firstPlay: nil, now: t0 + 950) == .valid(remaining: 50))
        #expect(both.verdict(firstPlay: nil, now: t0 + 1000) == .expired(at: t0 + 1000))
        #expect(both.verdict(firstPlay: t0 + 10, now: t0 + 60) == .valid(remaining: 50))
        #expect(both.verdict(firstPlay: t0 + 10, now: t0 + 110) == .expired(at: t0 + 110))
        #expect(both.verdict(firstPlay: t0 + 950, now: t0 + 999) == .valid(remaining: 1))
        let window = Licence(kind: .rental, playDuration: 100)
        #expect(window.verdict(firstPlay: nil, now: t0 + 1e9) == .valid(remaining: 100))
        #expect(window.verdict(firstPlay: t0, now: t0 + 100).isExpired)
        #expect(Licence(kind: .purchase).verdict(firstPlay: t0, now: t0 + 1e10) == .valid(remaining: nil))
    }
}
