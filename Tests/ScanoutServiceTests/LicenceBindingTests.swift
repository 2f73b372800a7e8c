import Foundation
import ScanoutOffline
import ScanoutTestSupport
import Testing

/// A content key goes only to a token for its content: `/licence/KID` checks the token's `url`
/// (or `kids`) against the key and its licence against now; and the content token goes only to
/// the key server the token names or to the playlist's own origin.
@Suite(.serialized) struct LicenceBindingTests {
    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
    /// counter.mp4 as an AES-128 HLS VOD (`enc.m3u8`, 1 s segments) with its key at `keys/k1`, in a
    /// scratch folder served over loopback.
    static func encryptedHLS() throws -> (media: Scratch, http: HTTPFileServer) {
        let media = try Scratch()
        let http = try HTTPFileServer.hls(directory: media.url.path)
        try FileManager.default.createDirectory(atPath: media.path("keys"), withIntermediateDirectories: true)
        try Data(random16()).write(to: URL(fileURLWithPath: media.path("keys/k1")))
        try "\(http.url("keys/k1"))\n\(media.path("keys/k1"))\n".write(toFile: media.path("keyinfo"), atomically: true, encoding: .utf8)
        _ = try Proc.ffmpeg(["-i", try Fixtures.path("counter.mp4"), "-c", "copy", "-f", "hls", "-hls_time", "1", "-hls_playlist_type", "vod",
                             "-hls_key_info_file", media.path("keyinfo"), media.path("enc.m3u8")])
        return (media, http)
    }

    static func random16() -> [UInt8] { (0..<16).map { _ in UInt8.random(in: 0...255) } }

    @Test func theLicenceEndpointHandsAKeyOnlyToATokenForItsContent() async throws {
        let publisher = try await TokenPublisher()
        let one = Self.random16(), two = Self.random16()
        let conf = try Scratch()
        let film = "https://cdn.example/film.mp4"
        let keys: [String: Any] = ["kid1": Self.hex(one), "kid2": ["key": Self.hex(two), "content": [film]]]
        try JSONSerialization.data(withJSONObject: ["keys": keys]).write(to: URL(fileURLWithPath: conf.path("licence-keys.json")))
        let config = try OfflineServeTests.config(conf, ["stateDir": conf.path("state"),
                                                         "offline": ["minFreeBytes": 0, "licenceKeys": conf.path("licence-keys.json")]])
        let server = try ServeProcess(arguments: ["--config", config, "--output", "headless", "--keys", publisher.keyFile])
        defer { _ = server.terminate() }
        let now = Date().timeIntervalSince1970
        func ask(_ kid: String, _ token: String) throws -> HTTPAnswer {
            try server.request("GET", "/licence/\(kid)", headers: ["X-Content-Token": token])
        }

        // Refused, each naming why: no url and no key; a url for other content; a kids claim
        // naming another key; a licence that has ended.
        let refusals: [(kid: String, token: String, why: String)] = [
            ("kid1", try await publisher.token(), "names no content (no url claim) and no key (no kids claim)"),
            ("kid2", try await publisher.token(url: "https://cdn.example/other.mp4"), "which is not content of key \"kid2\""),
            ("kid1", try await publisher.token(url: film), "which is not content of key \"kid1\""),
            ("kid2", try await publisher.token(kids: ["kid1"]), "its kids claim does not name key \"kid2\""),
            ("kid1", try await publisher.token(licence: LicenceClaim(kind: "rental", expires: now - 60), kids: ["kid1"]),
             "its licence (rental) expired at"),
        ]
        for r in refusals {
            let answer = try ask(r.kid, r.token)
            #expect(answer.status == 403 && Array(answer.body) != one && Array(answer.body) != two, "\(r.kid): \(answer.text)")
            #expect((answer.json?["error"] as? String)?.contains(r.why) == true, "\(answer.text)")
        }

        // Handed: the url the key file lists for the key; the key named by kids (its case aside);
        // a rental still running.
        #expect(Array(try ask("kid2", try await publisher.token(url: film)).body) == two)
        #expect(Array(try ask("kid1", try await publisher.token(kids: ["KID1", "kid9"])).body) == one)
        let running = try await publisher.token(licence: LicenceClaim(kind: "rental", expires: now + 3600), kids: ["kid1"])
        #expect(Array(try ask("kid1", running).body) == one)
    }

    @Test func aCENCDownloadAsksTheServicesKeyOnlyWithATokenForThatSource() async throws {
        let publisher = try await TokenPublisher()
        let key = Self.random16()
        let kid = Self.hex(Self.random16())
        let conf = try Scratch()
        try JSONSerialization.data(withJSONObject: ["keys": [kid: Self.hex(key)]]).write(to: URL(fileURLWithPath: conf.path("licence-keys.json")))
        let config = try OfflineServeTests.config(conf, ["stateDir": conf.path("state"),
                                                         "offline": ["minFreeBytes": 0, "licenceKeys": conf.path("licence-keys.json")]])
        let server = try ServeProcess(arguments: ["--config", config, "--output", "headless", "--keys", publisher.keyFile])
        defer { _ = server.terminate() }
        let media = try Scratch()
        try OfflineCENCTests.encrypt(into: media.path("enc.mp4"), key: key, kid: kid)
        let http = try HTTPFileServer.hls(directory: media.url.path)
        let source = http.url("enc.mp4")
        let anyContent = try await publisher.token()
        let forSource = try await publisher.token(url: source)

        // A token for no content in particular plays anything, but is handed no key.
        let refused = try server.request("POST", "/downloads", body: #"{"source": "\#(source)", "token": "\#(anyContent)"}"#)
        #expect(refused.status == 422, "\(refused.text)")
        #expect((refused.json?["error"] as? String)?.contains("HTTP 403: token: it names no content") == true, "\(refused.text)")
        #expect(Array(try server.request("GET", "/licence/\(kid)", headers: ["X-Content-Token": anyContent]).body) != key)

        // The token for this source: the key is in the file the download found it named in.
        let added = try server.request("POST", "/downloads", body: #"{"source": "\#(source)", "token": "\#(forSource)"}"#)
        #expect(added.status == 201, "\(added.text)")
        let id = try #require(added.json?["id"] as? String)
        _ = try OfflineServeTests.wait({ try server.request($0, $1) }, id, for: "completed")
        // Over HTTP too, now that the store keeps the download with that key.
        #expect(Array(try server.request("GET", "/licence/\(kid)", headers: ["X-Content-Token": forSource]).body) == key)
    }

    @Test func theTokenGoesToNoKeyURIOnAThirdHost() async throws {
        let media = try Scratch()
        let playlistServer = try HTTPFileServer.hls(directory: media.url.path)
        let third = try HTTPFileServer.hls(directory: media.url.path)
        let key = Self.random16()
        try FileManager.default.createDirectory(atPath: media.path("keys"), withIntermediateDirectories: true)
        try Data(key).write(to: URL(fileURLWithPath: media.path("keys/k1")))
        // The key URI on the playlist's own origin, and a copy of the playlist naming a third host.
        try "\(playlistServer.url("keys/k1"))\n\(media.path("keys/k1"))\n".write(toFile: media.path("keyinfo"), atomically: true, encoding: .utf8)
        _ = try Proc.ffmpeg(["-i", try Fixtures.path("counter.mp4"), "-c", "copy", "-f", "hls", "-hls_time", "1", "-hls_playlist_type", "vod",
                             "-hls_key_info_file", media.path("keyinfo"), media.path("enc.m3u8")])
        let text = try String(contentsOfFile: media.path("enc.m3u8"), encoding: .utf8)
        #expect(text.contains(playlistServer.url("keys/k1")))
        try text.replacingOccurrences(of: playlistServer.url("keys/k1"), with: third.url("keys/k1"))
            .write(toFile: media.path("third.m3u8"), atomically: true, encoding: .utf8)
        let token = try await TokenPublisher().token()

        let h = try OfflineHarness()
        await h.expectRefused([(DownloadRequest(source: playlistServer.url("third.m3u8"), token: token),
                                "is not on the playlist's origin (http://127.0.0.1:\(playlistServer.port)) and its token names no key server")])
        #expect(!(try third.control("log")).contains("/keys/"), "the third host was asked for the key")
        #expect(try h.manager.statuses().isEmpty)

        // On the playlist's own origin, the key is fetched with the token.
        let added = try await h.manager.add(DownloadRequest(source: playlistServer.url("enc.m3u8"), token: token))
        _ = try await h.wait(added.record.id, for: .completed)
        #expect(try playlistServer.control("log").contains("/keys/k1"))
        let local = try #require(h.manager.localInput(for: playlistServer.url("enc.m3u8"))).get().source
        #expect(try OfflineHarness.md5s(local) == OfflineHarness.md5s(try Fixtures.path("counter.mp4")))
        try await h.manager.remove(added.record.id)
    }

    @Test func theTokenIsNotCarriedOnARedirectToAnotherOrigin() async throws {
        let (media, http) = try Self.encryptedHLS()
        let token = try await TokenPublisher().token()
        try http.control("bearer?prefix=/keys&token=\(token)")
        // The key server the token names sends the request on to another origin.
        let (redirector, port) = try OfflineHardeningTests.redirector(to: "http://127.0.0.1:\(http.port)", in: media)
        let h = try OfflineHarness()
        await h.expectRefused([(DownloadRequest(source: http.url("enc.m3u8"), token: token, keyServer: "http://127.0.0.1:\(port)/keys/{kid}"),
                                "HTTP 401")])
        #expect(try http.control("log").contains("/keys/k1"))
        withExtendedLifetime(redirector) {}
    }
}
