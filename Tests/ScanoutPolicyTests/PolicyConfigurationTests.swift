import CryptoExtras
import Foundation
import ScanoutPolicy
import Testing

private func keyError(_ body: () throws -> Void) -> KeySetError? {
    do { try body() } catch let e as KeySetError { return e } catch { return nil }
    return nil
}

private func authError(_ body: () async throws -> Void) async -> (any Error)? {
    do { try await body() } catch { return error }
    return nil
}

@Suite struct PolicyConfigurationTests {
    @Test func keyFileLoadsEveryKeyTypeAndTheDefaultPolicy() async throws {
        let hs = TestSigner.hs256(secret: printableSecret()), es = TestSigner.newES256(), rs = try TestSigner.newRS256()
        let file: [String: Any] = [
            "defaultPolicy": ["externalOutput": "deny", "hdcp": "none", "capture": "allow"],
            "leewaySeconds": 5,
            "keys": [hs.keyFileEntry(kid: "h"), es.keyFileEntry(kid: "e"), rs.keyFileEntry(kid: "r")],
        ]
        let config = try PolicyConfiguration.parse(json: json(file))
        #expect(config.keys.keys.map(\.kid) == ["h", "e", "r"])
        #expect(config.keys.keys.map(\.algorithm) == [.hs256, .es256, .rs256])
        #expect(config.defaultPolicy == ContentPolicy(externalOutput: .deny, hdcp: .none, capture: .allow))
        #expect(config.leewaySeconds == 5)
        // Each key verifies its own tokens.
        for (signer, kid) in [(hs, "h"), (es, "e"), (rs, "r")] {
            let a = try await config.authorize(input: nil, token: try signer.token(claims(), kid: kid), now: testNow)
            #expect(a.token?.keyID == kid)
        }
    }

    @Test func keyFileWithoutDefaultPolicyIsUnrestricted() throws {
        let config = try PolicyConfiguration.parse(json: Data(#"{"keys": []}"#.utf8))
        #expect(config.defaultPolicy == .unrestricted)
        #expect(config.keys.isEmpty)
    }

    @Test func badKeyFilesSayWhatIsWrong() throws {
        func parse(_ s: String) -> KeySetError? { keyError { _ = try PolicyConfiguration.parse(json: Data(s.utf8), source: "keys.json") } }
        #expect(parse("{") != nil)
        #expect(parse(#"{"keys": [{"kid": "a"}]}"#) == .invalidJSON(source: "keys.json", reason: "keys[0].alg: missing"))
        #expect(parse(#"{"keys": [{"kid": "a", "alg": "none", "secret": "x"}]}"#) == .unsupportedAlgorithm(kid: "a", algorithm: "none"))
        #expect(parse(#"{"keys": [{"kid": "a", "alg": "HS256", "secret": "short"}]}"#)
                == .invalidKey(kid: "a", reason: "HS256 secret has 5 bytes; it needs at least 32"))
        #expect(parse(#"{"keys": [{"kid": "a", "alg": "ES256", "secret": "0123456789012345678901234567890123"}]}"#)
                == .invalidKey(kid: "a", reason: "an ES256 key needs \"publicKeyPEM\" (and no \"secret\")"))
        #expect(parse(#"{"keys": [{"kid": "a", "alg": "ES256", "publicKeyPEM": "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----"}]}"#)?
                .description.hasPrefix("key a: ES256 publicKeyPEM is not a P-256 public key") == true)
        let secret = String(repeating: "s", count: 32)
        #expect(parse(#"{"keys": [{"kid": "a", "alg": "HS256", "secret": "\#(secret)"}, {"kid": "a", "alg": "HS256", "secret": "\#(secret)"}]}"#)
                == .duplicateKeyID("a"))
        #expect(parse(#"{"keys": [], "defaultPolicy": {"externalOutput": "maybe", "hdcp": "none", "capture": "allow"}}"#)?
                .description.hasPrefix("key file keys.json is not valid: defaultPolicy.externalOutput") == true)
        // A private key is refused: the player only verifies.
        let es = privateKeyPEMForJSON()
        #expect(parse(#"{"keys": [{"kid": "a", "alg": "ES256", "publicKeyPEM": "\#(es)"}]}"#)
                == .invalidKey(kid: "a", reason: "ES256 needs a public key, not a private one"))
        #expect(keyError { _ = try PolicyConfiguration.load(path: "/nonexistent/keys.json") }?.description
                .hasPrefix("cannot read the key file /nonexistent/keys.json") == true)
    }

    @Test func weakRSAKeysAreRefused() throws {
        let weak = try _RSA.Signing.PrivateKey(unsafeKeySize: _RSA.Signing.KeySize(bitCount: 1024))
        let e = keyError { _ = try TokenKey.rs256(kid: "weak", publicKeyPEM: weak.publicKey.pemRepresentation) }
        #expect(e?.description.hasPrefix("key weak: RS256 publicKeyPEM is not an RSA public key of 2048 bits or more") == true)
        #expect(keyError { _ = try TokenKey.rs256(kid: "p", publicKeyPEM: weak.pemRepresentation) }
                == .invalidKey(kid: "p", reason: "RS256 needs a public key, not a private one"))
    }

    @Test func keysCanBeAddedThroughTheAPI() async throws {
        let s = TestSigner.newES256()
        var keys = TokenKeySet()
        try keys.add(try s.key(kid: "api"))
        #expect(throws: KeySetError.duplicateKeyID("api")) { try keys.add(try s.key(kid: "api")) }
        let config = PolicyConfiguration(keys: keys)
        let a = try await config.authorize(input: "https://cdn.example/film.mp4", token: try s.token(claims(), kid: "api"), now: testNow)
        #expect(a.policy == .strictest)
    }

    // MARK: Authorisation

    @Test func contentWithoutATokenPlaysUnderTheDefaultPolicy() async throws {
        let config = PolicyConfiguration(defaultPolicy: ContentPolicy(externalOutput: .deny, hdcp: .type0, capture: .allow))
        let a = try await config.authorize(input: "clip.mp4", token: nil, now: testNow)
        #expect(a == ContentAuthorization(input: "clip.mp4", policy: config.defaultPolicy, token: nil))
        #expect(a.source == "default policy")
        #expect(try await PolicyConfiguration().authorize(input: "clip.mp4", token: nil, now: testNow).policy == .unrestricted)
    }

    @Test func theTokenURLMustNameTheInput() async throws {
        let s = TestSigner.newHS256()
        let config = PolicyConfiguration(keys: try TokenKeySet([try s.key(kid: "k1")]))
        let token = try s.token(claims(url: "https://cdn.example/film.mp4"))
        // The input may be left out: the token names it.
        let a = try await config.authorize(input: nil, token: token, now: testNow)
        #expect(a.input == "https://cdn.example/film.mp4")
        #expect(a.source == "token k1 (HS256)")
        #expect(try await config.authorize(input: "https://cdn.example/film.mp4", token: token, now: testNow).policy == .strictest)
        #expect(await authError { _ = try await config.authorize(input: "https://cdn.example/other.mp4", token: token, now: testNow) }
                as? AuthorizationError == .urlMismatch(tokenURL: "https://cdn.example/film.mp4", input: "https://cdn.example/other.mp4"))
        // Local files: the same file however it is spelled.
        let local = try s.token(claims(url: "file:///tmp/./x/../film.mp4"))
        #expect(try await config.authorize(input: "/tmp/film.mp4", token: local, now: testNow).input == "/tmp/film.mp4")
        #expect(await authError { _ = try await config.authorize(input: "/tmp/film2.mp4", token: local, now: testNow) } is AuthorizationError)
        // No url claim: the token covers whatever input it comes with; no input at all is an error.
        let anyURL = try s.token(claims(url: nil))
        #expect(try await config.authorize(input: "a.mp4", token: anyURL, now: testNow).input == "a.mp4")
        #expect(await authError { _ = try await config.authorize(input: nil, token: anyURL, now: testNow) } as? AuthorizationError == .noInput)
    }

    @Test func aTokenWithoutKeysIsRefused() async throws {
        let token = try TestSigner.newHS256().token(claims())
        #expect(await authError { _ = try await PolicyConfiguration().authorize(input: nil, token: token, now: testNow) }
                as? AuthorizationError == .noKeys)
        #expect(await authError { _ = try await PolicyConfiguration().authorize(input: nil, token: nil, now: testNow) }
                as? AuthorizationError == .noInput)
    }

    @Test func captureGateRefusesEveryPurposeUnderCaptureDeny() throws {
        for purpose in CapturePurpose.allCases {
            #expect(throws: CaptureRefused(purpose: purpose, policy: .strictest)) {
                try CaptureGate.check(policy: .strictest, purpose: purpose)
            }
            try CaptureGate.check(policy: ContentPolicy(externalOutput: .deny, hdcp: .type1, capture: .allow), purpose: purpose)
        }
        let e = CaptureRefused(purpose: .file, policy: .strictest)
        #expect(e.description == "writing frames to a file refused: the content policy denies capture (capture=deny; policy externalOutput=deny hdcp=type1 capture=deny)")
    }
}
