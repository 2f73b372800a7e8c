import Foundation
import ScanoutOffline
import ScanoutTestSupport
import Testing

/// The offline store's downloads, driven in process against `hls_server.py` (byte ranges,
/// throttling, Content-Length lies, cut transfers).
@Suite struct OfflineStoreTests {
    @Test func keepsTheVariantTheCapsAllowAndItsFramesAreTheSources() async throws {
        let hls = try HTTPFileServer.hls(directory: try Fixtures.path("hls3"))
        let h = try OfflineHarness()
        // 288x216 is the highest variant at most 216 lines high.
        let added = try await h.manager.add(DownloadRequest(source: hls.url("master.m3u8"), maxHeight: 216))
        #expect(added.record.kind == .hls && added.record.height == 216 && added.record.mediaURL.hasSuffix("/v1/index.m3u8"))
        #expect(added.record.estimate > 0 && added.total == added.record.estimate)
        let done = try await h.wait(added.record.id, for: .completed)
        #expect(done.bytes == done.total && done.percent == 100 && done.segmentsDone == done.segmentCount)
        #expect(h.states(added.record.id) == [.queued, .downloading, .completed])
        let local = try #require(h.manager.localInput(for: hls.url("master.m3u8"))).get().source
        #expect(try OfflineHarness.md5s(local) == OfflineHarness.md5s(try Fixtures.path("hls3/v1/index.m3u8")))
        #expect(h.manager.localInput(for: hls.url("other.m3u8")) == nil)
        let log = try hls.control("log")
        #expect(!log.contains("/v0/seg") && !log.contains("/v2/seg"), "\(log)")
    }

    @Test func fragmentedMP4SegmentsKeepTheirInitialisationSection() async throws {
        let dir = try Scratch()
        _ = try Proc.ffmpeg(["-i", try Fixtures.path("counter.mp4"), "-c", "copy", "-f", "hls", "-hls_time", "1",
                             "-hls_segment_type", "fmp4", "-hls_playlist_type", "vod", dir.path("index.m3u8")])
        #expect(try String(contentsOfFile: dir.path("index.m3u8"), encoding: .utf8).contains("#EXT-X-MAP:"))
        let server = try HTTPFileServer.hls(directory: dir.url.path)
        let h = try OfflineHarness()
        let added = try await h.manager.add(DownloadRequest(source: server.url("index.m3u8")))
        #expect(added.record.kind == .hls && added.record.bitrate == nil)
        _ = try await h.wait(added.record.id, for: .completed)
        let local = try #require(h.manager.localInput(for: server.url("index.m3u8"))).get().source
        #expect(try String(contentsOfFile: local, encoding: .utf8).contains("#EXT-X-MAP:URI=\"init.mp4\""))
        #expect(try OfflineHarness.md5s(local) == OfflineHarness.md5s(dir.path("index.m3u8")))
    }

    @Test func aPlainFileIsKeptWhole() async throws {
        let dir = try Scratch()
        try FileManager.default.copyItem(atPath: try Fixtures.path("counter.mp4"), toPath: dir.path("counter.mp4"))
        let server = try HTTPFileServer.hls(directory: dir.url.path)
        let h = try OfflineHarness()
        let added = try await h.manager.add(DownloadRequest(source: server.url("counter.mp4")))
        let size = try #require(try FileManager.default.attributesOfItem(atPath: dir.path("counter.mp4"))[.size] as? Int)
        #expect(added.record.kind == .file && added.record.estimate == Int64(size))
        _ = try await h.wait(added.record.id, for: .completed)
        let local = try #require(h.manager.localInput(for: server.url("counter.mp4"))).get().source
        #expect(FileManager.default.contentsEqual(atPath: local, andPath: dir.path("counter.mp4")))
    }

    @Test func refusedWhenTheDiskWouldKeepLessThanTheCushion() async throws {
        let hls = try HTTPFileServer.hls(directory: try Fixtures.path("hls2"))
        let h = try OfflineHarness { $0.minFreeBytes = 1 << 50 }
        var refusal: OfflineError?
        do { _ = try await h.manager.add(DownloadRequest(source: hls.url("master.m3u8"))) } catch { refusal = error }
        #expect(refusal?.description.contains("offline.minFreeBytes") == true, "\(String(describing: refusal))")
        if case .insufficientSpace(let needed, _, let cushion) = refusal {
            #expect(needed > 0 && cushion == 1 << 50)
        } else {
            Issue.record("not refused for space: \(String(describing: refusal))")
        }
        #expect(try h.manager.statuses().isEmpty)
    }

    @Test func transfersCutShortAreResumedByRange() async throws {
        let hls = try HTTPFileServer.hls(directory: try Fixtures.path("hls2"))
        // Segment 1 announces 1000 bytes more than it sends, segment 3 stops after 5000 bytes:
        // both are continued from the bytes on disk.
        try hls.control("lie?prefix=/v1/seg1.ts&delta=1000")
        try hls.control("cut?prefix=/v1/seg3.ts&at=5000")
        let h = try OfflineHarness()
        let added = try await h.manager.add(DownloadRequest(source: hls.url("master.m3u8")))
        _ = try await h.wait(added.record.id, for: .completed)
        let local = try #require(h.manager.localInput(for: hls.url("master.m3u8"))).get().source
        #expect(try OfflineHarness.md5s(local) == OfflineHarness.md5s(try Fixtures.path("hls2/v1/index.m3u8")))
        let log = try hls.control("log").split(separator: "\n")
        #expect(log.filter { $0 == "/v1/seg3.ts" }.count == 2 && log.filter { $0 == "/v1/seg1.ts" }.count == 2, "\(log)")
    }

    @Test func aServerThatSendsMoreThanItAnnouncesFailsTheCheckAndResumes() async throws {
        let hls = try HTTPFileServer.hls(directory: try Fixtures.path("hls2"))
        // Segment 2 announces 1000 bytes fewer than it has: the segment kept is short.
        try hls.control("lie?prefix=/v1/seg2.ts&delta=-1000")
        let h = try OfflineHarness()
        let id = try await h.manager.add(DownloadRequest(source: hls.url("master.m3u8"))).record.id
        let failed = try await h.wait(id, for: .failed)
        #expect(failed.record.reason?.contains("188-byte") == true, "\(failed.record.reason ?? "")")
        #expect(h.states(id).last == .failed)
        // Resumed, the short segment is fetched again and the asset is the source's.
        _ = try h.manager.resume(id)
        _ = try await h.wait(id, for: .completed)
        let local = try #require(h.manager.localInput(for: hls.url("master.m3u8"))).get().source
        #expect(try OfflineHarness.md5s(local) == OfflineHarness.md5s(try Fixtures.path("hls2/v1/index.m3u8")))
    }

    @Test func pausedResumedAndDeleted() async throws {
        let hls = try HTTPFileServer.hls(directory: try Fixtures.path("hls2"))
        try hls.control("throttle?prefix=/v1/&rate=40000")
        let h = try OfflineHarness()
        let id = try await h.started(hls.url("master.m3u8"))
        // Some bytes first (a loaded machine may take longer than usual to start the download).
        let deadline = Date().addingTimeInterval(30)
        while try h.manager.status(id).bytes == 0, Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
        let paused = try h.manager.pause(id)
        #expect(paused.record.state == .paused)
        // The transfer in flight stops once its task sees the cancellation, which a loaded
        // machine may take a while to get to: wait until the size holds for half a second (a
        // download that went on would never hold, and fail here), then check that it stays.
        var held = try h.manager.status(id).bytes
        let settle = Date().addingTimeInterval(15)
        while Date() < settle {
            try await Task.sleep(for: .milliseconds(500))
            let now = try h.manager.status(id).bytes
            if now == held { break }
            held = now
        }
        try await Task.sleep(for: .milliseconds(700))
        #expect(try h.manager.status(id).bytes == held && held > 0)
        #expect(throws: OfflineError.self) { try h.manager.pause(id) }
        try hls.control("throttle?prefix=/v1/&rate=0")
        _ = try h.manager.resume(id)
        let done = try await h.wait(id, for: .completed)
        #expect(done.bytes == done.total)
        let progress = h.log.events.withLock { $0.filter { if case .progress(id, _, _, _, _, _) = $0 { true } else { false } } }
        #expect(!progress.isEmpty)
        let dir = h.manager.store.directory(of: id)
        try await h.manager.remove(id)
        #expect(!FileManager.default.fileExists(atPath: dir))
        #expect(try h.manager.statuses().isEmpty)
        #expect(h.states(id) == [.queued, .downloading, .paused, .queued, .downloading, .completed, .cancelled])
    }

    @Test func aDownloadInProgressPlaysTheSegmentsThatAreThere() async throws {
        let hls = try HTTPFileServer.hls(directory: try Fixtures.path("hls2"))
        // Segment 2 comes slowly (89 kB at 1 kB/s: over 80 s, so a loaded machine that polls
        // late still finds it in flight): segments 0 and 1 (60 frames) are there meanwhile. Up to
        // 90 s for those two, for a full parallel run on two busy cores.
        try hls.control("throttle?prefix=/v1/seg2.ts&rate=1000")
        let h = try OfflineHarness()
        let id = try await h.started(hls.url("master.m3u8"))
        let deadline = Date().addingTimeInterval(90)
        while try h.manager.status(id).segmentsDone < 2, Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
        let status = try h.manager.status(id)
        #expect(status.segmentsDone == 2 && status.record.state == .downloading && status.bytes < status.total)
        let local = try #require(h.manager.localInput(for: hls.url("master.m3u8"))).get().source
        let source = try OfflineHarness.md5s(try Fixtures.path("hls2/v1/index.m3u8"))
        #expect(try OfflineHarness.md5s(local) == Array(source.prefix(60)))
        try await h.manager.remove(id)
    }

    @Test func atMostTheConfiguredNumberRunAtOnce() async throws {
        let hls = try HTTPFileServer.hls(directory: try Fixtures.path("hls2"))
        try hls.control("throttle?prefix=/v1/&rate=100000")
        let h = try OfflineHarness { $0.concurrentDownloads = 1 }
        let first = try await h.manager.add(DownloadRequest(source: hls.url("master.m3u8"))).record.id
        let second = try await h.manager.add(DownloadRequest(source: hls.url("v1/index.m3u8"))).record.id
        _ = try await h.wait(first, for: .downloading)
        #expect(try h.manager.status(second).record.state == .queued)
        _ = try await h.wait(first, for: .completed)
        _ = try await h.wait(second, for: .completed)
    }

    @Test func aCorruptDatabaseIsMovedAsideAndCompletedAssetsComeBack() async throws {
        let hls = try HTTPFileServer.hls(directory: try Fixtures.path("hls2"))
        let scratch = try Scratch()
        var id = ""
        do {
            let h = try OfflineHarness(scratch: scratch)
            id = try await h.manager.add(DownloadRequest(source: hls.url("master.m3u8"))).record.id
            _ = try await h.wait(id, for: .completed)
        }
        let db = scratch.path("state/offline.db")
        try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: db))
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: db + suffix) }
        let again = try OfflineHarness(scratch: scratch)
        let list = try again.manager.statuses()
        #expect(list.map(\.record.id) == [id] && list.first?.record.state == .completed)
        let aside = try FileManager.default.contentsOfDirectory(atPath: scratch.path("state")).filter { $0.hasPrefix("offline.db.corrupt-") }
        #expect(aside.count == 1, "\(aside)")
        let local = try #require(again.manager.localInput(for: hls.url("master.m3u8"))).get().source
        #expect(try OfflineHarness.md5s(local) == OfflineHarness.md5s(try Fixtures.path("hls2/v1/index.m3u8")))
    }
}
