import Foundation
@testable import ScanoutService
import ScanoutTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A raw loopback connection that the test drives byte by byte; closed when released.
final class RawConnection {
    let fd: Int32
    private(set) var received = Data()
    /// Whether the server closed its side (EOF or a reset).
    private(set) var closedByPeer = false

    init(_ endpoint: HTTPEndpoint) throws {
        fd = try LoopbackHTTP.connect(endpoint, timeout: 0.1)
    }

    deinit { close(fd) }

    func send(_ text: String) throws { try LoopbackHTTP.send(fd, text) }

    /// Ends the connection from this side (the descriptor stays owned until release).
    func hangUp() { shutdown(fd, Int32(SHUT_RDWR)) }

    /// Reads for up to `seconds`, or until `done` says what came is enough, or the peer closes.
    @discardableResult
    func read(for seconds: Double, until done: (Data) -> Bool = { _ in false }) -> Data {
        let deadline = Date().addingTimeInterval(seconds)
        var buffer = [UInt8](repeating: 0, count: 16384)
        while Date() < deadline, !closedByPeer, !done(received) {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n > 0 { received.append(contentsOf: buffer[0..<n]) }
            else if n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) { closedByPeer = true }
        }
        return received
    }

    /// Sends a GET on this connection (kept alive) and reads its whole answer.
    func get(_ path: String, host: String = "localhost") throws -> RawAnswer {
        received = Data()
        try send("GET \(path) HTTP/1.1\r\nHost: \(host)\r\n\r\n")
        read(for: 5) { RawConnection.complete($0) }
        return try RawAnswer(received)
    }

    /// Whether `data` holds a whole answer with a Content-Length body.
    static func complete(_ data: Data) -> Bool {
        guard let end = data.range(of: Data("\r\n\r\n".utf8)) else { return false }
        let head = String(decoding: data[data.startIndex..<end.lowerBound], as: UTF8.self).lowercased()
        guard let line = head.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
              let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) else { return false }
        return data.count - end.upperBound >= length
    }
}

/// An answer read off a raw connection.
struct RawAnswer {
    var status: Int
    var headers: [String: String]
    var body: Data
    var text: String { String(decoding: body, as: UTF8.self) }
    var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] }

    init(_ data: Data) throws {
        guard let end = data.range(of: Data("\r\n\r\n".utf8)) else { throw LoopbackHTTPError("no answer (\(data.count) bytes)") }
        let head = String(decoding: data[data.startIndex..<end.lowerBound], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        status = Int(lines.removeFirst().split(separator: " ").dropFirst().first ?? "") ?? -1
        headers = [:]
        for l in lines {
            guard let c = l.firstIndex(of: ":") else { continue }
            headers[l[..<c].lowercased()] = l[l.index(after: c)...].trimmingCharacters(in: .whitespaces)
        }
        body = Data(data[end.upperBound...])
    }
}

/// `scanout serve` playing counter.mp4 in a loop on the headless output, with `limits` from a
/// config file.
func limitedServe(_ limits: String) throws -> ServeProcess {
    let scratch = try Scratch()
    let config = scratch.path("scanout.json")
    try #"{"limits": \#(limits), "rateLimit": null}"#.write(toFile: config, atomically: true, encoding: .utf8)
    return try ServeProcess(arguments: ["--config", config, "--repeat", "all", "--output", "headless", try Fixtures.path("counter.mp4")])
}

@Suite("connection limits: scanout serve on loopback refuses the newest clients and keeps playing", .serialized)
struct ConnectionLimitTests {
    /// A connection that got its first answer (the probe connections of the start may still be
    /// closing: a refusal is retried for a moment).
    func served(_ server: ServeProcess) throws -> RawConnection {
        for _ in 0..<50 {
            let c = try RawConnection(server.tcp)
            if try c.get("/version").status == 200 { return c }
            usleep(100_000)
        }
        throw LoopbackHTTPError("no connection was served")
    }

    @Test("past limits.connections the newest connection gets 503 + Retry-After and is closed; /health still answers; a freed place serves again")
    func connectionBound() throws {
        let server = try limitedServe(#"{"connections": 4}"#)
        let held = try (0..<4).map { _ in try served(server) }
        let refused = try RawConnection(server.tcp)
        let answer = try refused.get("/state")
        #expect(answer.status == 503)
        #expect(answer.headers["retry-after"] == "5")
        #expect(answer.json?["field"] as? String == "limits.connections")
        refused.read(for: 3)
        #expect(refused.closedByPeer)
        // A monitor past the bound still hears that the player plays; that connection is closed after.
        let monitor = try RawConnection(server.tcp)
        let health = try monitor.get("/health")
        #expect(health.status == 200 && health.json?["up"] as? Bool == true, "\(health.text)")
        monitor.read(for: 3)
        #expect(monitor.closedByPeer)
        // The connections held are still served.
        for c in held { #expect(try c.get("/health").status == 200) }
        let plain = try server.request("GET", "/state")
        #expect(plain.status == 503, "a plain client's fifth connection is refused too")
        held[0].hangUp()
        var again = 0
        for _ in 0..<30 where again != 200 {
            again = (try? RawConnection(server.tcp).get("/state").status) ?? 0
            if again != 200 { usleep(100_000) }
        }
        #expect(again == 200)
        #expect(server.stderr.contains("refusing new ones"))
    }

    @Test("past limits.eventStreams a new event stream gets 503 + Retry-After naming the field; the open streams go on")
    func eventStreamBound() throws {
        let server = try limitedServe(#"{"eventStreams": 2}"#)
        let streams = try (0..<2).map { _ in try SSEReader(server.tcp, path: "/events") }
        for s in streams { _ = s.read(timeout: 5) { $0.event == "state" } }
        #expect(streams.allSatisfy { $0.status == 200 })
        let third = try server.request("GET", "/events")
        #expect(third.status == 503)
        #expect(third.headers["retry-after"] == "5")
        #expect(third.json?["field"] as? String == "limits.eventStreams", "\(third.text)")
        // The streams open still carry events (position every second while playing).
        for s in streams { #expect(!s.read(timeout: 5) { $0.event == "position" }.isEmpty) }
        #expect(try server.request("GET", "/health").status == 200)
    }

    @Test("a request head sent a byte at a time (slowloris) is closed after limits.headerTimeout; a whole head in time is served")
    func headerTimeout() throws {
        let server = try limitedServe(#"{"headerTimeout": 1, "idleTimeout": 30}"#)
        let slow = try RawConnection(server.tcp)
        try slow.send("GET /state HTTP/1.1\r\n")
        let start = Date()
        var sent = 0
        // A byte every 200 ms: 15 s of head if the server waited for all of it.
        while !slow.closedByPeer, Date().timeIntervalSince(start) < 8 {
            if (try? slow.send("X-Slow: 1\r\n".map(String.init)[sent % 11])) == nil { break }
            sent += 1
            slow.read(for: 0.2)
        }
        slow.read(for: 0.5)
        #expect(slow.closedByPeer, "still open after \(sent) bytes")
        #expect(slow.received.isEmpty || String(decoding: slow.received, as: UTF8.self).contains("HTTP/1.1 4"))
        let quick = try RawConnection(server.tcp)
        #expect(try quick.get("/health").status == 200)
    }

    @Test("a keep-alive connection with no request is closed after limits.idleTimeout; an event stream being written is not")
    func idleTimeout() throws {
        let server = try limitedServe(#"{"headerTimeout": 5, "idleTimeout": 1}"#)
        let idle = try RawConnection(server.tcp)
        #expect(try idle.get("/version").status == 200)
        idle.read(for: 6)
        #expect(idle.closedByPeer)
        let stream = try SSEReader(server.tcp, path: "/events")
        _ = stream.read(timeout: 5) { $0.event == "state" }
        // Three idle timeouts later the stream still delivers.
        _ = stream.read(timeout: 3) { _ in false }
        let later = stream.read(timeout: 5) { $0.event == "position" }
        #expect(later.contains { $0.event == "position" })
    }

    @Test("limits: bounds derived from the file limit keep a reserve; bad values are refused naming the field")
    func limitsConfig() throws {
        let defaults = ServiceLimits()
        #expect(defaults.resolved(fileLimit: 1024) == .init(connections: 736, eventStreams: 368, reserve: 256))
        #expect(defaults.resolved(fileLimit: 65536) == .init(connections: 16384, eventStreams: 8192, reserve: 8192))
        var set = ServiceLimits()
        set.connections = 5000
        set.eventStreams = 9000
        // Configured bounds past what the file limit holds are cut to it; streams never exceed connections.
        #expect(set.resolved(fileLimit: 1024) == .init(connections: 736, eventStreams: 736, reserve: 256))
        #expect(set.resolved(fileLimit: 65536) == .init(connections: 5000, eventStreams: 5000, reserve: 8192))
        var c = ServiceConfig()
        try c.apply(json: Data(#"{"limits": {"connections": 10, "headerTimeout": 2.5}}"#.utf8), runtimeOnly: false)
        #expect(c.limits.connections == 10 && c.limits.headerTimeout == 2.5 && c.limits.idleTimeout == 60)
        func refusal(_ text: String, runtimeOnly: Bool = false) throws -> APIError? {
            var config = ServiceConfig()
            do { try config.apply(json: Data(text.utf8), runtimeOnly: runtimeOnly) } catch { return error }
            return nil
        }
        for (text, field) in [(#"{"limits": {"connections": 0}}"#, "limits.connections"), (#"{"limits": {"idleTimeout": "x"}}"#, "limits.idleTimeout"),
                              (#"{"limits": {"streams": 3}}"#, "limits.streams"), (#"{"limits": null}"#, "limits")] {
            #expect(try refusal(text)?.field == field, "\(text)")
        }
        let runtime = try refusal(#"{"limits": {"connections": 10}}"#, runtimeOnly: true)
        #expect(runtime?.field == "limits" && runtime?.message.contains("restart") == true, "\(String(describing: runtime))")
    }

    @Test("the soft file limit is raised to the hard one (FileDescriptorLimit.raiseToHard)")
    func fileLimitRaised() throws {
        let start = try FileDescriptorLimit.current()
        try #require(start.hard > 64)
        try FileDescriptorLimit.setSoft(start.hard - 1)
        #expect(try FileDescriptorLimit.current().soft == start.hard - 1)
        let (before, after) = try FileDescriptorLimit.raiseToHard()
        #expect(before.soft == start.hard - 1)
        #expect(after.soft == after.hard && after.hard == start.hard)
    }

    @Test("scanout serve started with a soft file limit of 256 runs with soft == hard, and says so in the log")
    func serveRaisesItsLimit() throws {
        let hard = try FileDescriptorLimit.current().hard
        try #require(hard > 256)
        let scratch = try Scratch()
        let port = try refusedLoopbackPort()
        let log = scratch.path("stderr")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", "ulimit -S -n 256 && exec \"$0\" serve --host 127.0.0.1 --port \(port) --no-socket --output headless 2>\"$1\"",
                       try ScanoutBinary.path(), log]
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        defer { kill(p.processIdentifier, SIGTERM); p.waitUntilExit() }
        var up = false
        for _ in 0..<200 where !up {
            up = (try? HTTPTestClient.request(.tcp(host: "127.0.0.1", port: port), "GET", "/version", timeout: 1))?.status == 200
            if !up { usleep(50_000) }
        }
        try #require(up)
        let limits = try String(contentsOfFile: "/proc/\(p.processIdentifier)/limits", encoding: .utf8)
        let line = try #require(limits.split(separator: "\n").first { $0.hasPrefix("Max open files") })
        let numbers = line.split(separator: " ").compactMap { UInt64($0) }
        #expect(numbers.count == 2 && numbers[0] == numbers[1] && numbers[0] == hard, "\(line)")
        let text = try String(contentsOfFile: log, encoding: .utf8)
        #expect(text.contains("(raised from 256)"), "\(text)")
    }
}
