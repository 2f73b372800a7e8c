import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutOffline
import ScanoutPolicy
import ScanoutTestSupport
import Synchronization
import Testing

/// Licences of offline assets, judged by a manual wall clock: a rental plays until it expires,
/// its window starts at the first play, a clock turned back does not revive it, a purchase never
/// expires, a refresh extends.
@Suite struct OfflineLicenceTests {
    /// A wall clock the test sets.
    final class ManualClock: Sendable {
        static let start = 1_767_225_600.0
        let now = Mutex<Double>(start)
        func set(_ t: Double) { now.withLock { $0 = t } }
        func advance(_ s: Double) { now.withLock { $0 += s } }
        var read: @Sendable () -> Double { { self.now.withLock { $0 } } }
    }

    /// A completed asset `id` (the counter clip, kept as a file) with `licence`, its source and
    /// the harness.
    static func asset(_ licence: Licence?, clock: ManualClock, id: String = "film-1") async throws
        -> (h: OfflineHarness, source: String, server: HTTPFileServer) {
        let dir = try Scratch()
        try FileManager.default.copyItem(atPath: try Fixtures.path("counter.mp4"), toPath: dir.path("counter.mp4"))
        let server = try HTTPFileServer.hls(directory: dir.url.path)
        let h = try OfflineHarness(wallClock: clock.read)
        let added = try await h.manager.add(DownloadRequest(source: server.url("counter.mp4"), id: id, licence: licence))
        #expect(added.record.id == id)
        _ = try await h.wait(id, for: .completed)
        return (h, server.url("counter.mp4"), server)
    }

    /// An asset with `licence`, played once at the clock's start (`t0`).
    static func played(_ licence: Licence) async throws
        -> (h: OfflineHarness, source: String, clock: ManualClock, t0: Double, server: HTTPFileServer) {
        let clock = ManualClock()
        let t0 = clock.read()
        let (h, source, server) = try await asset(licence, clock: clock)
        h.manager.played(source: source)
        return (h, source, clock, t0, server)
    }

    static func refusal(_ r: Result<LocalInput, MediaError>?) -> String? {
        guard case .failure(let e)? = r else { return nil }
        return e.description
    }

    @Test func aRentalPlaysUntilItsWindowEnds() async throws {
        let clock = ManualClock()
        let t0 = clock.read()
        let (h, source, _) = try await Self.asset(Licence(kind: .rental, expires: t0 + 86400, playDuration: 100), clock: clock)
        // Kept for a day before it is watched: the window has not started.
        clock.advance(3600)
        #expect(try h.manager.licenceStatus("film-1")?.verdict == .valid(remaining: 100))
        let local = try #require(h.manager.localInput(for: source)).get().source
        #expect(FileManager.default.fileExists(atPath: local))
        h.manager.played(source: source)
        #expect(try h.manager.licenceStatus("film-1")?.firstPlay == t0 + 3600)
        clock.advance(60)
        #expect(try h.manager.licenceStatus("film-1")?.verdict == .valid(remaining: 40))
        // A second play does not move the window.
        h.manager.played(source: source)
        #expect(try h.manager.licenceStatus("film-1")?.firstPlay == t0 + 3600)
        clock.advance(40)
        let reason = try #require(Self.refusal(h.manager.localInput(for: source)))
        #expect(reason.contains("rental licence of asset film-1 expired") && reason.contains("/assets/film-1/refresh"), "\(reason)")
        #expect(try h.manager.licenceStatus("film-1")?.verdict == .expired(at: t0 + 3700))
        // Removed on request.
        try await h.manager.remove("film-1")
        #expect(h.manager.localInput(for: source) == nil)
    }

    @Test func theExpiryCutsThePlayWindow() async throws {
        let (h, source, clock, _, _) = try await Self.played(Licence(kind: .rental, expires: ManualClock.start + 50, playDuration: 100))
        clock.advance(49)
        #expect(try h.manager.licenceStatus("film-1")?.verdict == .valid(remaining: 1))
        clock.advance(1)
        #expect(Self.refusal(h.manager.localInput(for: source)) != nil)
    }

    @Test func aClockTurnedBackDoesNotReviveOrExtendIt() async throws {
        let (h, source, clock, t0, _) = try await Self.played(Licence(kind: .rental, playDuration: 100))
        clock.advance(80)
        #expect(try h.manager.licenceStatus("film-1")?.verdict == .valid(remaining: 20))
        // Back to the first play: time stands at the largest seen.
        clock.set(t0)
        #expect(try h.manager.licenceStatus("film-1")?.verdict == .valid(remaining: 20))
        // The keeper records the clock while nothing is played.
        clock.set(t0 + 120)
        let keeper = h.manager.keepClock(every: .milliseconds(20))
        try await Task.sleep(for: .milliseconds(200))
        keeper.cancel()
        clock.set(t0 + 10)
        let reason = try #require(Self.refusal(h.manager.localInput(for: source)))
        #expect(reason.contains("licence"), "\(reason)")
        #expect(try h.manager.licenceStatus("film-1")?.verdict == .expired(at: t0 + 100))
        // A new manager on the same store (a restart) remembers the mark.
        let again = try OfflineHarness(scratch: h.scratch, wallClock: clock.read)
        #expect(Self.refusal(again.manager.localInput(for: source)) != nil)
    }

    @Test func aPurchaseNeverExpires() async throws {
        let clock = ManualClock()
        let (h, source, _) = try await Self.asset(Licence(kind: .purchase), clock: clock)
        h.manager.played(source: source)
        clock.advance(20 * 365 * 86400)
        #expect(try h.manager.licenceStatus("film-1")?.verdict == .valid(remaining: nil))
        #expect(try h.manager.licenceStatus("film-1")?.firstPlay == nil)
        #expect(try h.manager.localInput(for: source)?.get() != nil)
    }

    @Test func aRefreshExtendsAnExpiredRental() async throws {
        let (h, source, clock, t0, _) = try await Self.played(Licence(kind: .rental, playDuration: 10))
        clock.advance(11)
        #expect(Self.refusal(h.manager.localInput(for: source)) != nil)
        let status = try h.manager.refresh("film-1", licence: Licence(kind: .rental, expires: t0 + 1000, playDuration: 10))
        #expect(status.verdict == .valid(remaining: 10) && status.firstPlay == nil)
        #expect(try h.manager.localInput(for: source)?.get() != nil)
        h.manager.played(source: source)
        #expect(try h.manager.licenceStatus("film-1")?.firstPlay == t0 + 11)
    }

    @Test func anIdInUseIsRefused() async throws {
        let clock = ManualClock()
        let (h, source, _) = try await Self.asset(nil, clock: clock)
        #expect(try h.manager.licenceStatus("film-1") == nil)
        await #expect(throws: OfflineError.idTaken(id: "film-1")) {
            _ = try await h.manager.add(DownloadRequest(source: source, id: "film-1"))
        }
    }
}
