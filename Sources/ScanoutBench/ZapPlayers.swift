import Foundation
import ScanoutCore
import ScanoutLoopback

/// A player that changes channel on request and says when the new channel's first frame is shown.
protocol ZapPlayer {
    /// Tunes to `url`; returns the seconds from the request to the first frame on screen, as seen
    /// from outside, and the player's own figure where it gives one.
    func tune(_ url: String) throws -> ZapTiming
    func stop()
}

/// One channel change as a player saw it.
struct ZapTiming {
    /// From the request to the first frame on screen, seen from outside.
    var seconds: Double
    /// The player's own figure, where it gives one.
    var inProcess: Double? = nil
    /// The player's stages, where it gives them (seconds by name).
    var stages: [String: Double] = [:]
}

/// `scanout serve` (this executable) on a loopback port, tuned with POST /load and watched on
/// GET /events.
final class ScanoutZapPlayer: ZapPlayer {
    private let process = Process()
    private let endpoint: HTTPEndpoint
    private let events: SSEReader
    private let scratch: URL

    init() throws {
        let port = try unusedLoopbackPort(Int32(SOCK_STREAM.rawValue))
        endpoint = .tcp(host: "127.0.0.1", port: port)
        scratch = FileManager.default.temporaryDirectory.appendingPathComponent("scanout-bench-zap-\(getpid())")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        let config = scratch.appendingPathComponent("scanout.json")
        try Data("{}\n".utf8).write(to: config)  // defaults only, not /etc/scanout/scanout.json
        process.executableURL = URL(fileURLWithPath: selfExecutable())
        process.arguments = ["serve", "--config", config.path, "--output", "headless", "--renderer", "cpu",
                             "--host", "127.0.0.1", "--port", String(port), "--no-socket"]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        let log = scratch.appendingPathComponent("serve.log")
        guard FileManager.default.createFile(atPath: log.path, contents: nil) else {
            throw BenchError("cannot create \(log.path) for the service's log")
        }
        process.standardError = try FileHandle(forWritingTo: log)
        try process.run()
        let deadline = ClockTime.now() + .seconds(20)
        while (try? LoopbackHTTP.request(endpoint, "GET", "/version", timeout: 1))?.status != 200 {
            guard process.isRunning, ClockTime.now() < deadline else {
                throw BenchError("scanout serve did not answer on 127.0.0.1:\(port) within 20 s; its log: \(log.path)")
            }
            usleep(50_000)
        }
        events = try SSEReader(endpoint, path: "/events")
    }

    func tune(_ url: String) throws -> ZapTiming {
        let t0 = monotonicSeconds()
        let answer = try LoopbackHTTP.request(endpoint, "POST", "/load", body: #"{"source": "\#(url)"}"#, timeout: 30)
        guard answer.status == 200 else { throw BenchError("scanout: POST /load \(url) answered \(answer.status): \(answer.text)") }
        var shown: SSEMessage?
        _ = events.read(timeout: 30) { m in
            guard m.event == "firstFrame", m.json?["source"] as? String == url else { return false }
            shown = m
            return true
        }
        guard let shown else { throw BenchError("scanout: no firstFrame event for \(url) within 30 s") }
        let t1 = monotonicSeconds()
        return ZapTiming(seconds: t1 - t0, inProcess: shown.json?["sinceRequest"] as? Double,
                         stages: (shown.json?["stages"] as? [String: Double]) ?? [:])
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: scratch)
    }
}

/// mpv idle with its JSON IPC on a Unix socket, tuned with `loadfile`.
final class MPVZapPlayer: ZapPlayer {
    private let process = Process()
    private let ipc: LineConnection
    private let socketPath: String

    init() throws {
        socketPath = FileManager.default.temporaryDirectory.appendingPathComponent("scanout-bench-zap-mpv-\(getpid()).sock").path
        guard let mpv = Peer.path(of: "mpv") else { throw BenchError("mpv is not installed (tools/setup-bench.sh installs it)") }
        process.executableURL = URL(fileURLWithPath: mpv)
        process.arguments = ["--no-config", "--idle=yes", "--really-quiet", "--vo=null", "--ao=null", "--aid=no",
                             "--input-ipc-server=\(socketPath)"]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        ipc = try LineConnection(.unix(path: socketPath), wait: 10)
    }

    func tune(_ url: String) throws -> ZapTiming {
        let t0 = monotonicSeconds()
        try ipc.send(line: #"{"command": ["loadfile", "\#(url)"]}"#)
        let deadline = t0 + 30
        while monotonicSeconds() < deadline {
            guard let line = ipc.readLine(timeout: deadline - monotonicSeconds()) else { break }
            if line.contains(#""event":"playback-restart""#) { return ZapTiming(seconds: monotonicSeconds() - t0) }
            if line.contains(#""event":"end-file""#), line.contains(#""reason":"error""#) {
                throw BenchError("mpv could not play \(url): \(line)")
            }
        }
        throw BenchError("mpv: no playback-restart for \(url) within 30 s")
    }

    func stop() {
        try? ipc.send(line: #"{"command": ["quit"]}"#)
        process.waitUntilExit()
        unlink(socketPath)
    }
}
