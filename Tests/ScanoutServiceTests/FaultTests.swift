import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ScanoutPlayer
@testable import ScanoutService
import ScanoutTestSupport
import Synchronization
import Testing

/// A tmpfs of 64 kB mounted on `path` and filled to the last byte, unmounted when released; nil
/// when this process may not mount (not root, or no CAP_SYS_ADMIN).
final class FullDisk {
    let path: String

    init?(at path: String) {
        self.path = path
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        guard getuid() == 0, (try? Proc.run("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", path]))?.status == 0 else { return nil }
    }

    /// Fills what is left of the disk (keeps `position.json` as it is).
    func fill() {
        let filler = path + "/filler"
        let fd = open(filler, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        guard fd >= 0 else { return }
        let block = [UInt8](repeating: 0xAB, count: 4096)
        while write(fd, block, block.count) > 0 {}
        var one: UInt8 = 1
        while write(fd, &one, 1) > 0 {}
        close(fd)
    }

    deinit { _ = try? Proc.run("umount", ["-l", path]) }
}

/// Three copies of counter.mp4 (a, b, c: 3.2 s each) in `scratch`.
func threeItems(in scratch: Scratch) throws -> [String] {
    try ["a.mp4", "b.mp4", "c.mp4"].map { name in
        let p = scratch.path(name)
        try FileManager.default.copyItem(atPath: try Fixtures.path("counter.mp4"), toPath: p)
        return p
    }
}

/// Waits (up to `seconds`) for `done`.
func waitUntil(_ seconds: Double, _ done: () throws -> Bool) rethrows -> Bool {
    let end = Date().addingTimeInterval(seconds)
    while Date() < end {
        if try done() { return true }
        usleep(50_000)
    }
    return try done()
}

/// The failures a store reported.
final class SeenFailures: Sendable {
    let errors = Mutex<[ResumeStateError]>([])
    var all: [ResumeStateError] { errors.withLock { $0 } }
    func add(_ e: ResumeStateError) { errors.withLock { $0.append(e) } }
}

@Suite struct ResumeStoreTests {
    func store(_ dir: String, failures: SeenFailures = SeenFailures()) -> ResumeStore {
        ResumeStore(directory: dir) { e in failures.add(e) }
    }

    @Test func aRecordedPointIsReadBackByTheNextStart() throws {
        let scratch = try Scratch()
        let playlist = ["/m/a.mp4", "/m/b.mp4", "/m/c.mp4"].map { PlaylistItem(source: $0) }
        let point = ResumePoint(index: 1, source: "/m/b.mp4", playlist: ResumePoint.identity(of: playlist))
        let first = store(scratch.path(""))
        first.record(point)
        first.flush()
        let read = try #require(try store(scratch.path("")).read())
        #expect(read == point)
        #expect(read.start(in: playlist) == (1, nil))
        // Written whole through a temporary file, which is gone.
        #expect(!FileManager.default.fileExists(atPath: first.file + ".tmp"))
    }

    @Test func anotherPlaylistStartsAtItemZeroWithTheReason() throws {
        let saved = [PlaylistItem(source: "/m/a.mp4"), PlaylistItem(source: "/m/b.mp4")]
        let point = ResumePoint(index: 1, source: "/m/b.mp4", playlist: ResumePoint.identity(of: saved))
        let (start, reason) = point.start(in: [PlaylistItem(source: "/m/a.mp4"), PlaylistItem(source: "/m/x.mp4")])
        #expect(start == 0)
        #expect(reason?.hasPrefix("the playlist changed since the position was saved") == true, "\(reason ?? "")")
        // Same sources, other settings: the same playlist.
        #expect(point.start(in: [PlaylistItem(source: "/m/a.mp4", rotation: 90), PlaylistItem(source: "/m/b.mp4")]) == (1, nil))
    }

    @Test func aCorruptStateFileIsAnErrorToIgnoreNotACrash() throws {
        let scratch = try Scratch()
        let s = store(scratch.path(""))
        try Data("{\"index\": \"two\"".utf8).write(to: URL(fileURLWithPath: s.file))
        #expect(throws: ResumeStateError.self) { try s.read() }
        #expect(try store(try Scratch().path("")).read() == nil)   // no file yet: nothing to resume
    }

    @Test func aFullDiskIsAReportedFailureAndTheOldPositionStays() throws {
        let scratch = try Scratch()
        let failures = SeenFailures()
        let old = ResumePoint(index: 0, source: "/m/a.mp4", playlist: "1")
        let new = ResumePoint(index: 1, source: "/m/b.mp4", playlist: "1")
        let s: ResumeStore
        var disk: FullDisk?
        if let d = FullDisk(at: scratch.path("state")) {
            disk = d
            s = store(d.path, failures: failures)
            s.record(old)
            s.flush()
            d.fill()
        } else {
            // Not allowed to mount: the write fails as it does on a full disk.
            try FileManager.default.createDirectory(atPath: scratch.path("state"), withIntermediateDirectories: true)
            try ResumeStore.atomicWrite(scratch.path("state/position.json"), Data("{\"index\":0,\"source\":\"/m/a.mp4\",\"playlist\":\"1\"}".utf8))
            s = ResumeStore(directory: scratch.path("state"), onFailure: { e in failures.add(e) },
                            writeFile: { (path: String, _: Data) throws(ResumeStateError) -> Void in
                                throw ResumeStateError.unwritable(file: path + ".tmp", step: "write", errno: ENOSPC)
                            })
        }
        s.record(new)
        s.flush()
        let seen = failures.all
        #expect(seen.count == 1, "\(seen)")
        #expect(seen.first?.description.contains("No space left on device") == true, "\(seen)")
        #expect(s.failedWrites == 1)
        #expect(try s.read() == old)
        #expect(!FileManager.default.fileExists(atPath: s.file + ".tmp"))
        withExtendedLifetime(disk) {}
    }
}

/// `scanout serve` children: killed outright and started again, sources that vanish or change
/// under it, a state directory on a full disk.
@Suite(.serialized) struct ServeFaultTests {
    static func environment(_ extra: [String: String]) -> [String: String] {
        ProcessInfo.processInfo.environment.merging(extra) { _, new in new }
    }

    func item(_ server: ServeProcess) throws -> Int? { try server.request("GET", "/state").json?["item"] as? Int }

    /// The position file's item index, nil when there is none (yet).
    func savedIndex(_ dir: String) -> Int? {
        guard let d = FileManager.default.contents(atPath: dir + "/position.json"),
              let o = (try? JSONSerialization.jsonObject(with: d)) as? [String: Any] else { return nil }
        return o["index"] as? Int
    }

    @Test func killedOnTheSecondItemItStartsAgainOnTheSecondItem() async throws { try await offPool { [self] in try self.killedOnTheSecondItemItStartsAgainOnTheSecondItemBlocking() } }
    func killedOnTheSecondItemItStartsAgainOnTheSecondItemBlocking() throws {
        let scratch = try Scratch()
        let items = try threeItems(in: scratch)
        let state = scratch.path("state")
        let arguments = ["--output", "headless", "--repeat", "all", "--state-dir", state] + items
        let listener = try NotifyListener(path: scratch.path("notify"))
        let first = try ServeProcess(arguments: arguments, environment: Self.environment(["NOTIFY_SOCKET": listener.path]))
        _ = listener.wait(for: "READY=1", timeout: 10)
        #expect(first.stderr.contains("resume: no saved position in \(state); starting at item 0"), "\(first.stderr)")
        #expect(try waitUntil(15) { try item(first) == 1 && savedIndex(state) == 1 })
        kill(first.pid, SIGKILL)
        #expect(waitUntil(5) { !first.isRunning })

        let again = try ServeProcess(arguments: arguments, environment: Self.environment(["NOTIFY_SOCKET": listener.path]))
        #expect(count("READY=1", in: listener.wait(for: "READY=1", timeout: 10)) == 1)
        #expect(try item(again) == 1)
        #expect(try server(again, says: "resumed at item 1 (\(items[1]))"))
        #expect(try again.request("GET", "/state").json?["state"] as? String == "playing")
        #expect(again.terminate() == 0)
    }

    func server(_ s: ServeProcess, says line: String) throws -> Bool { s.stderr.contains(line) }

    /// A service looping three copies of counter.mp4, once it plays the second.
    func loopOnItemOne(in scratch: Scratch) throws -> (ServeProcess, [String]) {
        let items = try threeItems(in: scratch)
        let server = try ServeProcess(arguments: ["--output", "headless", "--repeat", "all"] + items)
        guard try waitUntil(15, { try item(server) == 1 }) else { throw SupportError("item 1 never played: \(server.stderr)") }
        return (server, items)
    }

    @Test func anotherPlaylistOrACorruptStateFileStartsAtItemZeroAndSaysWhy() async throws { try await offPool { [self] in try self.anotherPlaylistOrACorruptStateFileStartsAtItemZeroAndSaysWhyBlocking() } }
    func anotherPlaylistOrACorruptStateFileStartsAtItemZeroAndSaysWhyBlocking() throws {
        let scratch = try Scratch()
        let items = try threeItems(in: scratch)
        let state = scratch.path("state")
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        let saved = ResumePoint(index: 2, source: items[2], playlist: ResumePoint.identity(of: items.map { PlaylistItem(source: $0) }))
        try ResumeStore.atomicWrite(state + "/position.json", try saved.fileData)

        let changed = try ServeProcess(arguments: ["--output", "headless", "--paused", "--state-dir", state, items[2], items[1]])
        #expect(try item(changed) == 0)
        #expect(changed.stderr.contains("resume: starting at item 0: the playlist changed since the position was saved"), "\(changed.stderr)")
        #expect(changed.terminate() == 0)

        try Data("not json".utf8).write(to: URL(fileURLWithPath: state + "/position.json"))
        let corrupt = try ServeProcess(arguments: ["--output", "headless", "--paused", "--state-dir", state] + items)
        #expect(try item(corrupt) == 0)
        #expect(corrupt.stderr.contains("resume: the state file is corrupt (not a JSON object); ignored, starting at item 0"), "\(corrupt.stderr)")
        #expect(corrupt.terminate() == 0)
    }

    @Test func aFullStateDiskIsAWarningAndPlaybackGoesOn() async throws { try await offPool { [self] in try self.aFullStateDiskIsAWarningAndPlaybackGoesOnBlocking() } }
    func aFullStateDiskIsAWarningAndPlaybackGoesOnBlocking() throws {
        let scratch = try Scratch()
        let items = try threeItems(in: scratch)
        guard let disk = FullDisk(at: scratch.path("state")) else {
            // Without a mount, ResumeStoreTests covers the failing write itself.
            return
        }
        disk.fill()
        let server = try ServeProcess(arguments: ["--output", "headless", "--repeat", "all", "--state-dir", disk.path] + items)
        #expect(try waitUntil(15) { try item(server) == 1 })
        #expect(waitUntil(5) { server.stderr.contains("state: the playlist position was not saved") })
        #expect(server.stderr.contains("(the disk is full: free space in the state directory)"), "\(server.stderr)")
        #expect(try waitUntil(10) { try item(server) == 2 })
        #expect(server.isRunning)
        #expect(try server.request("GET", "/health").status == 200)
        #expect(server.terminate() == 0)
    }

    @Test func aSourceDeletedWhilePlayingEndsItsTurnAndIsSkippedNextTimeRound() async throws { try await offPool { [self] in try self.aSourceDeletedWhilePlayingEndsItsTurnAndIsSkippedNextTimeRoundBlocking() } }
    func aSourceDeletedWhilePlayingEndsItsTurnAndIsSkippedNextTimeRoundBlocking() throws {
        let scratch = try Scratch()
        let (server, items) = try loopOnItemOne(in: scratch)
        try FileManager.default.removeItem(atPath: items[1])
        // The open item keeps its descriptor and plays to its end; next time round it is skipped.
        #expect(try waitUntil(20) { (try server.request("GET", "/stats").json?["itemsFailed"] as? Int) == 1 })
        let state = try #require(try server.request("GET", "/state").json)
        let last = try #require(state["lastError"] as? [String: Any], "\(state)")
        #expect(last["item"] as? Int == 1)
        #expect(last["source"] as? String == items[1])
        #expect(last["skipped"] as? Bool == true)
        #expect(last["message"] as? String == MediaError.notFound(input: items[1]).description)
        #expect(state["state"] as? String == "playing")
        #expect(try waitUntil(5) { try item(server) == 2 })
        #expect(server.stderr.contains(items[1]))
        #expect(server.isRunning)
    }

    @Test func aSourceTruncatedWhilePlayingIsReportedAndThePlaylistGoesOn() async throws { try await offPool { [self] in try self.aSourceTruncatedWhilePlayingIsReportedAndThePlaylistGoesOnBlocking() } }
    func aSourceTruncatedWhilePlayingIsReportedAndThePlaylistGoesOnBlocking() throws {
        let scratch = try Scratch()
        let (server, items) = try loopOnItemOne(in: scratch)
        #expect(truncate(items[1], 30_000) == 0)
        #expect(try waitUntil(10) { try item(server) == 2 })
        let state = try #require(try server.request("GET", "/state").json)
        let last = try #require(state["lastError"] as? [String: Any], "\(state)")
        #expect(last["item"] as? Int == 1)
        #expect((last["message"] as? String)?.contains(items[1]) == true, "\(last)")
        #expect(state["state"] as? String == "playing")
        #expect(server.isRunning)
    }

    @Test func aSourceReplacedWhilePlayingPlaysItsNewContentNextTimeRound() async throws { try await offPool { [self] in try self.aSourceReplacedWhilePlayingPlaysItsNewContentNextTimeRoundBlocking() } }
    func aSourceReplacedWhilePlayingPlaysItsNewContentNextTimeRoundBlocking() throws {
        let scratch = try Scratch()
        let (server, items) = try loopOnItemOne(in: scratch)
        // As a content sync does: the new file renamed over the old (bt709.mp4: 30 frames, 1 s).
        try FileManager.default.copyItem(atPath: try Fixtures.path("bt709.mp4"), toPath: items[1] + ".new")
        #expect(rename(items[1] + ".new", items[1]) == 0)
        #expect(try waitUntil(10) { try item(server) == 2 })
        #expect(try waitUntil(15) { try item(server) == 1 })
        let state = try #require(try server.request("GET", "/state").json)
        #expect((state["duration"] as? Double).map { abs($0 - 1.0) < 0.05 } == true, "\(state)")
        #expect(state["lastError"] is NSNull, "\(state)")
        #expect((try server.request("GET", "/stats").json?["itemsFailed"] as? Int) == 0)
    }
}
