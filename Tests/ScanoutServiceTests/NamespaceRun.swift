import Foundation
import ScanoutTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A shell script run in a network namespace of its own (`unshare -n sh -c SCRIPT`) that ends by
/// exec'ing `scanout serve` on the Unix socket `socketPath`; its stderr goes to the scratch
/// directory. The service is stopped (SIGTERM, SIGKILL after 10 s) when this is released.
final class NamespaceRun: @unchecked Sendable {
    // @unchecked Sendable: every stored property is set once in init and only read afterwards;
    // `Process` is thread-safe for the calls made here.
    let scratch: Scratch
    let socketPath: String
    private let process: Process

    init(script: String, scratch: Scratch, socketPath: String) throws {
        self.scratch = scratch
        self.socketPath = socketPath
        process = Process()
        process.executableURL = URL(fileURLWithPath: try Proc.which("unshare"))
        process.arguments = ["-n", "sh", "-c", script]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        FileManager.default.createFile(atPath: scratch.path("stderr"), contents: nil)
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: scratch.path("stderr")))
        try process.run()
    }

    var isRunning: Bool { process.isRunning }
    func killNow() { kill(process.processIdentifier, SIGKILL) }
    var stderr: String { (try? String(contentsOfFile: scratch.path("stderr"), encoding: .utf8)) ?? "" }

    /// Every event since the start (the event stream's replay from id 0), up to the first for
    /// which `done` holds, or those that came within `seconds`.
    func events(seconds: Double, until done: @escaping ([SSEMessage]) -> Bool) throws -> [SSEMessage] {
        let reader = try SSEReader(.unix(path: socketPath), path: "/events", headers: ["Last-Event-ID": "0"])
        var seen: [SSEMessage] = []
        return reader.read(timeout: seconds) { m in
            seen.append(m)
            return done(seen)
        }
    }

    /// Polls every 100 ms until `done` holds or `seconds` pass; true when it held.
    func wait(seconds: Double, _ done: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try done() { return true }
            usleep(100_000)
        }
        return try done()
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGTERM)
            let deadline = Date().addingTimeInterval(10)
            while process.isRunning && Date() < deadline { usleep(20_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
        process.waitUntilExit()
    }
}
