import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Sends counter_live.ts to 127.0.0.1:`port` in real time (`Tests/Fixtures/ts_sender.py`).
public final class LoopbackSender {
    public let port: UInt16
    private let process = Process()
    public var source: String { "udp://127.0.0.1:\(port)" }

    /// Sends `file` (counter_live.ts when nil), `seconds` long, in real time.
    public init(file: String? = nil, seconds: Double = 30) throws {
        // A free port: bind to 0, read it back, let it go.
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) } }
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        close(fd)
        port = UInt16(bigEndian: addr.sin_port)
        process.executableURL = URL(fileURLWithPath: try Proc.which("python3"))
        process.arguments = [Fixtures.packageRoot.appendingPathComponent("Tests/Fixtures/ts_sender.py").path,
                             try file ?? Fixtures.path("counter_live.ts"), "127.0.0.1", String(port), "--seconds", String(seconds)]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}

