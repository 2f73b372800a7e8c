import Foundation
import ScanoutLoopback
#if canImport(Glibc)
import Glibc
#endif

// Test support shared by every test target: the generated fixture clips, subprocesses (ffmpeg,
// python3, the scanout binary) and scratch directories.

/// Errors of the test support itself, with a message that says what to fix.
public struct SupportError: Error, CustomStringConvertible {
    public var description: String
    public init(_ d: String) { description = d }
}

public enum Fixtures {
    /// The package root: this file is Tests/ScanoutTestSupport/Support.swift.
    public static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    public static let directory: URL = packageRoot.appendingPathComponent(".fixtures", isDirectory: true)

    /// Runs tools/make-fixtures.sh once per process (the script itself is idempotent). A file lock
    /// keeps the other test targets' copies of this helper, and other processes, from running it
    /// at the same time.
    private static let prepared: Result<URL, SupportError> = {
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            return .failure(SupportError("cannot create \(directory.path): \(error)"))
        }
        let lockPath = directory.appendingPathComponent(".lock").path
        let fd = open(lockPath, O_CREAT | O_RDWR, 0o644)
        guard fd >= 0 else { return .failure(SupportError("cannot open lock \(lockPath)")) }
        defer { close(fd) }
        guard flock(fd, LOCK_EX) == 0 else { return .failure(SupportError("cannot lock \(lockPath)")) }
        defer { flock(fd, LOCK_UN) }
        let script = packageRoot.appendingPathComponent("tools/make-fixtures.sh").path
        do {
            let r = try Proc.run("/bin/bash", [script, directory.path], timeout: 600)
            guard r.status == 0 else {
                return .failure(SupportError("tools/make-fixtures.sh failed (\(r.status)): \(r.stderrText)"))
            }
        } catch {
            return .failure(SupportError("cannot run tools/make-fixtures.sh: \(error)"))
        }
        return .success(directory)
    }()

    /// Absolute path of fixture `name`, generating the fixtures first if needed.
    public static func path(_ name: String) throws -> String {
        let dir = try prepared.get()
        let p = dir.appendingPathComponent(name).path
        guard FileManager.default.fileExists(atPath: p) else { throw SupportError("fixture \(name) is missing from \(dir.path)") }
        return p
    }
}

/// The result of a finished subprocess.
public struct ProcResult: Sendable {
    public var status: Int32
    public var stdout: Data
    public var stderr: Data
    public var seconds: Double
    public var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
    public var stderrText: String { String(decoding: stderr, as: UTF8.self) }
}

public enum Proc {
    /// Finds `name` on PATH (or returns it when it is a path already).
    public static func which(_ name: String) throws -> String {
        if name.contains("/") { return name }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for dir in path.split(separator: ":") {
            let candidate = "\(dir)/\(name)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        throw SupportError("\(name) is not on PATH (\(path))")
    }

    /// Runs `exe` with `args`, stdout and stderr captured through files (no pipe can fill up),
    /// killed after `timeout` seconds.
    public static func run(_ exe: String, _ args: [String], timeout: Double = 120, environment: [String: String]? = nil) throws -> ProcResult {
        let scratch = try Scratch()
        let outURL = scratch.url.appendingPathComponent("stdout")
        let errURL = scratch.url.appendingPathComponent("stderr")
        guard FileManager.default.createFile(atPath: outURL.path, contents: nil),
              FileManager.default.createFile(atPath: errURL.path, contents: nil) else {
            throw SupportError("cannot create capture files in \(scratch.url.path)")
        }
        let outHandle = try FileHandle(forWritingTo: outURL)
        let errHandle = try FileHandle(forWritingTo: errURL)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: try which(exe))
        p.arguments = args
        if let environment { p.environment = environment }
        p.standardInput = FileHandle.nullDevice
        p.standardOutput = outHandle
        p.standardError = errHandle
        let start = Date()
        try p.run()
        while p.isRunning {
            if Date().timeIntervalSince(start) > timeout {
                kill(p.processIdentifier, SIGKILL)  // SIGTERM may be blocked in the inherited mask
                p.waitUntilExit()
                break
            }
            usleep(5_000)
        }
        p.waitUntilExit()
        let seconds = Date().timeIntervalSince(start)
        try? outHandle.close()
        try? errHandle.close()
        return ProcResult(status: p.terminationStatus,
                          stdout: (try? Data(contentsOf: outURL)) ?? Data(),
                          stderr: (try? Data(contentsOf: errURL)) ?? Data(),
                          seconds: seconds)
    }

    /// Runs ffmpeg quietly with `args` and returns its stdout; throws with its stderr on failure.
    public static func ffmpeg(_ args: [String]) throws -> Data {
        let r = try run("ffmpeg", ["-nostdin", "-hide_banner", "-loglevel", "error"] + args)
        guard r.status == 0 else { throw SupportError("ffmpeg \(args.joined(separator: " ")) failed (\(r.status)): \(r.stderrText)") }
        return r.stdout
    }

    /// The data lines of `ffmpeg -i FILE -map 0:v:0 -f framemd5 -`.
    public static func ffmpegFrameMD5Lines(_ file: String) throws -> [String] {
        let text = String(decoding: try ffmpeg(["-i", file, "-map", "0:v:0", "-f", "framemd5", "-"]), as: UTF8.self)
        return text.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("#") }
    }
}

/// The md5 column of a framemd5 data line.
public func md5Column(_ line: String) -> String {
    String(line.split(separator: ",").last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "")
}

/// A fresh directory under the system's temporary directory, removed when released.
public final class Scratch: @unchecked Sendable {
    public let url: URL
    public init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("scanout-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    public func path(_ name: String) -> String { url.appendingPathComponent(name).path }
    deinit { try? FileManager.default.removeItem(at: url) }
}

/// A TCP listener on 127.0.0.1 (ephemeral port) that never accepts: the kernel completes the
/// handshake from its backlog, and the client then waits forever for an answer.
public final class SilentListener: @unchecked Sendable {
    public let port: UInt16
    private let fd: Int32

    public init() throws {
        #if canImport(Glibc)
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw SupportError("socket() failed") }
        port = try bindLoopback(fd)
        guard listen(fd, 16) == 0 else { close(fd); throw SupportError("listen() failed") }
    }

    deinit { close(fd) }
}

/// A port on 127.0.0.1 that nothing listens on (bound once, then closed).
public func refusedLoopbackPort() throws -> UInt16 {
    #if canImport(Glibc)
    try unusedLoopbackPort(Int32(SOCK_STREAM.rawValue))
    #else
    try unusedLoopbackPort(SOCK_STREAM)
    #endif
}

/// A UDP port on 127.0.0.1 that nothing is bound to (bound once, then closed).
public func freeUDPLoopbackPort() throws -> UInt16 {
    #if canImport(Glibc)
    try unusedLoopbackPort(Int32(SOCK_DGRAM.rawValue))
    #else
    try unusedLoopbackPort(SOCK_DGRAM)
    #endif
}

/// A program run in the background with its output discarded, killed when released.
public final class BackgroundProcess: @unchecked Sendable {
    private let process = Process()

    public init(_ exe: String, _ args: [String]) throws {
        process.executableURL = URL(fileURLWithPath: try Proc.which(exe))
        process.arguments = args
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    deinit {
        // SIGKILL: the test process's threads may block SIGTERM, and the child inherits the mask.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

/// `tools/http-serve.py` (HTTP with byte ranges) serving `directory` on 127.0.0.1 (a free port),
/// stopped when released. `byteRanges: false` runs Python's own `http.server` instead, which
/// answers every request with the whole file (200), as servers without range support do.
public final class HTTPFileServer: @unchecked Sendable {
    public let port: UInt16
    private let process: Process

    /// `faults`: `tools/http-serve.py`'s fault options (`--stall-at`, `--reset-at`, `--times`, ...).
    public convenience init(directory: String, byteRanges: Bool = true, faults: [String] = []) throws {
        try self.init { port in
            byteRanges
                ? [Fixtures.packageRoot.appendingPathComponent("tools/http-serve.py").path, directory, String(port)] + faults
                : ["-m", "http.server", String(port), "--bind", "127.0.0.1", "--directory", directory]
        }
    }

    /// `Tests/Fixtures/hls_server.py` serving `directory`: throttling changed at run time
    /// (`control`), and with `--live S --window N` in `options`, a sliding window of segments.
    public static func hls(directory: String, options: [String] = []) throws -> HTTPFileServer {
        try HTTPFileServer { port in
            [Fixtures.packageRoot.appendingPathComponent("Tests/Fixtures/hls_server.py").path, directory, String(port)] + options
        }
    }

    /// Asks an `hls` server to change (`throttle?prefix=/v2/&rate=30000`, `freeze`) or to tell
    /// (`log`); returns its answer.
    @discardableResult
    public func control(_ request: String) throws -> String {
        let answer = try HTTPTestClient.request(.tcp(host: "127.0.0.1", port: port), "GET", "/_control/" + request)
        guard answer.status == 200 else { throw SupportError("control \(request): HTTP \(answer.status)") }
        return answer.text
    }

    /// Runs python3 with `arguments(port)` and waits until it accepts connections on that port.
    private init(arguments: (UInt16) -> [String]) throws {
        port = try refusedLoopbackPort()
        process = Process()
        process.executableURL = URL(fileURLWithPath: try Proc.which("python3"))
        process.arguments = arguments(port)
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Ready once it accepts a connection (at most 10 s).
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if Self.accepts(port) { return }
            usleep(50_000)
        }
        kill(process.processIdentifier, SIGKILL)
        throw SupportError("\(process.arguments?.first ?? "python3") did not start on 127.0.0.1:\(port)")
    }

    public func url(_ name: String) -> String { "http://127.0.0.1:\(port)/\(name)" }

    private static func accepts(_ port: UInt16) -> Bool {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    deinit {
        // SIGKILL: the test process's threads may block SIGTERM, and the child inherits the mask.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

/// Runs `body` on a thread of its own and waits for it without holding a thread of Swift's
/// cooperative pool. Tests that block (a child process for seconds, blocking sockets, sleeps) go
/// through it: the pool has one thread per core, and a test holding it starves every in-process
/// server and timer of the run (two such tests on two cores stop them all).
public func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
