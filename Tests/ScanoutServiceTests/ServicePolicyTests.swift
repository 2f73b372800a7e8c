import Foundation
import Hummingbird
import HummingbirdTesting
import ScanoutPlayer
import ScanoutService
import ScanoutTestSupport
import Testing

// Content tokens per item, and the policy on each KMS output (HDMI-A-1, external; eDP-1, an
// internal panel), through the control API in-process.

@Suite("content policy in the service")
struct ServicePolicyTests {
    @Test("a token that denies external outputs censors HDMI-A-1 and keeps showing on the internal panel")
    func externalOutputDenyCensorsTheExternalConnectorOnly() async throws {
        let publisher = try await TokenPublisher()
        let clip = try Fixtures.path("counter.mp4")
        let token = try await publisher.token(externalOutput: "deny")
        let service = try await InProcessService(keys: publisher.keyFile)
        defer { service.player.shutdown() }
        try await Application(router: service.api.router()).test(.router) { client in
            let load = try await service.request(client, .post, "/load", ["source": clip, "token": token])
            #expect(load.status == 200)
            #expect((load.json["playlist"] as? [[String: Any]])?.first?["tokenSet"] as? Bool == true)
            try await service.wait {
                let stats = try await service.request(client, .get, "/stats").json
                return ((stats["framesCensored"] as? [String: Int])?["HDMI-A-1"] ?? 0) >= 10
            }
            let stats = try await service.request(client, .get, "/stats").json
            let censored = try #require(stats["framesCensored"] as? [String: Int])
            #expect(censored["HDMI-A-1", default: 0] >= 10)
            #expect(censored["eDP-1"] == nil)
            // What the screens hold: the background on HDMI-A-1, the counter's white bits on eDP-1.
            let brightest = try await service.brightestOnScreen()
            #expect(brightest["HDMI-A-1"] == 0)
            #expect(brightest["eDP-1", default: 0] > 128)
            let restricted = service.events.compactMap { e -> String? in
                if case let .outputCensored(output, reason?) = e { return "\(output): \(reason)" } else { return nil }
            }
            #expect(restricted.count == 1)
            #expect(restricted.first?.hasPrefix("HDMI-A-1: HDMI-A-1: external output") == true)
            var metrics = ""
            _ = try await client.execute(uri: "/metrics", method: .get) { metrics = String(buffer: $0.body) }
            #expect(metrics.contains("scanout_frames_censored_total{output=\"HDMI-A-1\"}"))
            #expect(!metrics.contains("output=\"eDP-1\""))
        }
    }

    @Test("an expired token is refused with 403 naming the token, and nothing is played")
    func expiredTokenIsRefused() async throws {
        let publisher = try await TokenPublisher()
        let clip = try Fixtures.path("counter.mp4")
        let expired = try await publisher.token(expiresIn: -120)
        let service = try await InProcessService(keys: publisher.keyFile)
        defer { service.player.shutdown() }
        try await Application(router: service.api.router()).test(.router) { client in
            let load = try await service.request(client, .post, "/load", ["source": clip, "token": expired])
            #expect(load.status == 403)
            #expect(load.json["field"] as? String == "token")
            #expect((load.json["error"] as? String)?.contains("content token expired") == true)
            let inPlaylist = try await service.request(client, .post, "/load", ["playlist": [["source": clip], ["source": clip, "token": expired]]])
            #expect(inPlaylist.status == 403)
            #expect(inPlaylist.json["field"] as? String == "playlist[1].token")
            let state = try await service.request(client, .get, "/state").json
            #expect(state["state"] as? String == "idle")
            #expect((state["playlist"] as? [Any])?.isEmpty == true)
        }
    }

    @Test("while the service captures, content whose policy denies capture is refused (403 naming the token); other content loads")
    func captureDenyIsRefusedWhileCapturing() async throws {
        let publisher = try await TokenPublisher()
        let clip = try Fixtures.path("counter.mp4")
        let noCapture = try await publisher.token(capture: "deny")
        let allowed = try await publisher.token()
        let capturing = try await InProcessService(keys: publisher.keyFile, capture: "/tmp/captures")
        defer { capturing.player.shutdown() }
        try await Application(router: capturing.api.router()).test(.router) { client in
            let refused = try await capturing.request(client, .post, "/load", ["source": clip, "token": noCapture, "autoplay": false])
            #expect(refused.status == 403)
            #expect(refused.json["field"] as? String == "token")
            #expect((refused.json["error"] as? String)?.contains("writeback capture refused: the content policy denies capture") == true)
            let state = try await capturing.request(client, .get, "/state").json
            #expect((state["playlist"] as? [Any])?.isEmpty == true)
            let ok = try await capturing.request(client, .post, "/load", ["source": clip, "token": allowed, "autoplay": false])
            #expect(ok.status == 200)
        }
        // Without capture, the same token plays.
        let plain = try await InProcessService(keys: publisher.keyFile)
        defer { plain.player.shutdown() }
        try await Application(router: plain.api.router()).test(.router) { client in
            let load = try await plain.request(client, .post, "/load", ["source": clip, "token": noCapture, "autoplay": false])
            #expect(load.status == 200)
        }
    }

    @Test("a token's url is the item's source when the request names none; without keys a token is refused")
    func tokenURLIsTheSource() async throws {
        let publisher = try await TokenPublisher()
        let clip = try Fixtures.path("counter.mp4")
        let token = try await publisher.token(url: clip)
        let service = try await InProcessService(keys: publisher.keyFile)
        defer { service.player.shutdown() }
        try await Application(router: service.api.router()).test(.router) { client in
            let load = try await service.request(client, .post, "/load", ["token": token, "autoplay": false])
            #expect(load.status == 200)
            #expect((load.json["playlist"] as? [[String: Any]])?.first?["source"] as? String == clip)
            #expect(load.json["state"] as? String == "ready")
        }
        let keyless = try await InProcessService(keys: nil)
        defer { keyless.player.shutdown() }
        try await Application(router: keyless.api.router()).test(.router) { client in
            let load = try await keyless.request(client, .post, "/load", ["source": clip, "token": token])
            #expect(load.status == 403)
            #expect((load.json["error"] as? String)?.contains("needs keys") == true)
        }
    }

    @Test("the kiosk config's items take tokens: an item whose token is expired is left out, the others play under their policy")
    func kioskPlaylistTokens() async throws {
        let publisher = try await TokenPublisher()
        let clip = try Fixtures.path("counter.mp4")
        let expired = try await publisher.token(expiresIn: -120)
        let deny = try await publisher.token(url: clip, externalOutput: "deny")
        // As the config file spells them.
        let file = publisher.scratch.path("scanout.json")
        let json: [String: Any] = ["keys": publisher.keyFile, "output": "headless",
                                   "playlist": [["source": clip, "token": expired], ["token": deny, "playerType": "sw"]]]
        try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: file))
        let config = try ServiceConfig.load(file: file)
        #expect(config.keys == publisher.keyFile)
        #expect(config.playlist == [PlaylistItem(source: clip, token: expired), PlaylistItem(source: "", playerType: .sw, token: deny)])
        // Looping, as a kiosk plays: a busy machine may take longer than the clip to count 10 frames.
        let service = try await InProcessService(keys: config.keys, playlist: config.playlist, repeatMode: .all)
        defer { service.player.shutdown() }
        try await service.wait { service.player.snapshot.framesCensored["HDMI-A-1", default: 0] >= 10 }
        let s = service.player.snapshot
        #expect(s.playlist == [PlaylistItem(source: clip, playerType: .sw, token: deny)])
        #expect(s.state == .playing)
        #expect(s.framesCensored["HDMI-A-1", default: 0] >= 10)
        #expect(s.framesCensored["eDP-1"] == nil)
    }

    @Test("a token that needs HDCP: hdcpChanged pending on HDMI-A-1, censored until the link is up; the panel shows")
    func hdcpPolicyReportsTheLinkState() async throws {
        let publisher = try await TokenPublisher()
        let clip = try Fixtures.path("counter.mp4")
        let token = try await publisher.token(hdcp: "type0")
        let service = try await InProcessService(keys: publisher.keyFile) { fakeScreens(hdcp: true) }
        defer { service.player.shutdown() }
        try await Application(router: service.api.router()).test(.router) { client in
            #expect(try await service.request(client, .post, "/load", ["source": clip, "token": token]).status == 200)
            try await service.wait { service.player.snapshot.framesCensored["HDMI-A-1", default: 0] >= 10 }
            let hdcp = service.events.compactMap { e -> String? in
                if case let .hdcpChanged(output, state) = e { return "\(output) \(state)" } else { return nil }
            }
            #expect(hdcp.first == "HDMI-A-1 pending")
            #expect(!hdcp.contains { $0.hasPrefix("eDP-1") })
            let censored = service.events.compactMap { e -> String? in
                if case let .outputCensored(output, reason?) = e { return "\(output): \(reason)" } else { return nil }
            }
            #expect(censored.first?.hasPrefix("HDMI-A-1: HDMI-A-1: waiting for HDCP type0") == true)
            let brightest = try await service.brightestOnScreen()
            #expect(brightest["HDMI-A-1"] == 0)
            #expect(brightest["eDP-1", default: 0] > 128)
        }
    }
}
