import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The process's limit on open file descriptors (`RLIMIT_NOFILE`): every connection, event
/// stream, media source, download and the offline store's files count against it.
///
/// systemd starts services with a soft limit of 1024 whatever the hard limit is (so that programs
/// using `select(2)` keep working); the service polls, so `serve` raises the soft limit to the
/// hard one at start (`raiseToHard()`), and the unit's `LimitNOFILE=` sets the hard one.
public struct FileDescriptorLimit: Sendable, Equatable, CustomStringConvertible {
    /// What the process may open now.
    public var soft: UInt64
    /// How far an unprivileged process may raise `soft`.
    public var hard: UInt64

    public init(soft: UInt64, hard: UInt64) {
        self.soft = soft
        self.hard = hard
    }

    public var description: String { "\(Self.format(soft)) (hard \(Self.format(hard)))" }

    private static func format(_ v: UInt64) -> String { v == UInt64(rlim_t.max) ? "unlimited" : String(v) }

    /// The limits in force. Wraps `getrlimit(RLIMIT_NOFILE)`.
    public static func current() throws(FileLimitError) -> FileDescriptorLimit {
        var r = rlimit()
        guard getrlimit(rlimitNoFile, &r) == 0 else { throw FileLimitError(operation: "getrlimit(RLIMIT_NOFILE)", errno: errno) }
        return FileDescriptorLimit(soft: UInt64(r.rlim_cur), hard: UInt64(r.rlim_max))
    }

    /// Sets the soft limit (never above the hard one). Wraps `setrlimit(RLIMIT_NOFILE)`.
    public static func setSoft(_ soft: UInt64) throws(FileLimitError) {
        let now = try current()
        var r = rlimit(rlim_cur: rlim_t(min(soft, now.hard)), rlim_max: rlim_t(now.hard))
        guard setrlimit(rlimitNoFile, &r) == 0 else { throw FileLimitError(operation: "setrlimit(RLIMIT_NOFILE, \(soft))", errno: errno) }
    }

    /// Raises the soft limit to the hard one; returns the limits before and after.
    public static func raiseToHard() throws(FileLimitError) -> (before: FileDescriptorLimit, after: FileDescriptorLimit) {
        let before = try current()
        if before.soft < before.hard { try setSoft(before.hard) }
        return (before, try current())
    }

    /// The soft limit as a count of descriptors (a limit past `Int.max`, "unlimited", as `Int.max`).
    public var usable: Int { soft >= UInt64(Int.max) ? Int.max : Int(soft) }

    #if canImport(Glibc)
    private static let rlimitNoFile = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    private static let rlimitNoFile = RLIMIT_NOFILE
    #endif
}

/// A file-limit call that failed: which, and why.
public struct FileLimitError: Error, Equatable, CustomStringConvertible {
    public var operation: String
    public var errno: Int32
    public var description: String { "file limit: \(operation) failed: \(String(cString: strerror(errno)))" }
}
