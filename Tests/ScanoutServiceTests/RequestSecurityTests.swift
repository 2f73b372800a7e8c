import Foundation
import ScanoutCore
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import ScanoutDisplay
import ScanoutPlayer
@testable import ScanoutService
import ScanoutTestSupport
import Testing

@Suite("request security, in process: each refusal names its reason and leaves playback alone")
struct RequestSecurityTests {
    @Test("a foreign Host is refused (403, Host); loopback names, the listening host and allowedHosts pass")
    func foreignHost() async throws {
        let s = try await HeadlessService { $0.allowedHosts = ["kiosk.example"] }
        try await s.app.test(.router) { client in
            for host in ["evil.example:8480", "evil.example", "192.0.2.7:8480", "localhost.evil.example"] {
                let r = refusal(try await client.execute(uri: "/play", method: .post, headers: headers(["Host": host])))
                #expect(r.status == 403 && r.field == "Host" && r.error.contains(host), "\(host): \(r)")
            }
            #expect(try await s.state(client)["state"] as? String == "ready")
            for host in ["localhost:8480", "127.0.0.1:8480", "[::1]:8480", "KIOSK.example:80", "app.localhost"] {
                let r = try await client.execute(uri: "/state", method: .get, headers: headers(["Host": host]))
                #expect(r.status == .ok, "\(host)")
            }
        }
    }

    @Test("a foreign Origin is refused (403, Origin), and so is the opaque origin null; a page of this machine passes")
    func foreignOrigin() async throws {
        let s = try await HeadlessService { $0.allowedHosts = ["dashboard.example"] }
        try await s.app.test(.router) { client in
            for origin in ["http://evil.example", "https://evil.example:8443", "null", "file://"] {
                let r = refusal(try await client.execute(uri: "/play", method: .post, headers: headers(["Origin": origin])))
                #expect(r.status == 403 && r.field == "Origin", "\(origin): \(r)")
            }
            #expect(try await s.state(client)["state"] as? String == "ready")
            for origin in ["http://localhost:3000", "http://127.0.0.1:8480", "https://dashboard.example"] {
                let r = try await client.execute(uri: "/state", method: .get, headers: headers(["Origin": origin]))
                #expect(r.status == .ok, "\(origin)")
            }
        }
    }

    @Test("a body must be application/json (415, Content-Type): text/plain, a form, or no type at all")
    func contentType() async throws {
        let s = try await HeadlessService()
        try await s.app.test(.router) { client in
            let body = ByteBuffer(string: #"{"rate": 2}"#)
            for type in ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", nil] {
                let h = type.map { headers(["Content-Type": $0]) } ?? HTTPFields()
                let r = refusal(try await client.execute(uri: "/rate", method: .put, headers: h, body: body))
                #expect(r.status == 415 && r.field == "Content-Type", "\(type ?? "none"): \(r)")
            }
            // A bodiless command with a form's type is refused too (what a cross-site form sends).
            let form = refusal(try await client.execute(uri: "/play", method: .post, headers: headers(["Content-Type": "text/plain"])))
            #expect(form.status == 415 && form.field == "Content-Type")
            #expect(try await s.state(client)["rate"] as? Double == 1)
            #expect(try await s.state(client)["state"] as? String == "ready")
            let ok = try await client.execute(uri: "/rate", method: .put, headers: headers(["Content-Type": "application/json; charset=utf-8"]), body: body)
            #expect(ok.status == .ok)
            #expect(try await s.state(client)["rate"] as? Double == 2)
        }
    }

    @Test("a body over 1 MiB is refused (413, body) and nothing is loaded")
    func tooLarge() async throws {
        let s = try await HeadlessService()
        try await s.app.test(.router) { client in
            let big = #"{"source": ""# + String(repeating: "a", count: ControlAPI.maxBodyBytes) + #""}"#
            let r = refusal(try await client.execute(uri: "/load", method: .post, headers: headers(["Content-Type": "application/json"]),
                                                     body: ByteBuffer(string: big)))
            #expect(r.status == 413 && r.field == "body", "\(r)")
            let st = try await s.state(client)
            #expect(st["state"] as? String == "ready" && (st["playlist"] as? [Any])?.count == 1)
        }
    }

    @Test("over the rate limit: 429 with Retry-After naming the rate; the refused command does not run")
    func rateLimit() async throws {
        let s = try await HeadlessService { $0.rateLimit = ServiceConfig.RateLimit(perSecond: 0.001, burst: 3) }
        try await s.app.test(.router) { client in
            for _ in 0..<3 { #expect(try await client.execute(uri: "/health", method: .get).status != .tooManyRequests) }
            let response = try await client.execute(uri: "/play", method: .post)
            let r = refusal(response)
            #expect(r.status == 429 && r.field == "rate" && r.error.contains("0.001 requests a second"), "\(r)")
            #expect(Int(response.headers[.retryAfter] ?? "") ?? 0 >= 1)
        }
        #expect(s.player.snapshot.state == .ready)
    }

    @Test("token comparison: equal only for the same bytes, whatever the lengths")
    func tokenComparison() {
        #expect(AuthMiddleware.constantTimeEqual("Bearer s3cret", "Bearer s3cret"))
        for wrong in ["Bearer s3cre", "Bearer s3cret!", "Bearer s3creT", "", "Bearer s3cret\u{0}"] {
            #expect(!AuthMiddleware.constantTimeEqual(wrong, "Bearer s3cret"), "\(wrong)")
        }
    }

    @Test("rate limiter: a burst, then one request per refill interval")
    func bucket() {
        let limiter = RateLimiter(perSecond: 2, burst: 2)
        let t0 = ClockTime.now()
        #expect(limiter.take("a", now: t0) == .allowed)
        #expect(limiter.take("a", now: t0) == .allowed)
        #expect(limiter.take("a", now: t0) == .refused(retryAfterSeconds: 1))
        #expect(limiter.take("b", now: t0) == .allowed, "buckets are per client")
        #expect(limiter.take("a", now: t0 + .milliseconds(500)) == .allowed)
        #expect(limiter.take("a", now: t0 + .milliseconds(600)) == .refused(retryAfterSeconds: 1))
    }
}
