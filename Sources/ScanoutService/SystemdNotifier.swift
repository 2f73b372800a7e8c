import Foundation
import ScanoutCore

/// The service manager's notification socket (`sd_notify(3)`), written without libsystemd: one
/// datagram per message to the `AF_UNIX` socket named in `$NOTIFY_SOCKET` (a path, or `@name`
/// for the abstract namespace). The notifier owns its socket and closes it once, in `deinit`.
///
/// Messages are `KEY=VALUE` lines: `READY=1`, `RELOADING=1`, `STOPPING=1`, `WATCHDOG=1`,
/// `STATUS=...`, `MONOTONIC_USEC=...`.
public final class SystemdNotifier: Sendable {
    /// The socket's address as given (`/run/systemd/notify` or `@abstract`).
    public let address: String
    /// How often the watchdog must be fed (`$WATCHDOG_USEC`, when `$WATCHDOG_PID` is unset or
    /// names this process); nil when systemd watches nothing.
    public let watchdogInterval: Duration?
    private let fd: Int32

    /// The notifier the service manager asked for in `environment`, nil when `$NOTIFY_SOCKET` is
    /// unset (not started by systemd, or not `Type=notify`).
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws(NotifyError) -> SystemdNotifier? {
        guard let address = environment["NOTIFY_SOCKET"], !address.isEmpty else { return nil }
        var watchdog: Duration?
        if let usec = environment["WATCHDOG_USEC"].flatMap(UInt64.init), usec > 0,
           environment["WATCHDOG_PID"].flatMap(Int32.init).map({ $0 == getpid() }) ?? true {
            watchdog = .microseconds(usec)
        }
        return try SystemdNotifier(address: address, watchdogInterval: watchdog)
    }

    public init(address: String, watchdogInterval: Duration? = nil) throws(NotifyError) {
        guard address.hasPrefix("/") || address.hasPrefix("@") else { throw .badAddress(address, "must be an absolute path or @abstract") }
        guard address.utf8.count < MemoryLayout.size(ofValue: sockaddr_un().sun_path) else {
            throw .badAddress(address, "longer than a Unix socket path may be")
        }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .socket(errno: errno) }
        self.fd = fd
        self.address = address
        self.watchdogInterval = watchdogInterval
    }

    deinit { close(fd) }

    /// Sends `message` (one or more `KEY=VALUE` lines) as one datagram.
    public func notify(_ message: String) throws(NotifyError) {
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        var path = Array(address.utf8)
        if path.first == UInt8(ascii: "@") { path[0] = 0 }   // the abstract namespace
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            for (i, b) in path.enumerated() { raw[i] = b }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count)
        let bytes = Array(message.utf8)
        let sent = bytes.withUnsafeBytes { buf in
            withUnsafePointer(to: &addr) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, buf.baseAddress, buf.count, Int32(MSG_NOSIGNAL), $0, length)
                }
            }
        }
        guard sent == bytes.count else { throw .send(address: address, message: message, errno: errno) }
    }

    /// `RELOADING=1` with the monotonic time, as `Type=notify-reload` wants it (and `Type=notify`
    /// accepts): `MONOTONIC_USEC` is the monotonic clock's time in whole microseconds.
    public func reloading() throws(NotifyError) {
        try notify("RELOADING=1\nMONOTONIC_USEC=\(ClockTime.now().nanoseconds / 1000)")
    }
}

/// A notification that could not be sent, and what to check.
public enum NotifyError: Error, Equatable, CustomStringConvertible {
    case badAddress(String, String)
    case socket(errno: Int32)
    case send(address: String, message: String, errno: Int32)

    public var description: String {
        switch self {
        case .badAddress(let a, let why):
            return "NOTIFY_SOCKET \"\(a)\" \(why); unset it or start the service from systemd"
        case .socket(let e):
            return "cannot make a datagram socket for NOTIFY_SOCKET: \(String(cString: strerror(e)))"
        case .send(let a, let m, let e):
            return "sending \"\(m.split(separator: "\n").first ?? "")\" to NOTIFY_SOCKET \(a) failed: \(String(cString: strerror(e))) (is the service manager still there?)"
        }
    }
}
