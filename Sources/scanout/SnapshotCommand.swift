import ArgumentParser
import Foundation
import ScanoutDemux
import ScanoutLoopback
import ScanoutService

/// `scanout snapshot -o FILE`: what a running `scanout serve` shows now, as a PNG (its
/// `GET /snapshot`), through its Unix socket or its TCP port.
struct SnapshotCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "snapshot",
        abstract: "Save what a running `scanout serve` shows now as a PNG (content that denies capture comes black)."
    )

    @Option(name: .shortAndLong, help: "The PNG file to write.") var output: String
    @Option(help: "Shrink to this many pixels wide.") var width: Int?
    @Option(help: "The service's Unix socket (default: the service's default).") var socket: String?
    @Option(help: "Reach the service on 127.0.0.1 at this TCP port instead.") var port: UInt16?

    func run() throws {
        if let width, !(16...7680).contains(width) { throw ValidationError("--width: must be 16 to 7680 (got \(width))") }
        let endpoint: HTTPEndpoint = port.map { .tcp(host: "127.0.0.1", port: $0) } ?? .unix(path: socket ?? ServiceConfig.defaultSocketPath)
        let answer: HTTPAnswer
        do {
            answer = try LoopbackHTTP.request(endpoint, "GET", "/snapshot" + (width.map { "?width=\($0)" } ?? ""), timeout: 10)
        } catch {
            StandardError.write("scanout: snapshot: cannot reach the service (\(error)); is `scanout serve` running? (--socket, --port)\n")
            throw ExitCode(Exit.failure)
        }
        guard answer.status == 200 else {
            StandardError.write("scanout: snapshot: \(answer.json?["error"] as? String ?? "HTTP \(answer.status)")\n")
            throw ExitCode(Exit.failure)
        }
        do {
            try answer.body.write(to: URL(fileURLWithPath: output))
        } catch {
            StandardError.write("scanout: snapshot: cannot write \(output): \(error.localizedDescription)\n")
            throw ExitCode(Exit.failure)
        }
        if let censored = answer.headers["scanout-censored"] { StandardError.write("scanout: snapshot: blacked out: \(censored)\n") }
    }
}
