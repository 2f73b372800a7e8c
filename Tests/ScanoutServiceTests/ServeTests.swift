import Foundation
import ScanoutService
import ScanoutTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The OpenAPI document of the control API.
struct OpenAPIDoc {
    let doc: [String: Any]
    init() throws {
        let url = Fixtures.packageRoot.appendingPathComponent("docs/openapi.json")
        doc = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
    }
    var paths: [String: [String: Any]] { doc["paths"] as? [String: [String: Any]] ?? [:] }
    /// Every (method, path) documented.
    var operations: [(method: String, path: String, op: [String: Any])] {
        paths.flatMap { path, ops in ops.compactMap { m, o in (o as? [String: Any]).map { (m.uppercased(), path, $0) } } }
            .sorted { ($0.path, $0.method) < ($1.path, $1.method) }
    }
    func resolve(_ o: [String: Any]) -> [String: Any] {
        guard let r = o["$ref"] as? String else { return o }
        var node: Any = doc
        for part in r.dropFirst(2).split(separator: "/") { node = (node as? [String: Any])?[String(part)] ?? [:] }
        return resolve(node as? [String: Any] ?? [:])
    }
    /// The documented statuses and, per status, the required fields of its JSON body.
    func responses(_ op: [String: Any]) -> [Int: [String]] {
        var out: [Int: [String]] = [:]
        for (code, r) in op["responses"] as? [String: Any] ?? [:] {
            let resp = resolve(r as? [String: Any] ?? [:])
            let schema = ((resp["content"] as? [String: Any])?["application/json"] as? [String: Any])?["schema"] as? [String: Any]
            out[Int(code)!] = schema.map { resolve($0)["required"] as? [String] ?? [] } ?? []
        }
        return out
    }
    func example(_ op: [String: Any]) -> Any? {
        ((op["requestBody"] as? [String: Any])?["content"] as? [String: Any]).flatMap { ($0["application/json"] as? [String: Any])?["example"] }
    }
}

func json(_ object: Any) -> String {
    String(decoding: try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .fragmentsAllowed]), as: UTF8.self)
}

/// Replaces the documented example sources by a fixture path, so that the requests really play.
func localized(_ v: Any, source: String) -> Any {
    if let s = v as? String, s.hasPrefix("/srv/") || s.hasPrefix("http://cdn.") { return source }
    if let a = v as? [Any] { return a.map { localized($0, source: source) } }
    if let d = v as? [String: Any] { return d.mapValues { localized($0, source: source) } }
    return v
}

@Suite(.serialized) struct ServeTests {
    @Test func everyRouteIsDocumentedAndEveryDocumentedOperationAnswersAsDocumented() async throws {
        let doc = try OpenAPIDoc()
        let documented = Set(doc.operations.map { "\($0.method) \($0.path)" })
        // The routes as the router holds them (the route collections of the control API).
        let served = Set(try await HeadlessService().api.routes.map { "\($0.method) \($0.path)" })
        #expect(documented == served, "undocumented: \(served.subtracting(documented).sorted()), not served: \(documented.subtracting(served).sorted())")

        let clip = try Fixtures.path("counter.mp4")
        let server = try ServeProcess(arguments: ["--repeat", "all", "--output", "headless", clip])
        for (method, path, op) in doc.operations {
            let documentedStatuses = doc.responses(op)
            if path == "/events" {
                let reader = try SSEReader(server.tcp, path: path)
                let first = reader.read(timeout: 5) { _ in true }
                #expect(reader.status == 200)
                let state = try #require(first.first?.json, "no first message on /events")
                let required = doc.resolve(["$ref": "#/components/schemas/State"])["required"] as? [String] ?? []
                #expect(first.first?.event == "state")
                #expect(Set(required).isSubset(of: Set(state.keys)), "event stream state lacks \(Set(required).subtracting(state.keys))")
                continue
            }
            let example = doc.example(op).map { json(localized($0, source: clip)) }
            let answer = try server.request(method, path, body: example ?? (method == "GET" ? nil : "{}"))
            let required = documentedStatuses[answer.status]
            #expect(required != nil, "\(method) \(path) answered \(answer.status), documented: \(documentedStatuses.keys.sorted()) — \(answer.text)")
            if let required, !required.isEmpty {
                let body = try #require(answer.json, "\(method) \(path): not JSON: \(answer.text)")
                #expect(Set(required).isSubset(of: Set(body.keys)), "\(method) \(path) \(answer.status) lacks \(Set(required).subtracting(body.keys))")
            }
            if path == "/metrics" { #expect(answer.text.contains("scanout_frames_presented_total")) }
            // Bodies are checked field by field: an unknown one is named in a documented 400.
            if op["requestBody"] != nil {
                let refused = try server.request(method, path, body: #"{"bogusField": 1}"#)
                #expect(refused.status == 400 && documentedStatuses[400] != nil, "\(method) \(path): \(refused.status)")
                #expect(refused.json?["field"] as? String == "bogusField", "\(method) \(path): \(refused.text)")
                let malformed = try server.request(method, path, body: "{\"rate\": ")
                #expect(malformed.status == 400 && malformed.json?["field"] as? String == "body", "\(method) \(path): \(malformed.text)")
            }
        }
        // A path the API does not have.
        #expect(try server.request("GET", "/nope").status == 404)
        #expect(server.terminate() == 0)
    }

    @Test func endToEndDrivenOverHTTPWithEventsAndMetrics() throws {
        let clip = try Fixtures.path("counter.mp4")
        let server = try ServeProcess(arguments: ["--paused", "--output", "headless", clip])
        let events = try SSEReader(server.tcp, path: "/events")
        let initial = events.read(timeout: 5) { $0.event == "state" }
        #expect(initial.last?.json?["state"] as? String == "ready")

        #expect(try server.request("POST", "/play").json?["state"] as? String == "playing")
        let started = events.read(timeout: 5) { $0.event == "firstFrame" }
        #expect(started.map(\.event) == ["stateChanged", "play", "firstFrame"])
        #expect(started.first { $0.event == "play" }?.json?["userInitiated"] as? Bool == true)
        // The frame was prepared at start (the service was started paused): its stages are there.
        #expect((started.last?.json?["stages"] as? [String: Double])?.keys.sorted() == ["decoder", "firstDecode", "open", "probe"])

        let seek = try server.request("POST", "/seek", body: #"{"position": 2.0, "exact": true}"#)
        #expect(seek.status == 200, "\(seek.text)")
        let seeking = events.read(timeout: 5) { $0.event == "seekCompleted" }.filter { $0.event != "position" }
        #expect(seeking.map(\.event) == ["seekStarted", "stateChanged", "stateChanged", "seekCompleted"])
        #expect(seeking.last?.json?["frame"] as? Int == 60)

        let ended = events.read(timeout: 10) { $0.event == "ended" }.filter { $0.event != "position" }
        if let e = ended.first(where: { $0.event == "error" }) { Issue.record("unexpected error event: \(e.data)") }
        #expect(ended.map(\.event) == ["stateChanged", "ended"])
        // Sequence numbers increase by one: nothing was lost.
        let ids = (initial + started + seeking).compactMap { $0.id.flatMap(Int.init) }.filter { $0 > 0 }
        #expect(ids == ids.sorted())

        let stats = try #require(try server.request("GET", "/stats").json)
        #expect(stats["framesDropped"] as? Int == 0)
        // 96 frames: 0...59 not all shown (the seek at 2 s jumps), 60...95 shown after it; every
        // frame decoded after the seek is shown.
        let presented = try #require(stats["framesPresented"] as? Int)
        #expect(presented >= 36 + 1)
        let metrics = try server.request("GET", "/metrics").text
        #expect(metrics.contains("scanout_frames_presented_total \(presented)"), "\(metrics)")
        #expect(metrics.contains("scanout_frames_dropped_total 0"))
        #expect(metrics.contains("scanout_decode_seconds_count"))
        #expect(metrics.contains("scanout_render_seconds_count"))

        // The same API over the Unix socket.
        let viaSocket = try HTTPTestClient.request(server.unix, "GET", "/state")
        #expect(viaSocket.json?["state"] as? String == "ended")

        #expect(server.terminate() == 0)
        #expect(server.stderr.contains("stopped"))
        #expect(!FileManager.default.fileExists(atPath: server.socketPath))
    }

    @Test func badRequestsAreRefusedNamingTheFieldAndPlaybackGoesOn() throws {
        let clip = try Fixtures.path("counter.mp4")
        let server = try ServeProcess(arguments: ["--repeat", "all", "--output", "headless", clip])
        let cases: [(String, String, String?, Int, String)] = [
            ("POST", "/seek", "{\"position\": 1", 400, "body"),
            ("POST", "/seek", "[1, 2]", 400, "body"),
            ("POST", "/seek", #"{"position": 1, "precise": true}"#, 400, "precise"),
            ("POST", "/seek", #"{"position": "one"}"#, 400, "position"),
            ("POST", "/seek", #"{"position": -1}"#, 400, "position"),
            ("POST", "/seek", #"{"position": 99}"#, 400, "position"),
            ("POST", "/seek", #"{"exact": true}"#, 400, "position"),
            ("PUT", "/rate", #"{"rate": 8}"#, 400, "rate"),
            ("PUT", "/rate", #"{"rate": true}"#, 400, "rate"),
            ("PUT", "/repeat", #"{"repeat": "sometimes"}"#, 400, "repeat"),
            ("POST", "/playlist/jump", #"{"index": 7}"#, 404, "index"),
            ("POST", "/load", #"{"source": "/nonexistent/clip.mp4"}"#, 422, "playlist[0]"),
            ("POST", "/load", #"{"playlist": [{"source": "a.mp4", "rotation": 45}]}"#, 400, "playlist[0].rotation"),
            ("POST", "/load", #"{"playlist": [{"src": "a.mp4"}]}"#, 400, "playlist[0].source"),
            ("PUT", "/config", #"{"port": 9000}"#, 400, "port"),
            ("PUT", "/config", #"{"positionInterval": 0}"#, 400, "positionInterval"),
            ("PUT", "/log-level", #"{"level": "loud"}"#, 400, "level"),
            ("POST", "/play", #"{"now": true}"#, 400, "now"),
            ("POST", "/seek", #"{"position": 1, "exact": null}"#, 400, "exact"),
            ("PUT", "/config", nil, 400, "body"),
            ("POST", "/playlist/jump", #"{"index": 36028797018963967}"#, 400, "index"),
            ("DELETE", "/state", nil, 405, "method"),
        ]
        let before = try #require(try server.request("GET", "/stats").json?["framesPresented"] as? Int)
        for (method, path, body, status, field) in cases {
            let a = try server.request(method, path, body: body)
            #expect(a.status == status, "\(method) \(path) \(body ?? ""): \(a.status) \(a.text)")
            #expect(a.json?["field"] as? String == field, "\(method) \(path) \(body ?? ""): \(a.text)")
            let message = a.json?["error"] as? String ?? ""
            #expect(message.contains(field) || field == "body" && message.hasPrefix("body"), "\(message)")
        }
        // Still playing the loaded clip, and frames keep coming.
        usleep(300_000)
        let state = try #require(try server.request("GET", "/state").json)
        #expect(state["state"] as? String == "playing")
        #expect((state["playlist"] as? [[String: Any]])?.first?["source"] as? String == clip)
        let after = try #require(try server.request("GET", "/stats").json?["framesPresented"] as? Int)
        #expect(after > before)
        #expect(server.terminate() == 0)
    }

    @Test func nonLocalRequestsNeedTheBearerToken() throws {
        guard let address = nonLoopbackIPv4() else {
            Issue.record("this machine has no non-loopback IPv4 address to test from")
            return
        }
        var env = ProcessInfo.processInfo.environment
        env["SCANOUT_TOKEN"] = "s3cret"
        let server = try ServeProcess(arguments: ["--output", "headless", "--host", "0.0.0.0"], environment: env)
        let remote = HTTPEndpoint.tcp(host: address, port: server.port)
        let refused = try HTTPTestClient.request(remote, "GET", "/state")
        #expect(refused.status == 401)
        #expect(refused.json?["field"] as? String == "Authorization")
        let wrong = try HTTPTestClient.request(remote, "GET", "/state", headers: ["Authorization": "Bearer nope"])
        #expect(wrong.status == 401)
        let allowed = try HTTPTestClient.request(remote, "GET", "/state", headers: ["Authorization": "Bearer s3cret"])
        #expect(allowed.status == 200)
        #expect(try server.request("GET", "/state").status == 200)   // loopback: no token needed
        #expect(try HTTPTestClient.request(server.unix, "GET", "/state").status == 200)
        #expect(server.terminate() == 0)
    }

    @Test func kioskConfigFilePlaysItsPlaylistAndSkipsABadItem() throws {
        let scratch = try Scratch()
        let clip = try Fixtures.path("counter.mp4")
        let config = scratch.path("scanout.json")
        try json(["playlist": ["/nonexistent/missing.mp4", ["source": clip, "scaling": "fill"]], "repeat": "all",
                  "output": "headless", "outputSize": "1920x1080", "slate": try Fixtures.path("rotated.mp4"), "positionInterval": 0.2])
            .write(toFile: config, atomically: true, encoding: .utf8)
        let server = try ServeProcess(arguments: ["--config", config])
        // Item 0 failed before the stream was opened; with repeat all it fails again at each loop.
        let events = try SSEReader(server.tcp, path: "/events")
        let seen = events.read(timeout: 10) { $0.event == "error" }
        #expect(seen.last?.json?["item"] as? Int == 0)
        #expect(seen.last?.json?["skipped"] as? Bool == true)
        usleep(500_000)
        let state = try #require(try server.request("GET", "/state").json)
        #expect(state["state"] as? String == "playing")
        #expect(state["item"] as? Int == 1)
        #expect(state["output"] as? String == "headless 1920x1080")
        let cfg = try #require(try server.request("GET", "/config").json)
        #expect(cfg["repeat"] as? String == "all")
        #expect(cfg["tokenSet"] as? Bool == false)
        #expect(try #require(try server.request("GET", "/stats").json?["itemsFailed"] as? Int) >= 2)
        #expect(server.terminate() == 0)
    }
}

@Suite struct ServeCommandLineTests {
    @Test func badOptionsAndConfigFilesExitOneWithTheOptionNamed() throws {
        let exe = try ScanoutBinary.path()
        let port = try Proc.run(exe, ["serve", "--port", "99999"], timeout: 30)
        #expect(port.status == 1)
        #expect(port.stderrText == "scanout: --port: must be within 0...65535 (got 99999)\n")
        let rep = try Proc.run(exe, ["serve", "--repeat", "sometimes"], timeout: 30)
        #expect(rep.status == 1)
        #expect(rep.stderrText == "scanout: --repeat: must be one of none, one, all (got \"sometimes\")\n")
        let missing = try Proc.run(exe, ["serve", "--config", "/nonexistent/scanout.json"], timeout: 30)
        #expect(missing.status == 1)
        #expect(missing.stderrText == "scanout: config /nonexistent/scanout.json: does not exist\n")
    }
}

@Suite struct ServiceConfigTests {
    @Test func configFileErrorsNameTheFileAndTheField() throws {
        let scratch = try Scratch()
        let path = scratch.path("bad.json")
        try #"{"playlist": ["a.mp4"], "repat": "all"}"#.write(toFile: path, atomically: true, encoding: .utf8)
        #expect(throws: ConfigFileError(file: path, message: "repat: unknown field")) { try ServiceConfig.load(file: path) }
        try #"{"port": 70000}"#.write(toFile: path, atomically: true, encoding: .utf8)
        #expect(throws: ConfigFileError(file: path, message: "port: must be within 0...65535 (got 70000)")) { try ServiceConfig.load(file: path) }
        #expect(throws: ConfigFileError(file: scratch.path("none.json"), message: "does not exist")) { try ServiceConfig.load(file: scratch.path("none.json")) }
    }

    @Test func theKioskExampleInTheRepositoryParses() throws {
        let path = Fixtures.packageRoot.appendingPathComponent("dist/scanout.example.json").path
        let c = try ServiceConfig.load(file: path)
        #expect(c.playlist.count == 3)
        #expect(c.repeatMode == .all)
        #expect(c.slate != nil)
        #expect(c.playlist.contains { $0.rotation == 90 })
    }

    @Test func runtimeChangesRefuseFieldsThatNeedARestart() throws {
        var c = ServiceConfig()
        #expect(throws: APIError(.badRequest, "host: cannot change at run time (restart the service with a new config)", field: "host")) {
            try c.apply(json: Data(#"{"host": "0.0.0.0"}"#.utf8), runtimeOnly: true)
        }
        try c.apply(json: Data(#"{"positionInterval": 0.5, "scaling": "fill"}"#.utf8), runtimeOnly: true)
        #expect(c.positionInterval == 0.5 && c.scaling == .fill)
    }
}


/// The first non-loopback IPv4 address of this machine.
func nonLoopbackIPv4() -> String? {
    var list: UnsafeMutablePointer<ifaddrs>?
    guard getifaddrs(&list) == 0 else { return nil }
    defer { freeifaddrs(list) }
    var p = list
    while let a = p {
        defer { p = a.pointee.ifa_next }
        guard let sa = a.pointee.ifa_addr, sa.pointee.sa_family == sa_family_t(AF_INET) else { continue }
        var addr = sa.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
        var buf = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
        inet_ntop(AF_INET, &addr, &buf, socklen_t(buf.count))
        let s = String(cString: buf)
        if !s.hasPrefix("127.") { return s }
    }
    return nil
}
