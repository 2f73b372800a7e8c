import Foundation
#if canImport(Glibc)
import Glibc
#endif
@_exported import ScanoutLoopback

/// The service tests' name for the loopback client.
public typealias HTTPTestClient = LoopbackHTTP

/// The built `scanout` executable: next to the test bundle, else the package's .build/debug.
public enum ScanoutBinary {
    public static func path() throws -> String {
        var dirs: [URL] = []
        if let exe = Bundle.main.executableURL { dirs.append(exe.deletingLastPathComponent()) }
        dirs.append(Bundle.main.bundleURL)
        dirs.append(Bundle.main.bundleURL.deletingLastPathComponent())
        dirs.append(Fixtures.packageRoot.appendingPathComponent(".build/debug"))
        for dir in dirs {
            let p = dir.appendingPathComponent("scanout").path
            var isDir: ObjCBool = false
            if FileManager.default.fileExists(atPath: p, isDirectory: &isDir), !isDir.boolValue, FileManager.default.isExecutableFile(atPath: p) {
                return p
            }
        }
        throw SupportError("the scanout binary was not found; run `swift build` first")
    }
}

/// `scanout serve` as a subprocess on a free loopback port and a Unix socket in a scratch
/// directory; SIGTERM when released (and SIGKILL if it does not stop within 10 s). `journal`: its
/// stderr file is named in `JOURNAL_STREAM`, as systemd names the journal's stream.
/// `@unchecked Sendable`: every stored property is set once in `init` and only read afterwards;
/// `Process` itself is thread-safe for the calls made here (isRunning, processIdentifier).
public final class ServeProcess: @unchecked Sendable {
    public let port: UInt16
    public let socketPath: String
    public let scratch: Scratch
    private let process: Process
    private let stderrPath: String

    public init(arguments: [String], environment: [String: String]? = nil, host: String = "127.0.0.1", journal: Bool = false) throws {
        scratch = try Scratch()
        port = try refusedLoopbackPort()
        socketPath = scratch.path("scanout.sock")
        stderrPath = scratch.path("stderr")
        guard FileManager.default.createFile(atPath: stderrPath, contents: nil) else { throw SupportError("cannot create \(stderrPath)") }
        process = Process()
        process.executableURL = URL(fileURLWithPath: try ScanoutBinary.path())
        process.arguments = ["serve", "--host", host, "--port", String(port), "--socket", socketPath] + arguments
        if let environment { process.environment = environment }
        var st = stat()
        if journal, stat(stderrPath, &st) == 0 {
            process.environment = (environment ?? ProcessInfo.processInfo.environment).merging(["JOURNAL_STREAM": "\(st.st_dev):\(st.st_ino)"]) { _, n in n }
        }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: stderrPath))
        try process.run()
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if (try? HTTPTestClient.request(.tcp(host: "127.0.0.1", port: port), "GET", "/version", timeout: 1))?.status == 200 { return }
            if !process.isRunning { break }
            usleep(50_000)
        }
        kill(process.processIdentifier, SIGKILL)
        throw SupportError("scanout serve did not start: \(stderr)")
    }

    public var tcp: HTTPEndpoint { .tcp(host: "127.0.0.1", port: port) }
    public var unix: HTTPEndpoint { .unix(path: socketPath) }
    public var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }
    public var isRunning: Bool { process.isRunning }
    public var pid: Int32 { process.processIdentifier }

    public func request(_ method: String, _ path: String, body: String? = nil, headers: [String: String] = [:]) throws -> HTTPAnswer {
        try HTTPTestClient.request(tcp, method, path, body: body, headers: headers)
    }

    /// Sends SIGTERM and waits for the exit status (nil if it had to be killed after `timeout`).
    public func terminate(timeout: Double = 10) -> Int32? {
        guard process.isRunning else { return process.terminationStatus }
        kill(process.processIdentifier, SIGTERM)
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return nil
        }
        return process.terminationStatus
    }

    deinit { _ = terminate() }
}
