import Foundation
import Logging
import Synchronization

/// The downloads running: the queue's slots, each download's segments fetched (resumed by
/// `Range`, retried while the failure is not permanent), its progress, and its end.
extension OfflineManager {
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
    func writeLocalPlaylist(_ record: DownloadRecord, _ segments: [SegmentRecord]) throws {
        guard record.kind == .hls else { return }
        try Data(HLSPlaylist.localText(segments).utf8).write(to: URL(fileURLWithPath: store.directory(of: record.id) + "/index.m3u8"), options: .atomic)
    }
}
