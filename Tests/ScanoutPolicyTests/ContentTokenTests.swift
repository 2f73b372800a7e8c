import Foundation
import ScanoutPolicy
import Testing

/// The error `body` throws, as a `ContentTokenError`, or nil.
private func tokenError(_ body: () async throws -> Void) async -> ContentTokenError? {
    do { try await body() } catch let e as ContentTokenError { return e } catch { return nil }
    return nil
}

@Suite struct ContentTokenTests {
    // MARK: Accepted

    @Test(arguments: ["HS256", "RS256", "ES256"])
    func acceptsSignedTokens(alg: String) async throws {
        let signer: TestSigner = switch alg {
        case "HS256": .newHS256()
        case "RS256": try .newRS256()
        default: .newES256()
        }
        let keys = try TokenKeySet([try signer.key(kid: "k1")])
        let token = try await ContentTokenVerifier(keys: keys).verify(try signer.token(claims()), now: testNow)
        #expect(token.keyID == "k1")
        #expect(token.algorithm.rawValue == alg)
        #expect(token.url == "https://cdn.example/film.mp4")
        #expect(token.expiry == testNow + 3600)
        #expect(token.notBefore == testNow - 60)
        #expect(token.playerType == .hw)
        #expect(token.live)
        #expect(token.policy == ContentPolicy(externalOutput: .deny, hdcp: .type1, capture: .deny))
    }

    @Test func picksTheKeyByKidAmongSeveral() async throws {
        let a = TestSigner.newHS256(), b = TestSigner.newES256(), c = TestSigner.newHS256()
        let keys = try TokenKeySet([try a.key(kid: "a"), try b.key(kid: "b"), try c.key(kid: "c")])
        let policy = ["externalOutput": "allow", "hdcp": "type0", "capture": "allow"]
        let t = try await ContentTokenVerifier(keys: keys).verify(try c.token(claims(policy: policy), kid: "c"), now: testNow)
        #expect(t.keyID == "c")
        #expect(t.policy == ContentPolicy(externalOutput: .allow, hdcp: .type0, capture: .allow))
        // Without a kid, the one key of the header's algorithm is used.
        let noKid = try await ContentTokenVerifier(keys: keys).verify(try b.token(claims(), kid: nil), now: testNow)
        #expect(noKid.keyID == "b")
        // Without a kid and with two keys of the algorithm, the token must say which.
        let ambiguous = await tokenError { _ = try await ContentTokenVerifier(keys: keys).verify(try c.token(claims(), kid: nil), now: testNow) }
        #expect(ambiguous == .malformed("the header has no \"kid\" and the key set has 2 HS256 keys; name one with kid"))
    }

    @Test func optionalClaimsTakeTheirDefaults() async throws {
        let s = TestSigner.newHS256()
        let keys = try TokenKeySet([try s.key(kid: "k1")])
        var c = claims(url: nil, nbf: nil)
        c["playerType"] = nil
        c["live"] = nil
        let t = try await ContentTokenVerifier(keys: keys).verify(try s.token(c), now: testNow)
        #expect(t.url == nil && t.notBefore == nil && t.playerType == .auto && !t.live)
    }

    @Test func keyServerNamesAnHTTPURL() async throws {
        let s = TestSigner.newHS256()
        let v = ContentTokenVerifier(keys: try TokenKeySet([try s.key(kid: "k1")]))
        let t = try await v.verify(try s.token(claims(extra: ["keyServer": "https://keys.example/licence/{kid}"])), now: testNow)
        #expect(t.keyServer == "https://keys.example/licence/{kid}")
        #expect(await tokenError { _ = try await v.verify(try s.token(claims(extra: ["keyServer": "file:///etc/keys/{kid}"])), now: testNow) }
                == .invalidClaims("keyServer is \"file:///etc/keys/{kid}\" (expected an http or https URL, {kid} standing for the key's id)"))
    }

    // MARK: Refused, each with its own error

    @Test func refusesAlgNone() async throws {
        let s = TestSigner.newHS256()
        let keys = try TokenKeySet([try s.key(kid: "k1")])
        let unsigned = base64URL(json(["alg": "none", "typ": "JWT"])) + "." + base64URL(json(claims())) + "."
        #expect(await tokenError { _ = try await ContentTokenVerifier(keys: keys).verify(unsigned, now: testNow) } == .unsigned)
        // Any spelling of none, even with a kid and a signature.
        let noneKid = try s.token(claims(), header: ["alg": "None", "kid": "k1"])
        #expect(await tokenError { _ = try await ContentTokenVerifier(keys: keys).verify(noneKid, now: testNow) } == .unsigned)
    }

    @Test(arguments: ["HS512", "PS256", "ES384", "EdDSA", "hs256"])
    func refusesUnknownAlgorithms(alg: String) async throws {
        let s = TestSigner.newHS256()
        let keys = try TokenKeySet([try s.key(kid: "k1")])
        let t = try s.token(claims(), header: ["alg": alg, "kid": "k1"])
        #expect(await tokenError { _ = try await ContentTokenVerifier(keys: keys).verify(t, now: testNow) } == .unsupportedAlgorithm(alg))
    }

    @Test func refusesBadSignatures() async throws {
        for signer in [TestSigner.newHS256(), try TestSigner.newRS256(), TestSigner.newES256()] {
            let other: TestSigner = switch signer {
            case .hs256: .newHS256()
            case .rs256: try .newRS256()
            case .es256: .newES256()
            }
            let keys = try TokenKeySet([try signer.key(kid: "k1")])
            // Signed by another key of the same type.
            let forged = try other.token(claims())
            #expect(await tokenError { _ = try await ContentTokenVerifier(keys: keys).verify(forged, now: testNow) } == .badSignature(kid: "k1"))
            // A claim changed after signing.
            let good = try signer.token(claims()).split(separator: ".").map(String.init)
            var changed = claims()
            changed["policy"] = ["externalOutput": "allow", "hdcp": "none", "capture": "allow"]
            let altered = [good[0], base64URL(json(changed)), good[2]].joined(separator: ".")
            #expect(await tokenError { _ = try await ContentTokenVerifier(keys: keys).verify(altered, now: testNow) } == .badSignature(kid: "k1"))
            // No signature at all.
            let stripped = good[0] + "." + good[1] + "."
            #expect(await tokenError { _ = try await ContentTokenVerifier(keys: keys).verify(stripped, now: testNow) } == .badSignature(kid: "k1"))
        }
    }

    @Test func refusesExpiredTokens() async throws {
        let s = TestSigner.newES256()
        let keys = try TokenKeySet([try s.key(kid: "k1")])
        let t = try s.token(claims(exp: testNow - 1))
        #expect(await tokenError { _ = try await ContentTokenVerifier(keys: keys).verify(t, now: testNow) }
                == .expired(expiry: testNow - 1, now: testNow))
        // Expiry is exclusive: at exp the token is expired; a second before it is not.
        let atExp = try s.token(claims(exp: testNow))
        #expect(await tokenError { _ = try await ContentTokenVerifier(keys: keys).verify(atExp, now: testNow) } == .expired(expiry: testNow, now: testNow))
        _ = try await ContentTokenVerifier(keys: keys).verify(atExp, now: testNow - 1)
        // Leeway tolerates a clock difference.
        _ = try await ContentTokenVerifier(keys: keys, leewaySeconds: 30).verify(t, now: testNow)
    }

    @Test func refusesTokensNotYetValid() async throws {
        let s = TestSigner.newES256()
        let keys = try TokenKeySet([try s.key(kid: "k1")])
        let t = try s.token(claims(nbf: testNow + 10))
        #expect(await tokenError { _ = try await ContentTokenVerifier(keys: keys).verify(t, now: testNow) }
                == .notYetValid(notBefore: testNow + 10, now: testNow))
        _ = try await ContentTokenVerifier(keys: keys).verify(t, now: testNow + 10)
    }

    @Test(arguments: [
        ("", "a JWT has 3 dot-separated parts, this has 1"),
        ("abc.def", "a JWT has 3 dot-separated parts, this has 2"),
        ("a.b.c.d", "a JWT has 3 dot-separated parts, this has 4"),
        ("!!!.e30.", "the header is not base64url"),
        ("e30.***.", "the payload is not base64url"),
        ("bm90IGpzb24.e30.", "the header is not a JSON object"),
        ("e30.e30.", "the header has no \"alg\" string"),
        ("eyJhbGciOjF9.e30.", "the header has no \"alg\" string"),
    ])
    func refusesMalformedTokens(token: String, reason: String) async throws {
        let keys = try TokenKeySet([try TestSigner.newHS256().key(kid: "k1")])
        #expect(await tokenError { _ = try await ContentTokenVerifier(keys: keys).verify(token, now: testNow) } == .malformed(reason))
    }

    @Test func refusesCriticalHeaderExtensions() async throws {
        let s = TestSigner.newHS256()
        let keys = try TokenKeySet([try s.key(kid: "k1")])
        let t = try s.token(claims(), header: ["alg": "HS256", "kid": "k1", "crit": ["exp"]])
        let e = await tokenError { _ = try await ContentTokenVerifier(keys: keys).verify(t, now: testNow) }
        #expect(e == .malformed("the header has critical extensions (\"crit\"), which are not understood"))
    }

    @Test("header members of the wrong type are named: a kid that is not a string, a null crit, a header that is an array")
    func refusesHeaderMembersOfTheWrongType() async throws {
        let s = TestSigner.newHS256()
        let keys = try TokenKeySet([try s.key(kid: "k1")])
        let cases: [(String, String)] = [
            (try s.token(claims(), header: ["alg": "HS256", "kid": 7]), "the header's \"kid\" is not a string"),
            (try s.token(claims(), header: ["alg": "HS256", "kid": NSNull()]), "the header's \"kid\" is not a string"),
            (try s.token(claims(), header: ["alg": "HS256", "kid": "k1", "crit": NSNull()]),
             "the header has critical extensions (\"crit\"), which are not understood"),
            (base64URL(Data("[1]".utf8)) + ".e30.", "the header is not a JSON object"),
        ]
        for (token, reason) in cases {
            #expect(await tokenError { _ = try await ContentTokenVerifier(keys: keys).verify(token, now: testNow) } == .malformed(reason), "\(reason)")
        }
    }

    @Test func refusesUnknownKeyIDs() async throws {
        let s = TestSigner.newHS256()
        let keys = try TokenKeySet([try s.key(kid: "k1")])
        // Signed with the right key but naming another kid: jwt-kit alone would fall back to its
        // default key and accept it.
        let t = try s.token(claims(), kid: "k9")
        #expect(await tokenError { _ = try await ContentTokenVerifier(keys: keys).verify(t, now: testNow) } == .unknownKeyID("k9"))
        // No kid and no key of that algorithm.
        let es = try TestSigner.newES256().token(claims(), kid: nil)
        #expect(await tokenError { _ = try await ContentTokenVerifier(keys: keys).verify(es, now: testNow) } == .noKeyForAlgorithm("ES256"))
    }

    @Test func refusesKeysOfTheWrongType() async throws {
        let hs = TestSigner.newHS256(), es = TestSigner.newES256(), rs = try TestSigner.newRS256()
        let keys = try TokenKeySet([try hs.key(kid: "hmac"), try es.key(kid: "ec"), try rs.key(kid: "rsa")])
        let v = ContentTokenVerifier(keys: keys)
        // An ES256 token naming the HMAC key.
        #expect(await tokenError { _ = try await v.verify(try es.token(claims(), kid: "hmac"), now: testNow) }
                == .keyTypeMismatch(kid: "hmac", keyAlgorithm: "HS256", tokenAlgorithm: "ES256"))
        // The classic confusion: HS256 "signed" with the RSA public key's PEM as the secret.
        guard case let .rs256(rsaKey) = rs else { Issue.record("not RSA"); return }
        let confused = TestSigner.hs256(secret: Array(rsaKey.publicKey.pemRepresentation.utf8))
        #expect(await tokenError { _ = try await v.verify(try confused.token(claims(), kid: "rsa"), now: testNow) }
                == .keyTypeMismatch(kid: "rsa", keyAlgorithm: "RS256", tokenAlgorithm: "HS256"))
        #expect(await tokenError { _ = try await v.verify(try rs.token(claims(), kid: "ec"), now: testNow) }
                == .keyTypeMismatch(kid: "ec", keyAlgorithm: "ES256", tokenAlgorithm: "RS256"))
    }

    @Test func refusesInvalidOrMissingClaims() async throws {
        let s = TestSigner.newHS256()
        let v = ContentTokenVerifier(keys: try TokenKeySet([try s.key(kid: "k1")]))
        #expect(await tokenError { _ = try await v.verify(try s.token(claims(exp: nil)), now: testNow) } == .missingClaim("exp"))
        #expect(await tokenError { _ = try await v.verify(try s.token(claims(policy: nil)), now: testNow) } == .missingClaim("policy"))
        #expect(await tokenError { _ = try await v.verify(try s.token(claims(policy: ["externalOutput": "deny", "capture": "deny"])), now: testNow) }
                == .missingClaim("policy.hdcp"))
        #expect(await tokenError { _ = try await v.verify(try s.token(claims(policy: ["externalOutput": "deny", "hdcp": "type2", "capture": "deny"])), now: testNow) }
                == .invalidClaims("policy.hdcp is \"type2\" (expected none, type0, type1)"))
        #expect(await tokenError { _ = try await v.verify(try s.token(claims(extra: ["playerType": "gpu"])), now: testNow) }
                == .invalidClaims("playerType is \"gpu\" (expected auto, native, hw, sw)"))
        let wrongType = await tokenError { _ = try await v.verify(try s.token(claims(extra: ["live": "yes"])), now: testNow) }
        guard case .invalidClaims? = wrongType else { Issue.record("live as a string: \(String(describing: wrongType))"); return }
    }

    @Test func errorsAreOneLineThatSayWhatToDo() {
        let errors: [ContentTokenError] = [
            .malformed("x"), .unsigned, .unsupportedAlgorithm("HS512"), .unknownKeyID("k9"), .noKeyForAlgorithm("ES256"),
            .keyTypeMismatch(kid: "k", keyAlgorithm: "HS256", tokenAlgorithm: "ES256"), .badSignature(kid: "k"),
            .invalidClaims("x"), .missingClaim("exp"), .expired(expiry: 1, now: 2), .notYetValid(notBefore: 3, now: 2),
        ]
        #expect(Set(errors.map(\.description)).count == errors.count)
        for e in errors { #expect(!e.description.contains("\n") && e.description.hasPrefix("content token")) }
        #expect(ContentTokenError.unsigned.description.contains("alg \"none\""))
    }
}
