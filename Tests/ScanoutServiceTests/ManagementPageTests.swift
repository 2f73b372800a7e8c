import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
@testable import ScanoutService
import ScanoutTestSupport
import Testing

/// The management page (`GET /`, `/page/...`): the files built into the binary are the ones in
/// Sources/ScanoutService/Page, each served with its type, its tag and a policy that allows this
/// origin only; other machines load them without a token, and nothing else.
@Suite struct ManagementPageTests {
    static let pageDirectory = Fixtures.packageRoot.appendingPathComponent("Sources/ScanoutService/Page")

    /// The path each file of the page directory is served at.
    static func servedPath(of file: String) -> String { file == "index.html" ? "/" : "/page/\(file)" }

    @Test("every file of Sources/ScanoutService/Page is served as it is on disk, and nothing else")
    func theBinaryServesThePageDirectory() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.pageDirectory.path).sorted()
        #expect(Set(files.map(Self.servedPath)) == ManagementPage.publicPaths)
        for file in files {
            let asset = try #require(ManagementPage.assets.first { $0.path == Self.servedPath(of: file) })
            let onDisk = try Data(contentsOf: Self.pageDirectory.appendingPathComponent(file))
            #expect(Data(asset.bytes) == onDisk, "\(file): the binary's copy differs from the source")
        }
    }

    @Test("each file: 200 with its type, no-cache, an ETag, a same-origin policy; 304 for its tag; 405 for POST")
    func headersOfEveryFile() async throws {
        let service = try await HeadlessService()
        let types = ["/": "text/html; charset=utf-8", "/page/app.js": "text/javascript; charset=utf-8",
                     "/page/style.css": "text/css; charset=utf-8", "/page/icon.svg": "image/svg+xml"]
        try await service.app.test(.router) { client in
            for asset in ManagementPage.assets {
                let r = try await client.execute(uri: asset.path, method: .get)
                #expect(r.status == .ok, "\(asset.path)")
                #expect(Array(r.body.readableBytesView) == asset.bytes, "\(asset.path)")
                if let type = types[asset.path] { #expect(r.headers[.contentType] == type, "\(asset.path)") }
                #expect(r.headers[.cacheControl] == "no-cache")
                #expect(r.headers[.xContentTypeOptions] == "nosniff")
                let policy = try #require(r.headers[.contentSecurityPolicy], "\(asset.path) has no Content-Security-Policy")
                #expect(policy.hasPrefix("default-src 'self';") && policy.contains("script-src 'self';") && policy.contains("frame-ancestors 'none'"))
                #expect(!policy.contains("unsafe-inline") && !policy.contains("unsafe-eval") && !policy.contains("http"))
                let tag = try #require(r.headers[.eTag])
                let again = try await client.execute(uri: asset.path, method: .get, headers: headers(["If-None-Match": "\"0\", \(tag)"]))
                #expect(again.status == .notModified && again.body.readableBytes == 0, "\(asset.path): \(again.status)")
                let stale = try await client.execute(uri: asset.path, method: .get, headers: headers(["If-None-Match": "\"0\""]))
                #expect(stale.status == .ok)
                let post = try await client.execute(uri: asset.path, method: .post)
                #expect(post.status == .methodNotAllowed && post.headers[.allow] == "GET", "\(asset.path)")
            }
            // Other files under /page are not there.
            #expect(try await client.execute(uri: "/page/secret.js", method: .get).status == .notFound)
        }
    }

    @Test("the page needs nothing from elsewhere and runs no inline script or style")
    func thePageIsSelfContained() throws {
        let html = String(decoding: try #require(ManagementPage.assets.first { $0.path == "/" }).bytes, as: UTF8.self)
        #expect(!html.contains("<script>") && !html.contains(" style=") && !html.contains("javascript:"))
        #expect(html.range(of: #"\son[a-z]+="#, options: .regularExpression) == nil, "an inline event handler")
        // Every reference of the HTML and every module import is a file the page serves.
        var references = try matches(#"(?:src|href)="([^"]+)""#, in: html)
        for asset in ManagementPage.assets where asset.path.hasSuffix(".js") {
            let script = String(decoding: asset.bytes, as: UTF8.self)
            references += try matches(#"from "\./([^"]+)""#, in: script).map { "/page/\($0)" }
            #expect(!script.contains("innerHTML") && !script.contains("eval("), "\(asset.path)")
        }
        #expect(!references.isEmpty)
        for r in references { #expect(ManagementPage.publicPaths.contains(r), "\(r) is not served") }
    }

    @Test("from another machine: the page loads without a token, the API still needs it")
    func anotherMachineLoadsThePageButNotTheAPI() throws {
        guard let address = nonLoopbackIPv4() else {
            Issue.record("this machine has no non-loopback IPv4 address to test from")
            return
        }
        for token in ["s3cret", nil] {
            var env = ProcessInfo.processInfo.environment
            env["SCANOUT_TOKEN"] = token
            let server = try ServeProcess(arguments: ["--output", "headless", "--host", "0.0.0.0"], environment: env)
            let remote = HTTPEndpoint.tcp(host: address, port: server.port)
            for asset in ManagementPage.assets {
                let page = try HTTPTestClient.request(remote, "GET", asset.path)
                #expect(page.status == 200 && page.headers["content-type"] == asset.contentType, "\(asset.path): \(page.status)")
            }
            let state = try HTTPTestClient.request(remote, "GET", "/state")
            #expect(state.status == (token == nil ? 403 : 401) && state.json?["field"] as? String == "Authorization", "\(state.text)")
            // Only GET is let through: a POST to the page's path needs the token as any other.
            #expect(try HTTPTestClient.request(remote, "POST", "/").status == (token == nil ? 403 : 401))
            if let token {
                let allowed = try HTTPTestClient.request(remote, "GET", "/state", headers: ["Authorization": "Bearer \(token)"])
                #expect(allowed.status == 200)
            }
            // A page of another site is refused as before (Origin).
            let foreign = try HTTPTestClient.request(remote, "GET", "/", headers: ["Origin": "http://evil.example"])
            #expect(foreign.status == 403 && foreign.json?["field"] as? String == "Origin")
            #expect(server.terminate() == 0)
        }
    }

    private func matches(_ pattern: String, in text: String) throws -> [String] {
        let regex = try NSRegularExpression(pattern: pattern)
        return regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap { m in
            Range(m.range(at: 1), in: text).map { String(text[$0]) }
        }
    }
}
