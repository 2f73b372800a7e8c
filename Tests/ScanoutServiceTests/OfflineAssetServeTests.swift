import Foundation
import ScanoutTestSupport
import Testing

/// Offline assets through `scanout serve`: register with a token carrying a licence, status with
/// the licence's state, a rental that expires refused at play (an `error` naming the licence, the
/// item skipped), refresh, unregister.
@Suite(.serialized) struct OfflineAssetServeTests {
    @Test func aRentalAssetIsRegisteredRefusedOnceExpiredRefreshedAndRemoved() async throws {
        let publisher = try await TokenPublisher()
        let clips = try Scratch()
        try FileManager.default.copyItem(atPath: try Fixtures.path("counter.mp4"), toPath: clips.path("counter.mp4"))
        let http = try HTTPFileServer.hls(directory: clips.url.path)
        let source = http.url("counter.mp4")
        // Whole seconds, as a token's NumericDate usually is: a fraction may not survive the
        // JSON round trips exactly.
        let expires = (Date().timeIntervalSince1970 + 5).rounded(.up)
        let rental = try await publisher.token(url: source, licence: LicenceClaim(kind: "rental", expires: expires, playDuration: 3600))
        let purchase = try await publisher.token(url: source, licence: LicenceClaim(kind: "purchase"))
        let plain = try await publisher.token(url: source)
        let other = try await publisher.token(url: http.url("other.mp4"), licence: LicenceClaim(kind: "purchase"))
        let keyFile = publisher.keyFile
        try await offPool {
            let state = try Scratch()
            let config = try OfflineServeTests.config(state, ["stateDir": state.path("state"), "offline": ["minFreeBytes": 0], "autoplay": false])
            let server = try ServeProcess(arguments: ["--config", config, "--output", "headless", "--keys", keyFile])
            func post(_ path: String, _ body: [String: Any]) throws -> HTTPAnswer {
                try server.request("POST", path, body: String(decoding: JSONSerialization.data(withJSONObject: body), as: UTF8.self))
            }
            // Refusals: no token, an id that is not a name, a token for other media.
            #expect(try post("/assets", ["id": "film", "source": source]).status == 400)
            #expect(try post("/assets", ["id": "../film", "source": source, "token": rental]).json?["field"] as? String == "id")
            let mismatch = try post("/assets", ["id": "film", "source": source, "token": other])
            #expect(mismatch.status == 403 && mismatch.json?["field"] as? String == "token", "\(mismatch.text)")

            let created = try post("/assets", ["id": "film", "token": rental])
            #expect(created.status == 201 && created.json?["id"] as? String == "film" && created.json?["source"] as? String == source,
                    "\(created.text)")
            #expect(try post("/assets", ["id": "film", "token": rental]).status == 409)
            _ = try OfflineServeTests.wait({ try server.request($0, $1) }, "film", for: "completed")
            let kept = try #require(try server.request("GET", "/assets/film").json?["licence"] as? [String: Any])
            #expect(kept["kind"] as? String == "rental" && kept["state"] as? String == "valid" && kept["expires"] as? Double == expires, "\(kept)")

            // Past its expiry: refused at play with the reason, the next item plays.
            while Date().timeIntervalSince1970 < expires + 0.5 { usleep(100_000) }
            let expired = try #require(try server.request("GET", "/assets/film").json?["licence"] as? [String: Any])
            #expect(expired["state"] as? String == "expired" && expired["expiredAt"] as? Double == expires, "\(expired)")
            let events = try SSEReader(server.tcp, path: "/events")
            let load = try post("/load", ["playlist": [["source": source, "token": rental], ["source": try Fixtures.path("counter.mp4")]],
                                          "autoplay": true])
            #expect(load.status == 200, "\(load.text)")
            let seen = events.read(timeout: 15) { $0.event == "firstFrame" }
            let error = try #require(seen.first { $0.event == "error" }?.json)
            #expect((error["message"] as? String)?.contains("licence of asset film expired") == true && error["skipped"] as? Bool == true,
                    "\(error)")
            #expect(try server.request("POST", "/stop").status == 200)

            // A refresh with a purchase: valid again, for good.
            let refreshed = try post("/assets/film/refresh", ["token": purchase])
            let licence = try #require(refreshed.json?["licence"] as? [String: Any], "\(refreshed.text)")
            #expect(licence["kind"] as? String == "purchase" && licence["state"] as? String == "valid" && licence["remaining"] is NSNull)
            #expect(try post("/assets/film/refresh", ["token": plain]).status == 422)

            #expect(try server.request("DELETE", "/assets/film").status == 200)
            #expect(try server.request("GET", "/assets/film").status == 404)
            #expect(server.terminate() == 0)
        }
    }
}
