import Foundation
import HTTPTypes
import HummingbirdTesting
@testable import ScanoutService
import ScanoutTestSupport
import Testing

@Suite("a request with two Host fields is a 400 naming Host, in either order, and changes nothing")
struct DuplicateHostTests {
    /// `POST /pause` with `hosts` as its Host fields, in that order, over a raw connection.
    func pause(_ server: ServeProcess, hosts: [String]) throws -> RawAnswer {
        let c = try RawConnection(server.tcp)
        let fields = hosts.map { "Host: \($0)\r\n" }.joined()
        try c.send("POST /pause HTTP/1.1\r\n\(fields)Content-Length: 0\r\nConnection: close\r\n\r\n")
        return try RawAnswer(c.read(for: 5))
    }

    @Test("scanout serve: a foreign Host then a loopback one (which passed before) and the reverse are 400; the player plays on")
    func overTCP() throws {
        let server = try limitedServe("{}")
        let loopback = "127.0.0.1:\(server.port)"
        for hosts in [["evil.example", loopback], [loopback, "evil.example"], [loopback, loopback]] {
            let r = try pause(server, hosts: hosts)
            #expect(r.status == 400, "\(hosts): \(r.text)")
            #expect(r.json?["field"] as? String == "Host")
            let message = r.json?["error"] as? String ?? ""
            #expect(message.contains("2 Host fields"), "\(message)")
        }
        #expect(try server.request("GET", "/state").json?["state"] as? String == "playing")
        // One Host, the loopback one: the command is served.
        #expect(try pause(server, hosts: [loopback]).status == 200)
        #expect(try server.request("GET", "/state").json?["state"] as? String == "paused")
    }

    @Test("in process: two Host fields in the request's fields are a 400 naming Host")
    func inProcess() async throws {
        let s = try await HeadlessService()
        try await s.app.test(.router) { client in
            var h = HTTPFields()
            h.append(HTTPField(name: RequestGuard.hostField, value: "evil.example"))
            h.append(HTTPField(name: RequestGuard.hostField, value: "localhost"))
            let r = refusal(try await client.execute(uri: "/play", method: .post, headers: h))
            #expect(r.status == 400 && r.field == "Host", "\(r)")
            #expect(try await s.state(client)["state"] as? String == "ready")
        }
    }
}
