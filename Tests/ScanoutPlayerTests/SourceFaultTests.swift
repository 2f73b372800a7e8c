import Foundation
import ScanoutDisplay
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ScanoutPlayer
import ScanoutTestSupport
import ScanoutTesting
import Testing

/// HTTP sources that stall or reset mid-body (`tools/http-serve.py`'s faults, on loopback): the
/// player reconnects at the byte where the body stopped and shows every frame once, in order, or
/// gives the item up after the source timeout with the reason, and plays the next one.
@Suite(.serialized) struct HTTPSourceFaultTests {
    /// Byte of faststart.mp4 (counter.mp4 with its index first, 111 kB) that about half of the
    /// frames are read past: the fault comes mid-playback, after the item was opened.
    static let faultAt = "60000"

    /// Plays `playlist` to its end in real time (timeout `timeout` s for each source) and returns
    /// the frame numbers shown and the events.
    func play(_ playlist: [String], timeout: Double = 2) throws -> (codes: [Int], events: [PlayerEvent], engine: PlayerEngine) {
        let display = CodeRecordingDisplay(clock: ManualClock())
        var events: [PlayerEvent] = []
        var config = PlayerConfiguration()
        config.demuxer = DemuxerOptions(timeoutSeconds: timeout)
        // The demuxer's own reconnects with every read on the loop; a read-ahead would absorb
        // the stall (ReadAheadPlaybackTests).
        config.demuxer.readAhead.enabled = false
        config.stallThreshold = .milliseconds(500)
        let engine = PlayerEngine(display: display, clock: MonotonicClock(), configuration: config) { events.append($0) }
        try engine.load(playlist.map { PlaylistItem(source: $0) })
        try engine.play()
        while engine.isRunning { engine.tick() }
        return (display.shown.map(\.code), events, engine)
    }

    /// Whether `codes` is every frame number of one pass (0...95) once, in order, with room for
    /// the frames the pacing dropped (`dropped`; a busy machine drops a few, faults or not).
    func everyFrameOnce<C: Collection>(_ codes: C, dropped: Int) -> Bool where C.Element == Int {
        codes.first == 0 && codes.max() == 95 && zip(codes, codes.dropFirst()).allSatisfy { $0 < $1 } && codes.count + dropped == 96
    }

    func errors(_ events: [PlayerEvent]) -> [(message: String, item: Int?, skipped: Bool)] {
        events.compactMap { if case let .error(m, i, s) = $0 { return (m, i, s) } else { return nil } }
    }

    @Test func aStallLongerThanTheReadTimeoutIsBufferingThenEveryFrameOnce() async throws { try await offPool { [self] in try self.aStallLongerThanTheReadTimeoutIsBufferingThenEveryFrameOnceBlocking() } }
    func aStallLongerThanTheReadTimeoutIsBufferingThenEveryFrameOnceBlocking() throws {
        // Timeout 2 s: a read that gets nothing for 1 s reconnects; the server stalls 5 s once
        // (from the moment it has sent the bytes before the fault, which the client reads at
        // playback speed).
        let server = try HTTPFileServer(directory: Fixtures.directory.path,
                                        faults: ["--stall-at", Self.faultAt, "--stall-for", "5", "--times", "1"])
        let (codes, events, engine) = try play([server.url("faststart.mp4")])
        #expect(engine.state == .ended)
        #expect(everyFrameOnce(codes, dropped: engine.snapshot().framesDropped), "\(codes)")
        #expect(errors(events).isEmpty, "\(errors(events))")
        let buffering = events.compactMap { if case .buffering(let on, _) = $0 { return on } else { return nil } }
        #expect(buffering == [true, false])
        let warnings = events.compactMap { if case .warning(let m) = $0 { return m } else { return nil } }
        #expect(warnings.contains { $0.contains("item 0 (\(server.url("faststart.mp4"))): the source stalled for") }, "\(warnings)")
    }

    @Test func aResetOnceIsReconnectedWithNoFrameLostOrRepeated() async throws { try await offPool { [self] in try self.aResetOnceIsReconnectedWithNoFrameLostOrRepeatedBlocking() } }
    func aResetOnceIsReconnectedWithNoFrameLostOrRepeatedBlocking() throws {
        let server = try HTTPFileServer(directory: Fixtures.directory.path, faults: ["--reset-at", Self.faultAt, "--times", "1"])
        let (codes, events, engine) = try play([server.url("faststart.mp4")])
        #expect(engine.state == .ended)
        #expect(everyFrameOnce(codes, dropped: engine.snapshot().framesDropped), "\(codes)")
        #expect(errors(events).isEmpty, "\(errors(events))")
    }

    @Test func aSourceThatKeepsResettingIsGivenUpWithTheReasonAndTheNextItemPlays() async throws { try await offPool { [self] in try self.aSourceThatKeepsResettingIsGivenUpWithTheReasonAndTheNextItemPlaysBlocking() } }
    func aSourceThatKeepsResettingIsGivenUpWithTheReasonAndTheNextItemPlaysBlocking() throws {
        let server = try HTTPFileServer(directory: Fixtures.directory.path, faults: ["--reset-at", Self.faultAt])
        let url = server.url("faststart.mp4")
        let (codes, events, engine) = try play([url, try Fixtures.path("counter.mp4")])
        #expect(engine.state == .ended)
        let failed = errors(events)
        #expect(failed.count == 1, "\(failed)")
        #expect(failed.first?.item == 0 && failed.first?.skipped == true)
        #expect(failed.first?.message.contains(url) == true, "\(failed)")
        // What came from the first item is in order, then the whole second item.
        let cut = try #require(codes.indices.dropFirst().first { codes[$0] == 0 }, "\(codes)")
        #expect(codes[..<cut].first == 0 && zip(codes[..<cut], codes[1..<cut]).allSatisfy { $0 < $1 }, "\(codes)")
        #expect(cut > 0 && cut < 96)
        #expect(everyFrameOnce(codes[cut...], dropped: engine.snapshot().framesDropped - (codes[cut - 1] + 1 - cut)), "\(codes)")
        #expect(engine.itemsFailed == 1)
    }

    @Test func aStallThatOutlastsTheTimeoutIsGivenUpAsTimedOutAndTheNextItemPlays() async throws { try await offPool { [self] in try self.aStallThatOutlastsTheTimeoutIsGivenUpAsTimedOutAndTheNextItemPlaysBlocking() } }
    func aStallThatOutlastsTheTimeoutIsGivenUpAsTimedOutAndTheNextItemPlaysBlocking() throws {
        let server = try HTTPFileServer(directory: Fixtures.directory.path,
                                        faults: ["--stall-at", Self.faultAt, "--stall-for", "30"])
        let url = server.url("faststart.mp4")
        let started = Date()
        let (codes, events, engine) = try play([url, try Fixtures.path("counter.mp4")])
        #expect(engine.state == .ended)
        let failed = errors(events)
        #expect(failed.count == 1, "\(failed)")
        #expect(failed.first?.message == MediaError.timedOut(input: url, seconds: 2, during: "reading").description, "\(failed)")
        #expect(failed.first?.skipped == true)
        let cut = try #require(codes.lastIndex(of: 0), "\(codes)")
        #expect(cut > 0)
        #expect(everyFrameOnce(codes[cut...], dropped: engine.snapshot().framesDropped - (codes[cut - 1] + 1 - cut)), "\(codes)")
        #expect(Date().timeIntervalSince(started) < 20)
    }
}
