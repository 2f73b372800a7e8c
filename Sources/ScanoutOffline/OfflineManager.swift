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
    private let running = Mutex<[String: Running]>([:])
    /// Failures the store could not record (a full disk fails the database's writes too): shown
    /// until the download is resumed; after a restart the download resumes by itself.
    private let unrecorded = Mutex<[String: String]>([:])
    /// The assets whose decrypting playlists this manager wrote (`KeyedPlaylists`): the ones it
    /// releases, whatever another manager of the process wrote.
    let keyedPlaylists = Mutex<Set<String>>([])

    /// A download with a slot: its task and what it measured.
    private struct Running {
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

    /// The master's variant the caps allow (highest bitrate, `VariantSelector`'s ladder), its
    /// segments, and BANDWIDTH x duration as the estimate (a HEAD of the first segment times
    /// their number when the playlist names no bandwidth).
    private func resolvePlaylist(_ request: DownloadRequest, into record: inout DownloadRecord, segments: inout [SegmentRecord],
                                 key: inout PendingKey?) async throws {
        var url = request.source
        var text = try await fetcher.text(url)
        guard HLSPlaylist.isPlaylist(text) else { throw OfflineError.sourceUnusable(source: url, reason: "not an HLS playlist (no #EXTM3U)") }
        let variants = HLSPlaylist.variants(text, base: url)
        if !variants.isEmpty {
            var options = AdaptiveOptions()
            options.maxHeight = request.maxHeight ?? settings.maxHeight
            options.maxBitrate = request.maxBitrate ?? settings.maxBitrate
            let chosen = VariantSelector(variants: variants.map(\.variant), options: options).ladder.last!
            let variant = variants[chosen.id]
            url = variant.url
            record.bitrate = chosen.bitrate
            record.height = chosen.height
            text = try await fetcher.text(url)
        }
        if text.contains("#EXT-X-BYTERANGE") {
            throw OfflineError.sourceUnusable(source: url, reason: "byte-range segments (#EXT-X-BYTERANGE) are not kept offline")
        }
        let keys = HLSPlaylist.keys(text, base: url).filter { $0.method != "NONE" }
        if let first = keys.first {
            if let other = keys.first(where: { $0.method != "AES-128" }) {
                throw OfflineError.sourceUnusable(source: url, reason: "segments encrypted with \(other.method) are not kept offline (only AES-128: "
                                                  + "libavformat's hls demuxer decrypts SAMPLE-AES only for some codecs)")
            }
            guard let uri = first.uri, keys.allSatisfy({ $0.uri == uri && $0.iv == first.iv }) else {
                throw OfflineError.sourceUnusable(source: url, reason: "segments under more than one key (key rotation) are not kept offline")
            }
            key = .hls(uri: uri, iv: first.iv, mediaSequence: HLSPlaylist.mediaSequence(text))
        }
        let (initSection, list) = HLSPlaylist.segments(text, base: url)
        guard !list.isEmpty else { throw OfflineError.sourceUnusable(source: url, reason: "the media playlist lists no segments") }
        record.kind = .hls
        record.mediaURL = url
        let duration = list.map(\.duration).reduce(0, +)
        if let bitrate = record.bitrate, bitrate > 0 {
            record.estimate = Int64(Double(bitrate) * duration / 8)
        } else {
            record.estimate = (try await fetcher.length(list[0].url) ?? 0) * Int64(list.count)
        }
        let first = initSection == nil ? 0 : 1
        segments = list.enumerated().map { i, s in
            SegmentRecord(downloadId: record.id, number: first + i, url: s.url, duration: s.duration,
                          file: String(format: "seg%05d.", i) + Self.extensionOf(s.url, default: "ts"), length: nil, done: false)
        }
        if let initSection {
            segments.insert(SegmentRecord(downloadId: record.id, number: 0, url: initSection, duration: 0,
                                          file: "init." + Self.extensionOf(initSection, default: "mp4"), length: nil, done: false,
                                          initSection: true), at: 0)
        }
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

    // MARK: Running

    /// Starts queued downloads, oldest first, while slots are free.
    func schedule() {
        let queued = ((try? store.downloads()) ?? []).filter { $0.state == .queued }
        let start: [String] = running.withLock { r in
            var picked: [String] = []
            for q in queued where r[q.id] == nil && r.count < settings.concurrentDownloads {
                r[q.id] = Running()
                picked.append(q.id)
            }
            return picked
        }
        for id in start {
            let task = Task { await self.run(id) }
            running.withLock { $0[id]?.task = task }
        }
    }

    private func run(_ id: String) async {
        defer {
            running.withLock { _ = $0.removeValue(forKey: id) }
            schedule()
        }
        do {
            guard try store.download(id)?.state == .queued else { return }
            try store.setState(id, .downloading)
            onEvent(.state(id: id, state: .downloading, reason: nil))
            try await download(id)
        } catch {
            // Paused or deleted: the command said so already.
            if Task.isCancelled { return }
            var reason = "\(error)"
            if reason.contains("No space left") || reason.contains("disk is full") {
                reason = "the disk is full (free space in the state directory, then resume): \(reason)"
            }
            logger.error("offline: \(id) failed: \(reason)")
            do {
                try store.setState(id, .failed, reason: reason)
            } catch {
                logger.error("offline: \(id): the failure could not be recorded (\(error))")
                unrecorded.withLock { $0[id] = reason }
            }
            onEvent(.state(id: id, state: .failed, reason: reason))
        }
    }

    private func download(_ id: String) async throws {
        let record = try existing(id)
        var segments = try store.segments(of: id)
        let dir = store.directory(of: id)
        try PrivateFiles.directory(dir)
        // A segment recorded as done whose file is not whole (the disk lost it) is fetched again.
        for i in segments.indices where segments[i].done && fileSize(dir + "/" + segments[i].file) != segments[i].length {
            logger.warning("offline: \(id) segment \(i) is not whole on disk; fetching it again")
            segments[i].done = false
            truncate(dir + "/" + segments[i].file, 0)
            try store.update(segments[i])
        }
        let onDisk = segments.reduce(Int64(0)) { $0 + (fileSize(dir + "/" + $1.file) ?? 0) }
        running.withLock { $0[id]?.meter.start(bytes: onDisk) }
        try writeLocalPlaylist(record, segments)
        for i in segments.indices where !segments[i].done {
            try Task.checkCancellation()
            let path = dir + "/" + segments[i].file
            var attempt = 1
            while true {
                do {
                    let snapshot = segments
                    segments[i].length = try await fetcher.file(segments[i].url, to: path) { n in
                        self.received(n, id: id, record: record, segments: snapshot)
                    }
                    break
                } catch let e as FetchError where !e.isPermanent && attempt < settings.attempts && !Task.isCancelled {
                    logger.warning("offline: \(id) segment \(i): \(e); trying again (\(attempt) of \(settings.attempts - 1))")
                    try await Task.sleep(for: .milliseconds(300 * attempt))
                    attempt += 1
                }
            }
            segments[i].done = true
            try store.update(segments[i])
            try writeLocalPlaylist(record, segments)
        }
        try await verify(record, segments)
        var finished = record
        finished.state = .completed
        finished.reason = nil
        finished.completed = Date().timeIntervalSince1970
        try store.writeAsset(finished, segments: segments)
        try store.setState(id, .completed)
        let total = Self.total(record, segments)
        onEvent(.progress(id: id, bytes: total, total: total, percent: 100, rate: 0, eta: 0))
        onEvent(.state(id: id, state: .completed, reason: nil))
        logger.info("offline: \(id) completed (\(total) bytes)")
    }

    /// Counts `n` new bytes; reports progress at most twice a second.
    private func received(_ n: Int64, id: String, record: DownloadRecord, segments: [SegmentRecord]) {
        let report: (bytes: Int64, rate: Double)? = running.withLock { r in
            guard r[id] != nil else { return nil }
            return r[id]!.meter.add(n)
        }
        guard let report else { return }
        let total = max(Self.total(record, segments), report.bytes)
        onEvent(.progress(id: id, bytes: report.bytes, total: total, percent: total > 0 ? Double(report.bytes) * 100 / Double(total) : 0,
                          rate: report.rate, eta: report.rate > 0 ? Double(total - report.bytes) / report.rate : nil))
    }

    /// The local playlist (HLS), replaced atomically.
    private func writeLocalPlaylist(_ record: DownloadRecord, _ segments: [SegmentRecord]) throws {
        guard record.kind == .hls else { return }
        try Data(HLSPlaylist.localText(segments).utf8).write(to: URL(fileURLWithPath: store.directory(of: record.id) + "/index.m3u8"), options: .atomic)
    }

    /// The integrity check: every file as long as the server announced (and transport-stream
    /// segments whole packets), and the asset opens and decodes its first and last frame.
    private func verify(_ record: DownloadRecord, _ segments: [SegmentRecord]) async throws {
        let dir = store.directory(of: record.id)
        // Encrypted segments (AES-128 HLS) are whole AES blocks (16 bytes), not transport packets;
        // a CENC file is checked by decrypting it (`checkDecryption`).
        let encrypted = try record.kind == .hls && store.contentKey(of: record.id) != nil
        for var s in segments {
            let size = fileSize(dir + "/" + s.file) ?? -1
            var problem: String?
            if let l = s.length, size != l {
                problem = "segment \(s.number) (\(s.file)) holds \(size) bytes; the server announced \(l)"
            } else if encrypted, size % 16 != 0 {
                problem = "segment \(s.number) (\(s.file)) holds \(size) bytes, not whole 16-byte AES blocks (the server sent less than the file)"
            } else if !encrypted, s.file.hasSuffix(".ts"), size % 188 != 0 {
                problem = "segment \(s.number) (\(s.file)) holds \(size) bytes, not whole 188-byte transport packets (the server sent less than the file)"
            }
            if let problem {
                // Fetched again from the start when the download is resumed.
                s.done = false
                truncate(dir + "/" + s.file, 0)
                try store.update(s)
                try writeLocalPlaylist(record, try store.segments(of: record.id))
                throw IntegrityError(problem)
            }
        }
        let local = try playableInput(record, segments)
        let input = local.source
        if record.kind == .file {
            // A CENC file is decoded whole there, with its key.
            try await checkDecryption(local, record: record)
            if local.decryptionKey != nil { return }
        }
        try await offThread {
            do {
                let seeker = try FrameSeeker(input: input)
                guard seeker.frameCount > 0 else { throw IntegrityError("\(input) holds no video frames") }
                _ = try seeker.frame(0)
                _ = try seeker.frame(seeker.frameCount - 1)
            } catch let e as IntegrityError {
                throw e
            } catch {
                // Inputs the demuxer cannot seek in (fragmented MP4 through the hls demuxer):
                // every frame decoded in order, the first and the last included.
                let reader = try FrameReader(input: input)
                let frame = VideoFrame()
                var count = 0
                while try reader.next(into: frame) { count += 1 }
                guard count > 0 else { throw IntegrityError("\(input) holds no video frames") }
            }
        }
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

/// A download whose files do not pass the integrity check.
struct IntegrityError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = "integrity check: " + d }
}

/// Bytes of one download: what was on disk at its start plus what came since, and the rate over
/// the last three seconds.
struct Meter {
    private(set) var bytes: Int64 = 0
    private var samples: [(time: Double, bytes: Int64)] = []
    private var lastReport = 0.0

    mutating func start(bytes: Int64) {
        self.bytes = bytes
        samples = [(Self.now, bytes)]
    }

    /// Adds `n`; returns what to report when half a second passed since the last report.
    mutating func add(_ n: Int64) -> (bytes: Int64, rate: Double)? {
        bytes += n
        let t = Self.now
        samples.append((t, bytes))
        samples.removeAll { t - $0.time > 3 }
        guard t - lastReport >= 0.5 else { return nil }
        lastReport = t
        return (bytes, rate())
    }

    func rate() -> Double {
        guard let first = samples.first, let last = samples.last, last.time - first.time > 0.05 else { return 0 }
        return Double(last.bytes - first.bytes) / (last.time - first.time)
    }

    static var now: Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }
}

/// Runs blocking work (decoding) on a thread of its own, not on the cooperative pool.
func offThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { (c: CheckedContinuation<T, any Error>) in
        Thread { c.resume(with: Result { try body() }) }.start()
    }
}
