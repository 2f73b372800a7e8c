import Foundation
import Logging
import Testing
import ScanoutService
import ScanoutTestSupport

/// A datagram socket the test listens on, standing in for systemd's notification socket.
final class NotifyListener {
    let path: String
    private let fd: Int32

    init(path: String) throws {
        self.path = path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw SupportError("socket(AF_UNIX, SOCK_DGRAM) failed") }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 }
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in for (i, b) in bytes.enumerated() { raw[i] = b } }
        let len = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
        let bound = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) } }
        guard bound == 0 else { close(fd); throw SupportError("bind(\(path)) failed: \(String(cString: strerror(errno)))") }
    }

    deinit { close(fd) }

    /// The messages that arrive within `seconds` (each datagram one string).
    func receive(for seconds: Double) -> [String] {
        var out: [String] = []
        let deadline = Date().addingTimeInterval(seconds)
        var buf = [UInt8](repeating: 0, count: 4096)
        while true {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { return out }
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, Int32(left * 1000) + 1) > 0 else { continue }
            let n = recv(fd, &buf, buf.count, 0)
            if n > 0 { out.append(String(decoding: buf[0..<n], as: UTF8.self)) }
        }
    }

    /// Waits (up to `timeout` s) for a message containing `line`; returns everything received.
    func wait(for line: String, timeout: Double) -> [String] {
        var out: [String] = []
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            out += receive(for: 0.1)
            if out.contains(where: { $0.split(separator: "\n").contains(Substring(line)) }) { return out }
        }
        return out
    }
}

func count(_ line: String, in messages: [String]) -> Int {
    messages.filter { $0.split(separator: "\n").contains(Substring(line)) }.count
}

/// Where `systemd-analyze` is, nil when it is not installed.
let systemdAnalyze: String? = try? Proc.which("systemd-analyze")

@Suite struct SystemdNotifierTests {
    @Test func messagesArriveAsDatagramsOnAPathAndOnAnAbstractSocket() throws {
        let scratch = try Scratch()
        for address in [scratch.path("notify"), "@scanout-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"] {
            let listener = try NotifyListener(path: address)
            let notifier = try #require(try SystemdNotifier.fromEnvironment(["NOTIFY_SOCKET": address]))
            try notifier.notify("READY=1\nSTATUS=test")
            try notifier.reloading()
            let got = listener.receive(for: 0.5)
            #expect(got.first == "READY=1\nSTATUS=test")
            #expect(got.count == 2 && got[1].hasPrefix("RELOADING=1\nMONOTONIC_USEC="), "\(got)")
        }
    }

    @Test func watchdogIntervalComesFromTheEnvironmentForThisProcessOnly() throws {
        let path = "/run/none/notify"
        #expect(try SystemdNotifier.fromEnvironment([:]) == nil)
        let mine = try #require(try SystemdNotifier.fromEnvironment(["NOTIFY_SOCKET": path, "WATCHDOG_USEC": "400000", "WATCHDOG_PID": "\(getpid())"]))
        #expect(mine.watchdogInterval == .milliseconds(400))
        let other = try #require(try SystemdNotifier.fromEnvironment(["NOTIFY_SOCKET": path, "WATCHDOG_USEC": "400000", "WATCHDOG_PID": "1"]))
        #expect(other.watchdogInterval == nil)
        #expect(throws: NotifyError.self) { try SystemdNotifier.fromEnvironment(["NOTIFY_SOCKET": "relative"]) }
        // Nobody listening: the error says where it sent and what.
        let lost = try SystemdNotifier(address: try Scratch().path("gone"))
        #expect(throws: NotifyError.self) { try lost.notify("WATCHDOG=1") }
    }

    @Test func journalLinesCarryTheSyslogPriorityAndNoTimestamp() {
        let line = JournalLine.format(level: .warning, label: "scanout", message: "slate: missing", metadata: ["item": "2", "a": "b"])
        #expect(line == "<4>scanout: slate: missing a=b item=2")
        #expect([Logger.Level.trace, .debug, .info, .notice, .warning, .error, .critical].map(JournalLine.priority) == [7, 7, 6, 5, 4, 3, 2])
        #expect(JournalLine.format(level: .error, label: "s", message: "two\nlines", metadata: [:]) == "<3>s: two lines")
        #expect(!JournalLine.stderrIsJournal(["JOURNAL_STREAM": "1:1"]))
    }

    @Test(.enabled(if: systemdAnalyze != nil, "systemd-analyze is not installed, so the unit's exposure cannot be rated"))
    func theUnitRatesAtMostFourUnderSystemdAnalyzeSecurity() throws {
        let unit = Fixtures.packageRoot.appendingPathComponent("dist/scanout.service").path
        let r = try Proc.run(systemdAnalyze!, ["security", "--offline=true", "--no-pager", unit])
        let text = r.stdoutText + r.stderrText
        let line = try #require(text.split(separator: "\n").first { $0.contains("Overall exposure level") }, "\(text)")
        let score = try #require(line.split(separator: ":").last?.split(separator: " ").first.flatMap { Double($0) }, "\(line)")
        #expect(score <= 4.0, "\(line)")
        let content = try String(contentsOfFile: unit, encoding: .utf8)
        for directive in ["Type=notify", "WatchdogSec=", "ExecReload=", "User=scanout", "SupplementaryGroups=video render",
                          "ProtectSystem=strict", "PrivateTmp=yes", "NoNewPrivileges=yes", "DeviceAllow=char-drm rw",
                          "DeviceAllow=char-nvidia-frontend rw", "DeviceAllow=char-nvidia-uvm rw", "StateDirectory=scanout"] {
            #expect(content.contains(directive), "the unit lacks \(directive)")
        }
    }
}

/// `scanout serve` under a stand-in for systemd: the notification socket is the test's.
@Suite(.serialized) struct ServeUnderSystemdTests {
    static func environment(_ extra: [String: String]) -> [String: String] {
        ProcessInfo.processInfo.environment.merging(extra) { _, new in new }
    }

    @Test func readyOnceTheFirstFrameIsUpThenWatchdogAndStopping() throws {
        let scratch = try Scratch()
        let listener = try NotifyListener(path: scratch.path("notify"))
        let clip = try Fixtures.path("counter.mp4")
        let server = try ServeProcess(arguments: ["--repeat", "all", "--output", "headless", clip],
                                      environment: Self.environment(["NOTIFY_SOCKET": listener.path, "WATCHDOG_USEC": "400000"]))
        let start = listener.wait(for: "READY=1", timeout: 10)
        #expect(count("READY=1", in: start) == 1, "\(start)")
        // READY came after a frame was on screen.
        #expect(((try server.request("GET", "/stats").json?["framesPresented"] as? Int) ?? 0) >= 1)
        // Fed every half interval while the loop turns.
        let fed = listener.receive(for: 1.2)
        #expect(count("WATCHDOG=1", in: fed) >= 3, "\(fed)")
        #expect(server.terminate() == 0)
        #expect(count("STOPPING=1", in: listener.receive(for: 0.3)) == 1)
    }

    @Test func readyWhenNothingCanBePlayedAndTheSlateIsUp() throws {
        let scratch = try Scratch()
        let listener = try NotifyListener(path: scratch.path("notify"))
        let server = try ServeProcess(arguments: ["--output", "headless", "--slate", try Fixtures.path("counter.mp4"), scratch.path("missing.mp4")],
                                      environment: Self.environment(["NOTIFY_SOCKET": listener.path]))
        #expect(count("READY=1", in: listener.wait(for: "READY=1", timeout: 10)) == 1)
        #expect(try server.request("GET", "/health").status == 503)
        #expect(server.terminate() == 0)
    }

    /// Also with the settings in a config file, as the unit starts it: the file must not drop the
    /// environment's faults.
    @Test(arguments: [false, true]) func aLoopThatHangsIsNoLongerFedWhileHTTPStillAnswers(fromConfigFile: Bool) throws {
        let scratch = try Scratch()
        let listener = try NotifyListener(path: scratch.path("notify"))
        let clip = try Fixtures.path("counter.mp4")
        var arguments = ["--repeat", "all", "--output", "headless", clip]
        if fromConfigFile {
            let file = scratch.path("scanout.json")
            try JSONSerialization.data(withJSONObject: ["playlist": [clip], "repeat": "all", "output": "headless"]).write(to: URL(fileURLWithPath: file))
            arguments = ["--config", file]
        }
        let server = try ServeProcess(arguments: arguments,
                                      environment: Self.environment(["NOTIFY_SOCKET": listener.path, "WATCHDOG_USEC": "400000",
                                                                     "SCANOUT_FAULTS": "hang-loop@36"]))
        let before = listener.wait(for: "READY=1", timeout: 10) + listener.receive(for: 0.5)
        #expect(count("WATCHDOG=1", in: before) >= 1, "\(before)")
        let deadline = Date().addingTimeInterval(20)
        while !server.stderr.contains("fault hang-loop@36") && Date() < deadline { usleep(50_000) }
        #expect(server.stderr.contains("fault hang-loop@36"), "\(server.stderr)")
        _ = listener.receive(for: 0.5)   // a job answered just before the hang may still be reported
        let after = listener.receive(for: 1.5)   // more than three watchdog intervals
        #expect(count("WATCHDOG=1", in: after) == 0, "the hung loop was still fed: \(after)")
        // The listeners answer: only the loop's own heartbeat tells that it hangs.
        #expect(try server.request("GET", "/version").status == 200)
        _ = server.terminate(timeout: 1)
    }

    @Test func sighupReloadsTheConfigFileWithoutStoppingPlayback() throws {
        let scratch = try Scratch()
        let listener = try NotifyListener(path: scratch.path("notify"))
        let clip = try Fixtures.path("counter.mp4")
        let file = scratch.path("scanout.json")
        func write(_ o: [String: Any]) throws {
            try JSONSerialization.data(withJSONObject: o).write(to: URL(fileURLWithPath: file))
        }
        try write(["playlist": [clip], "repeat": "all", "output": "headless", "logLevel": "info"])
        let server = try ServeProcess(arguments: ["--config", file], environment: Self.environment(["NOTIFY_SOCKET": listener.path]))
        _ = listener.wait(for: "READY=1", timeout: 10)
        let presented0 = try #require(try server.request("GET", "/stats").json?["framesPresented"] as? Int)

        try write(["playlist": [clip], "repeat": "none", "output": "headless", "logLevel": "debug", "scaling": "fill", "port": 1])
        kill(server.pid, SIGHUP)
        let reload = listener.wait(for: "READY=1", timeout: 10)
        #expect(reload.first?.hasPrefix("RELOADING=1\nMONOTONIC_USEC=") == true, "\(reload)")
        #expect(server.isRunning)
        let state = try #require(try server.request("GET", "/state").json)
        #expect(state["repeat"] as? String == "none")
        #expect(try server.request("GET", "/log-level").json?["level"] as? String == "debug")
        // GET /config shows what the reload put in place (the port waits for a restart).
        let config = try #require(try server.request("GET", "/config").json)
        #expect(config["scaling"] as? String == "fill")
        #expect(config["repeat"] as? String == "none")
        #expect(config["port"] as? Int != 1)
        #expect(server.stderr.contains("configuration reloaded from \(file)"))
        #expect(server.stderr.contains("reload: port changed"), "\(server.stderr)")
        usleep(300_000)
        let presented1 = try #require(try server.request("GET", "/stats").json?["framesPresented"] as? Int)
        #expect(presented1 > presented0, "playback stopped: \(presented0) → \(presented1)")

        // A broken file is refused and the running configuration kept.
        try Data("{\"repeat\": \"sometimes\"}".utf8).write(to: URL(fileURLWithPath: file))
        kill(server.pid, SIGHUP)
        _ = listener.wait(for: "READY=1", timeout: 10)
        #expect(server.isRunning)
        #expect(server.stderr.contains("reload refused, the running configuration is kept: config \(file)"), "\(server.stderr)")
        #expect(try server.request("GET", "/state").json?["repeat"] as? String == "none")
        #expect(server.terminate() == 0)
    }

    @Test func underJournaldEveryLineStartsWithItsPriority() throws {
        let server = try ServeProcess(arguments: ["--output", "headless", "--paused", try Fixtures.path("counter.mp4")], journal: true)
        #expect(server.terminate() == 0)
        let lines = server.stderr.components(separatedBy: "\n").filter { !$0.isEmpty }
        #expect(!lines.isEmpty)
        for line in lines { #expect(line.range(of: #"^<[0-7]>scanout: "#, options: .regularExpression) != nil, "\(line)") }
        #expect(lines.contains { $0.hasPrefix("<5>scanout: listening on http://127.0.0.1:") }, "\(lines)")
    }
}
