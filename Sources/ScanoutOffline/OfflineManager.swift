import Foundation
import Logging
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutPolicy
import Synchronization

/// What `POST /downloads` asks for: a source (an HLS master or media playlist, or a file, over
/// HTTP), its content token, and caps for the variant kept; `POST /assets` adds the id the client
/// chose and the token's licence.
public struct DownloadRequest: Sendable, Equatable {
    public var source: String
    public var token: String?
    public var maxBitrate: Int?
    public var maxHeight: Int?
    /// The local content id (an asset's); nil: a random one.
    public var id: String?
    /// Checked on every play from the store; nil: none (plays as long as it is kept).
    public var licence: Licence?
    /// The token's `keyServer` claim: where its content keys are asked for (`{kid}`: the key's
    /// id); nil: an HLS playlist's key URI, or the service's own licence keys (CENC).
    public var keyServer: String?
    public init(source: String, token: String? = nil, maxBitrate: Int? = nil, maxHeight: Int? = nil, id: String? = nil, licence: Licence? = nil,
                keyServer: String? = nil) {
        self.keyServer = keyServer
        self.source = source
        self.token = token
        self.maxBitrate = maxBitrate
        self.maxHeight = maxHeight
        self.id = id
        self.licence = licence
    }
}

/// Runs the offline store's downloads: at most `concurrentDownloads` at once (the rest
/// `queued`, oldest first), each segment after the other, every segment resumed by `Range`
/// where a transfer stopped, the local playlist rewritten after each segment, the integrity
/// checked at the end. Its state is the store's: a service killed mid-download finds its
/// downloads `downloading` on the next start and queues them again (`resumeInterrupted`).
///
/// Thread-safe. `onEvent` is called from the downloads' tasks: `progress` at most twice a
/// second per download, `state` at every change.
public final class OfflineManager: Sendable {
    public let store: OfflineStore
    public let settings: OfflineSettings
    let fetcher: Fetcher
    let logger: Logger
    let onEvent: @Sendable (OfflineEvent) -> Void
    /// The wall clock licences are judged by (seconds since 1970), through the store's
    /// high-water mark; tests set it.
    let wallClock: @Sendable () -> Double
    /// The service's own licence keys (`/licence/KID`, asked in the process), where CENC keys
    /// come from when the token names no key server; nil: none configured.
    let ownLicence: LicenceLookup?
    let running = Mutex<[String: Running]>([:])
    /// Failures the store could not record (a full disk fails the database's writes too): shown
    /// until the download is resumed; after a restart the download resumes by itself.
    let unrecorded = Mutex<[String: String]>([:])
    /// The assets whose decrypting playlists this manager wrote (`KeyedPlaylists`): the ones it
    /// releases, whatever another manager of the process wrote.
    let keyedPlaylists = Mutex<Set<String>>([])

    /// A download with a slot: its task and what it measured.
    struct Running {
        var task: Task<Void, Never>?
        var meter = Meter()
    }

    public init(store: OfflineStore, settings: OfflineSettings, logger: Logger,
                wallClock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 },
                onEvent: @escaping @Sendable (OfflineEvent) -> Void = { _ in }, ownLicence: LicenceLookup? = nil) {
        self.store = store
        self.ownLicence = ownLicence
        self.wallClock = wallClock
        self.settings = settings
        self.logger = logger
        self.onEvent = onEvent
        fetcher = Fetcher(readTimeout: settings.readTimeout, allowance: settings.allowedHosts)
        let swept = KeyedPlaylists.sweep()
        if swept > 0 { logger.notice("offline: removed \(swept) playlist(s) naming content keys that a stopped service left in \(KeyedPlaylists.directory)") }
    }

    // MARK: Commands

    /// Resolves the source (the variant the caps allow, or the file), estimates its size,
    /// refuses when the disk would keep less than `minFreeBytes` free, and queues it.
    public func add(_ request: DownloadRequest) async throws(OfflineError) -> DownloadStatus {
        let source = request.source
        guard source.hasPrefix("http://") || source.hasPrefix("https://") else {
            throw .sourceUnusable(source: source, reason: "only http and https sources are downloaded (a local file is already offline)")
        }
        if let id = request.id, try store.download(id) != nil { throw .idTaken(id: id) }
        let id = request.id ?? Self.newID()
        var record = DownloadRecord(id: id, source: source, token: request.token, kind: .file, mediaURL: source, bitrate: nil, height: nil,
                                    state: .queued, reason: nil, estimate: 0, created: Date().timeIntervalSince1970, completed: nil)
        var segments: [SegmentRecord] = []
        var pendingKey: PendingKey?
        do {
            let path = URL(string: source)?.path ?? source
            if path.hasSuffix(".m3u8") || path.hasSuffix(".m3u") {
                try await resolvePlaylist(request, into: &record, segments: &segments, key: &pendingKey)
            } else {
                let length = try await fetcher.length(source)
                record.estimate = length ?? 0
                segments = [SegmentRecord(downloadId: id, number: 0, url: source, duration: 0,
                                          file: "media." + Self.extensionOf(source, default: "mp4"), length: nil, done: false)]
                pendingKey = try await encryptedFileKey(source)
            }
        } catch let e as OfflineError {
            throw e
        } catch {
            throw .sourceUnusable(source: source, reason: "\(error)")
        }
        let keyRecord = try await fetchKey(pendingKey, for: request, id: id, playlist: record.mediaURL)
        let available = freeBytes()
        guard available - record.estimate >= settings.minFreeBytes else {
            throw .insufficientSpace(needed: record.estimate, available: available, cushion: settings.minFreeBytes)
        }
        try store.insert(record, segments: segments, licence: request.licence.map { LicenceRecord(downloadId: id, licence: $0) },
                         key: keyRecord)
        logger.info("offline: \(id) queued", metadata: ["source": "\(source)", "estimate": "\(record.estimate)",
                                                        "segments": "\(segments.count)"])
        onEvent(.state(id: id, state: .queued, reason: nil))
        schedule()
        return try status(id)
    }

    public func pause(_ id: String) throws(OfflineError) -> DownloadStatus {
        let r = try existing(id)
        guard r.state == .queued || r.state == .downloading else { throw .invalidState(id: id, state: r.state, command: "pause") }
        try store.setState(id, .paused)
        running.withLock { $0[id]?.task?.cancel() }
        onEvent(.state(id: id, state: .paused, reason: nil))
        return try status(id)
    }

    public func resume(_ id: String) throws(OfflineError) -> DownloadStatus {
        let r = try existing(id)
        guard r.state == .paused || r.state == .failed else { throw .invalidState(id: id, state: r.state, command: "resume") }
        try store.setState(id, .queued)
        unrecorded.withLock { _ = $0.removeValue(forKey: id) }
        onEvent(.state(id: id, state: .queued, reason: nil))
        schedule()
        return try status(id)
    }

    /// Cancels the download (waiting for its transfer to stop) and deletes it and its files.
    public func remove(_ id: String) async throws(OfflineError) {
        _ = try existing(id)
        let task = running.withLock { $0[id]?.task }
        task?.cancel()
        await task?.value
        try store.delete(id)
        try? FileManager.default.removeItem(atPath: store.directory(of: id))
        KeyedPlaylists.remove(id: id)
        logger.info("offline: \(id) cancelled and deleted")
        onEvent(.state(id: id, state: .cancelled, reason: nil))
    }

    /// After a start: downloads left `downloading` by a stop or a crash are queued again (their
    /// partial segments are resumed by `Range`), and the queue starts.
    public func resumeInterrupted() {
        for r in (try? store.downloads()) ?? [] where r.state == .downloading {
            try? store.setState(r.id, .queued)
            logger.notice("offline: \(r.id) was interrupted; resuming it")
        }
        schedule()
    }

    /// Queues a download of every source (http or https) that has none (`keepAll`); failures
    /// are logged, never thrown.
    public func keep(sources: [String]) async {
        let known = Set(((try? store.downloads()) ?? []).map(\.source))
        for s in Set(sources).sorted() where !known.contains(s) && (s.hasPrefix("http://") || s.hasPrefix("https://")) {
            do { _ = try await add(DownloadRequest(source: s)) } catch { logger.warning("offline: \(s) is not kept: \(error)") }
        }
    }

    /// The local input to play `source` from: a completed download (with its content key when
    /// it is a CENC MP4), or an HLS download with its first segments on disk (the local playlist
    /// lists what is there); a failure naming the licence when its licence has expired; nil:
    /// play the source.
    public func localInput(for source: String) -> Result<LocalInput, MediaError>? {
        guard let (r, segments) = try? store.playable(source: source) else { return nil }
        if let refusal = licenceRefusal(r.id) { return .failure(.openFailed(input: source, reason: refusal)) }
        do { return .success(try playableInput(r, segments)) } catch { return .failure(.openFailed(input: source, reason: "\(error)")) }
    }

    // MARK: Status

    public func statuses() throws(OfflineError) -> [DownloadStatus] {
        try store.downloads().map { r throws(OfflineError) in try status(r) }
    }

    public func status(_ id: String) throws(OfflineError) -> DownloadStatus {
        try status(try existing(id))
    }

    private func status(_ r: DownloadRecord) throws(OfflineError) -> DownloadStatus {
        var r = r
        if let reason = unrecorded.withLock({ $0[r.id] }) {
            r.state = .failed
            r.reason = reason
        }
        let segments = try store.segments(of: r.id)
        let dir = store.directory(of: r.id)
        let bytes = segments.reduce(Int64(0)) { $0 + (fileSize(dir + "/" + $1.file) ?? 0) }
        let total = Self.total(r, segments)
        let rate = running.withLock { $0[r.id]?.meter.rate() } ?? 0
        return DownloadStatus(record: r, bytes: bytes, total: total, rate: rate,
                              eta: rate > 0 ? Double(max(0, total - bytes)) / rate : (r.state == .completed ? 0 : nil),
                              segmentsDone: segments.count { $0.done }, segmentCount: segments.count)
    }

    /// Announced lengths where known; the estimate's share (by duration) for the others.
    static func total(_ r: DownloadRecord, _ segments: [SegmentRecord]) -> Int64 {
        let duration = segments.map(\.duration).reduce(0, +)
        return segments.reduce(Int64(0)) { sum, s in
            if let l = s.length { return sum + l }
            let share = duration > 0 ? s.duration / duration : 1 / Double(max(1, segments.count))
            return sum + Int64(Double(r.estimate) * share)
        }
    }

    func existing(_ id: String) throws(OfflineError) -> DownloadRecord {
        guard var r = try store.download(id) else { throw .notFound(id: id) }
        if let reason = unrecorded.withLock({ $0[id] }) {
            r.state = .failed
            r.reason = reason
        }
        return r
    }

    private func freeBytes() -> Int64 {
        var s = statvfs()
        guard statvfs(store.mediaRoot, &s) == 0 else { return 0 }
        return Int64(s.f_bavail) * Int64(s.f_frsize)
    }

    static func newID() -> String {
        (0..<6).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }

    static func extensionOf(_ url: String, default fallback: String) -> String {
        let ext = ((URL(string: url)?.path ?? url) as NSString).pathExtension.lowercased()
        return ext.isEmpty || ext.count > 5 || !ext.allSatisfy({ $0.isLetter || $0.isNumber }) ? fallback : ext
    }
}
