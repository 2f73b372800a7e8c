import Foundation
import Logging
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import Synchronization

/// The service's log level, shared by every logger it makes, changeable at run time
/// (`PUT /log-level`, `PUT /config`).
public final class LogLevelControl: Sendable {
    private let level: Mutex<Logger.Level>
    public init(_ level: Logger.Level) { self.level = Mutex(level) }
    public var current: Logger.Level {
        get { level.withLock { $0 } }
        set { level.withLock { $0 = newValue } }
    }
}

/// swift-log's stderr handler, with its level read from a `LogLevelControl` on every message.
/// Under systemd (stderr is the stream named in `$JOURNAL_STREAM`), lines are written for
/// journald instead: `<PRIORITY>label: message key=value`, without a timestamp (the journal keeps
/// its own), so that `journalctl -p warning` filters them. Every line has the userinfo of the
/// URLs it names redacted (`URLRedaction`), in its message and its metadata alike.
public struct ControlledLogHandler: LogHandler {
    private var inner: StreamLogHandler
    private let control: LogLevelControl
    private let label: String
    private let journal: Bool

    public init(label: String, control: LogLevelControl, journal: Bool = JournalLine.stderrIsJournal()) {
        inner = StreamLogHandler.standardError(label: label)
        inner.logLevel = .trace
        self.control = control
        self.label = label
        self.journal = journal
    }

    public var logLevel: Logger.Level {
        get { control.current }
        set { control.current = newValue }
    }

    public var metadata: Logger.Metadata {
        get { inner.metadata }
        set { inner.metadata = newValue }
    }

    public var metadataProvider: Logger.MetadataProvider? {
        get { inner.metadataProvider }
        set { inner.metadataProvider = newValue }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { inner[metadataKey: key] }
        set { inner[metadataKey: key] = newValue }
    }

    public func log(event: LogEvent) {
        var event = event
        event.message = Logger.Message(stringLiteral: URLRedaction.redact("\(event.message)"))
        event.metadata = event.metadata.map(Self.redacted)
        guard journal else { return inner.log(event: event) }
        var metadata = inner.metadata
        if let provided = inner.metadataProvider?.get() { metadata.merge(provided) { _, new in new } }
        if let own = event.metadata { metadata.merge(own) { _, new in new } }
        // One write(2) per line: lines from different threads do not interleave.
        let bytes = Array((JournalLine.format(level: event.level, label: label, message: "\(event.message)", metadata: Self.redacted(metadata)) + "\n").utf8)
        _ = bytes.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count) }
    }
}

extension ControlledLogHandler {
    /// `metadata` with the userinfo of every URL in its values redacted.
    static func redacted(_ metadata: Logger.Metadata) -> Logger.Metadata {
        metadata.mapValues(redacted)
    }

    private static func redacted(_ value: Logger.MetadataValue) -> Logger.MetadataValue {
        switch value {
        case .string(let s): return .string(URLRedaction.redact(s))
        case .stringConvertible(let c): return .string(URLRedaction.redact(c.description))
        case .array(let a): return .array(a.map(redacted))
        case .dictionary(let d): return .dictionary(d.mapValues(redacted))
        }
    }
}

/// journald's stream protocol: a `<N>` prefix (syslog priority) on each line.
public enum JournalLine {
    /// The syslog priority of a swift-log level.
    public static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: return 7
        case .info: return 6
        case .notice: return 5
        case .warning: return 4
        case .error: return 3
        case .critical: return 2
        }
    }

    /// One line: `<6>scanout: listening on ... key=value` (metadata sorted by key).
    public static func format(level: Logger.Level, label: String, message: String, metadata: Logger.Metadata) -> String {
        let pairs = metadata.sorted { $0.key < $1.key }.map { " \($0.key)=\($0.value)" }.joined()
        let text = (message + pairs).replacingOccurrences(of: "\n", with: " ")
        return "<\(priority(level))>\(label): \(text)"
    }

    /// Whether stderr is the journal stream systemd connected (`$JOURNAL_STREAM` is `DEV:INODE`
    /// of that stream; a child whose stderr was redirected elsewhere inherits the variable but
    /// not the stream, so both are compared).
    public static func stderrIsJournal(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        guard let value = environment["JOURNAL_STREAM"] else { return false }
        let parts = value.split(separator: ":")
        guard parts.count == 2, let dev = UInt64(parts[0]), let ino = UInt64(parts[1]) else { return false }
        var st = stat()
        guard fstat(2, &st) == 0 else { return false }
        return UInt64(st.st_dev) == dev && UInt64(st.st_ino) == ino
    }
}

extension Logger {
    /// A logger whose level follows `control`.
    public static func controlled(_ label: String, control: LogLevelControl) -> Logger {
        Logger(label: label) { ControlledLogHandler(label: $0, control: control) }
    }
}
