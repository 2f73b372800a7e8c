import Foundation
import Logging
import ScanoutOffline
import Synchronization
import Testing

/// An offline manager over a store in a scratch directory, with the events it reported: the
/// offline store driven in process, by its own tests and by the service's.
public final class OfflineHarness: Sendable {
    /// The tests' servers listen on loopback, which downloads reach only when allowed.
    public static let loopback = ["127.0.0.1", "::1"]

    public let scratch: Scratch
    public let manager: OfflineManager
    public let log = EventLog()

    public init(_ configure: (inout OfflineSettings) -> Void = { _ in }, scratch: Scratch? = nil,
                wallClock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }) throws {
        self.scratch = try scratch ?? Scratch()
        var settings = OfflineSettings()
        settings.minFreeBytes = 0
        settings.readTimeout = 5
        settings.allowedHosts = try HostAllowance(Self.loopback)
        configure(&settings)
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let store = try OfflineStore(directory: self.scratch.path("state"), logger: logger)
        let log = self.log
        manager = OfflineManager(store: store, settings: settings, logger: logger, wallClock: wallClock) { e in log.events.withLock { $0.append(e) } }
    }

    /// Waits until download `id` is in `state` (at most `seconds`).
    public func wait(_ id: String, for state: DownloadState, seconds: Double = 60) async throws -> DownloadStatus {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let s = try manager.status(id)
            if s.record.state == state { return s }
            if s.record.state == .failed && state != .failed { Issue.record("\(id) failed: \(s.record.reason ?? "")"); return s }
            try await Task.sleep(for: .milliseconds(50))
        }
        let s = try manager.status(id)
        Issue.record("\(id) is \(s.record.state), not \(state), after \(seconds) s (\(s.bytes) of \(s.total) bytes)")
        return s
    }

    /// Adds a download of `source` and waits until it runs; its id.
    public func started(_ source: String) async throws -> String {
        let id = try await manager.add(DownloadRequest(source: source)).record.id
        _ = try await wait(id, for: .downloading)
        return id
    }

    /// Expects each request to be refused as unusable, its reason containing the text given.
    public func expectRefused(_ cases: [(request: DownloadRequest, reason: String)], sourceLocation: SourceLocation = #_sourceLocation) async {
        for (request, reason) in cases {
            do {
                _ = try await manager.add(request)
                Issue.record("\(request.source) was accepted (\(reason) expected)", sourceLocation: sourceLocation)
            } catch {
                guard case .sourceUnusable(_, let why) = error else { Issue.record("\(error)", sourceLocation: sourceLocation); continue }
                #expect(why.contains(reason), "\(why)", sourceLocation: sourceLocation)
            }
        }
    }

    /// The states download `id` went through, as reported.
    public func states(_ id: String) -> [DownloadState] {
        log.events.withLock { $0.compactMap { if case .state(id, let s, _) = $0 { return s } else { return nil } } }
    }

    /// The events the manager reported, in order.
    public final class EventLog: Sendable {
        public let events = Mutex<[OfflineEvent]>([])
    }

    /// The framemd5 lines (md5 column) of an input.
    public static func md5s(_ input: String) throws -> [String] {
        try Proc.ffmpegFrameMD5Lines(input).map(md5Column)
    }
}
