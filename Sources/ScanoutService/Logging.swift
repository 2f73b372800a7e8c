import Logging
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
public struct ControlledLogHandler: LogHandler {
    private var inner: StreamLogHandler
    private let control: LogLevelControl

    public init(label: String, control: LogLevelControl) {
        inner = StreamLogHandler.standardError(label: label)
        inner.logLevel = .trace
        self.control = control
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
        inner.log(event: event)
    }
}

extension Logger {
    /// A logger whose level follows `control`.
    public static func controlled(_ label: String, control: LogLevelControl) -> Logger {
        Logger(label: label) { ControlledLogHandler(label: $0, control: control) }
    }
}
