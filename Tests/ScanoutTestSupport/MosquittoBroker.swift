import Foundation

/// A real `mosquitto` broker on 127.0.0.1 (a free port), started by the test, stopped for an
/// outage and started again on the same port, killed when released. Its sessions persist across
/// the outage, as a production broker's do: a receiver with a persistent session misses nothing
/// sent while it was reconnecting.
public final class MosquittoBroker: @unchecked Sendable {
    public let port: UInt16
    public var url: String { "mqtt://127.0.0.1:\(port)" }
    private let scratch: Scratch
    private let conf: String
    private var process: Process?

    /// The certificate authority of a TLS broker (`tls: true`), a PEM file.
    public private(set) var caFile: String?

    /// `tls`: the listener speaks TLS only, with a certificate for 127.0.0.1 from a CA made here
    /// (`openssl`), which `caFile` names.
    public init(tls: Bool = false) throws {
        scratch = try Scratch()
        port = try refusedLoopbackPort()
        conf = scratch.path("mosquitto.conf")
        // mosquitto started as root runs as the user mosquitto: it saves its sessions here, and
        // reads its key.
        chmod(scratch.url.path, 0o777)
        var text = "listener \(port) 127.0.0.1\nallow_anonymous true\npersistence true\npersistence_location \(scratch.path(""))/\nlog_dest stderr\nmax_queued_messages 100000\n"
        if tls {
            let ca = try Self.makeCertificates(in: scratch)
            caFile = ca
            text += "cafile \(ca)\ncertfile \(scratch.path("server.pem"))\nkeyfile \(scratch.path("server.key"))\n"
        }
        try text.write(toFile: conf, atomically: true, encoding: .utf8)
        try start()
    }

    /// A CA (ca.pem) and a server certificate for IP 127.0.0.1 signed by it; another CA
    /// (other-ca.pem) that did not sign it. Returns ca.pem's path.
    static func makeCertificates(in scratch: Scratch) throws -> String {
        let steps: [[String]] = [
            ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", scratch.path("ca.key"), "-out", scratch.path("ca.pem"), "-days", "2", "-subj", "/CN=scanout-test-ca"],
            ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", scratch.path("other-ca.key"), "-out", scratch.path("other-ca.pem"), "-days", "2", "-subj", "/CN=another-ca"],
            ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", scratch.path("server.key"), "-out", scratch.path("server.csr"), "-subj", "/CN=127.0.0.1"],
            ["x509", "-req", "-in", scratch.path("server.csr"), "-CA", scratch.path("ca.pem"), "-CAkey", scratch.path("ca.key"), "-CAcreateserial",
             "-out", scratch.path("server.pem"), "-days", "2", "-extfile", scratch.path("san.cnf")],
        ]
        try "subjectAltName=IP:127.0.0.1\n".write(toFile: scratch.path("san.cnf"), atomically: true, encoding: .utf8)
        for args in steps {
            let r = try Proc.run("openssl", args, timeout: 60)
            guard r.status == 0 else { throw SupportError("openssl \(args[0]): \(r.stderrText)") }
        }
        chmod(scratch.path("server.key"), 0o644)
        return scratch.path("ca.pem")
    }

    /// Starts the broker (again) and waits until it takes connections.
    public func start() throws {
        guard process == nil else { return }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: try Proc.which("mosquitto"))
        p.arguments = ["-c", conf]
        p.standardInput = FileHandle.nullDevice
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try p.run()
        process = p
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if Self.accepts(port) { return }
            usleep(20_000)
        }
        throw SupportError("mosquitto did not listen on \(port) within 10 s")
    }

    /// Stops the broker (SIGTERM: it saves its sessions, and says goodbye to no client).
    public func stop() {
        guard let p = process else { return }
        kill(p.processIdentifier, SIGTERM)
        let deadline = Date().addingTimeInterval(5)
        while p.isRunning && Date() < deadline { usleep(10_000) }
        if p.isRunning { kill(p.processIdentifier, SIGKILL) }
        p.waitUntilExit()
        process = nil
    }

    static func accepts(_ port: UInt16) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_port = port.bigEndian
        a.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &a) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    /// A `mosquitto_sub` client (a peer that is not Scanout's) subscribed to `topic` (a pattern)
    /// from now on, QoS 1; returns once its subscription is in place.
    public func subscribe(_ topic: String, id: String? = nil) throws -> MQTTSubscriber {
        try MQTTSubscriber(port: port, topic: topic, id: id, scratch: scratch)
    }

    /// Publishes `payload` on `topic` through `mosquitto_pub`.
    public func publish(_ topic: String, _ payload: String, qos: Int = 1, retain: Bool = false) throws {
        var args = ["-h", "127.0.0.1", "-p", String(port), "-t", topic, "-m", payload, "-q", String(qos)]
        if retain { args.append("-r") }
        let r = try Proc.run("mosquitto_pub", args, timeout: 10)
        guard r.status == 0 else { throw SupportError("mosquitto_pub: \(r.stderrText)") }
    }

    deinit { stop() }
}

/// A `mosquitto_sub` in the background writing `topic payload` lines to a file.
public final class MQTTSubscriber: @unchecked Sendable {
    private let process = Process()
    private let file: String

    init(port: UInt16, topic: String, id: String?, scratch: Scratch) throws {
        file = scratch.path("sub-\(UUID().uuidString).txt")
        FileManager.default.createFile(atPath: file, contents: nil)
        process.executableURL = URL(fileURLWithPath: try Proc.which("mosquitto_sub"))
        let probe = "scanout-test/probe/\(UUID().uuidString)"
        var args = ["-h", "127.0.0.1", "-p", String(port), "-t", topic, "-t", probe, "-v", "-q", "1"]
        // A fixed id with a persistent session: the broker keeps what arrives while it is away.
        if let id { args += ["-i", id, "-c"] }
        process.arguments = args
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: file))
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.probe = probe
        // Subscribed once a probe message comes through.
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            _ = try? Proc.run("mosquitto_pub", ["-h", "127.0.0.1", "-p", String(port), "-t", probe, "-m", "probe", "-q", "1"], timeout: 5)
            if lines.contains(where: { $0.topic == probe }) { return }
            usleep(50_000)
        }
        throw SupportError("mosquitto_sub did not subscribe to \(topic) within 10 s")
    }

    private let probe: String

    private var lines: [(topic: String, payload: String)] {
        let text = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map { line in
            let parts = line.split(separator: " ", maxSplits: 1)
            return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
        }
    }

    /// The messages so far, in order: (topic, payload).
    public var messages: [(topic: String, payload: String)] { lines.filter { $0.topic != probe } }

    /// Waits until `condition` holds for the messages (or `seconds` pass); returns them.
    public func wait(seconds: Double, until condition: ([(topic: String, payload: String)]) -> Bool) -> [(topic: String, payload: String)] {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let m = messages
            if condition(m) { return m }
            usleep(20_000)
        }
        return messages
    }

    public func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    deinit { stop() }
}
