import Foundation
import ScanoutPolicy
import Testing

/// The `kids` claim: the content keys a token may be handed by `/licence/KID`.
@Suite struct ContentTokenKeyIDTests {
    private func refusal(_ verifier: ContentTokenVerifier, _ token: String) async -> ContentTokenError? {
        do { _ = try await verifier.verify(token, now: testNow) } catch let e as ContentTokenError { return e } catch { return nil }
        return nil
    }

    @Test func kidsNamesTheKeysATokenMayBeHanded() async throws {
        let s = TestSigner.newHS256()
        let v = ContentTokenVerifier(keys: try TokenKeySet([try s.key(kid: "k1")]))
        let kid = "0123456789abcdef0123456789ABCDEF"
        let t = try await v.verify(try s.token(claims(extra: ["kids": [kid, "kid1"]])), now: testNow)
        #expect(t.kids == [kid, "kid1"])
        #expect(try await v.verify(try s.token(claims()), now: testNow).kids == nil)
    }

    @Test func kidsMustNameKeyIDs() async throws {
        let s = TestSigner.newHS256()
        let v = ContentTokenVerifier(keys: try TokenKeySet([try s.key(kid: "k1")]))
        #expect(await refusal(v, try s.token(claims(extra: ["kids": [String]()])))
                == .invalidClaims("kids is empty (name at least one key id, or leave it out)"))
        let bad = await refusal(v, try s.token(claims(extra: ["kids": ["../keys"]])))
        #expect(bad == .invalidClaims("kids holds \"../keys\" (expected key ids: 1 to 128 letters, digits, '-', '_' or '.', such as 32 hexadecimal digits)"))
        guard case .invalidClaims = await refusal(v, try s.token(claims(extra: ["kids": "kid1"]))) else {
            Issue.record("a kids claim that is not an array was accepted")
            return
        }
    }
}
