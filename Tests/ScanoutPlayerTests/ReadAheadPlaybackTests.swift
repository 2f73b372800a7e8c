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

/// Network VOD through the read-ahead (`PacketReadAhead`, `BufferingGate`): a stall longer than
/// what is read ahead, and a link slower than the media, on `tools/http-serve.py` (loopback).
/// The clock pauses while the read-ahead is dry, so every frame is shown once, none dropped, and
/// `buffering` is said when the wait starts, not when the data comes back.
@Suite(.serialized) struct ReadAheadPlaybackTests {
    struct Run {
        var codes: [Int]
        var events: [(at: ClockTime, event: PlayerEvent)]
        var engine: PlayerEngine
        var buffering: [(on: Bool, reason: String?, at: ClockTime)] {
            events.compactMap { e in if case let .buffering(on, reason) = e.event { return (on, reason, e.at) } else { return nil } }
        }
        var warnings: [String] { events.compactMap { if case .warning(let m) = $0.event { return m } else { return nil } } }
        var errors: [String] { events.compactMap { if case let .error(m, _, _) = $0.event { return m } else { return nil } } }
    }

    mutating func play(_ url: String, timeout: Double, readAhead: ReadAheadOptions = ReadAheadOptions()) throws -> Run {
        try play([url], timeout: timeout, readAhead: readAhead)
    }

    mutating func play(_ urls: [String], timeout: Double, readAhead: ReadAheadOptions = ReadAheadOptions()) throws -> Run {
        let display = CodeRecordingDisplay(clock: ManualClock())
        var events: [(ClockTime, PlayerEvent)] = []
        var config = PlayerConfiguration()
        config.demuxer = DemuxerOptions(timeoutSeconds: timeout)
        config.demuxer.readAhead = readAhead
        config.stallThreshold = .milliseconds(500)
        let engine = PlayerEngine(display: display, clock: MonotonicClock(), configuration: config) { events.append((ClockTime.now(), $0)) }
        try engine.load(urls.map { PlaylistItem(source: $0) })
        try engine.play()
        var snapshots: [PlayerSnapshot] = []
        while engine.isRunning {
            engine.tick()
            if snapshots.count < 2000 { snapshots.append(engine.snapshot()) }
        }
        lastSnapshots = snapshots
        return Run(codes: display.shown.map(\.code), events: events.map { (at: $0.0, event: $0.1) }, engine: engine)
    }
    private var lastSnapshots: [PlayerSnapshot] = []

    /// faststart.mp4: the counter clip (frames 0...95, 3.2 s) with its index first, 111 kB.
    func everyFrameOnce(_ codes: [Int]) -> Bool { codes == Array(0...95) }

    @Test func aStallLongerThanWhatIsReadAheadPausesTheClockAndLosesNoFrame() async throws {
        try await offPool {
            // The server stops for 4 s at byte 60000 (about half of the clip): the read-ahead has
            // taken what came before at once, the player plays it (1.6 s) and then waits.
            let server = try HTTPFileServer(directory: Fixtures.directory.path,
                                            faults: ["--stall-at", "60000", "--stall-for", "4", "--times", "1"])
            var t = ReadAheadPlaybackTests()
            let run = try t.play(server.url("faststart.mp4"), timeout: 12)
            #expect(run.engine.state == .ended)
            #expect(self.everyFrameOnce(run.codes), "\(run.codes)")
            #expect(run.engine.snapshot().framesDropped == 0)
            #expect(run.errors.isEmpty, "\(run.errors)")
            // On and off in turn (a machine too busy to start the read-ahead's thread at once
            // may wait briefly at the start too), one wait of the stall's length among them: said
            // when it started, well before the server sent again.
            let b = run.buffering
            let described = b.map { ($0.on, $0.reason ?? "", ($0.at - run.events[0].at).secondsValue) }
            #expect(b.map(\.on) == Array(repeating: [true, false], count: max(1, b.count / 2)).flatMap { $0 }, "\(described)")
            let waits = stride(from: 0, to: b.count - 1, by: 2).map { (b[$0], (b[$0 + 1].at - b[$0].at).secondsValue) }
            #expect(waits.contains { $0.1 > 1.0 && $0.0.reason?.contains("ran dry") == true }, "\(described)")
            #expect(run.warnings.contains { $0.contains("the source stalled for") && $0.contains("no frame lost") }, "\(run.warnings)")
            // While it waited, the state said so, with the level.
            let waiting = t.lastSnapshots.filter { $0.state == .buffering }
            #expect(!waiting.isEmpty)
            #expect(waiting.allSatisfy { $0.buffer?.policy == .pause && $0.bufferingReason != nil })
            let last = run.engine.snapshot().buffer
            #expect(last?.waits == waits.count)
            #expect((last?.waitSeconds ?? 0) > 1.0)
        }
    }

    @Test func aLinkSlowerThanTheMediaWaitsAndLosesNoFrame() async throws {
        try await offPool {
            // 111 kB over 3.2 s is about 35 kB/s: at 20 kB/s the read-ahead runs dry again and again.
            let server = try HTTPFileServer(directory: Fixtures.directory.path, faults: ["--rate", "20000"])
            var t = ReadAheadPlaybackTests()
            let run = try t.play(server.url("faststart.mp4"), timeout: 10)
            #expect(run.engine.state == .ended)
            #expect(self.everyFrameOnce(run.codes), "\(run.codes)")
            #expect(run.engine.snapshot().framesDropped == 0)
            #expect(run.errors.isEmpty, "\(run.errors)")
            let on = run.buffering.map(\.on)
            #expect(on.count >= 2 && on.count % 2 == 0, "\(on)")
            #expect(zip(on, on.dropFirst()).allSatisfy { $0 != $1 }, "\(on)")
            #expect((run.engine.snapshot().buffer?.waits ?? 0) >= 1)
        }
    }

    @Test func aSecondNetworkItemFollowsGaplesslyWithNoWait() async throws {
        try await offPool {
            // 60 kB/s, under twice the clips' 35 kB/s: while each item's read-ahead fills for the
            // first time the network paces decoding (a frame 39 ms late at 0.8 s was dropped), and
            // the next item's read-ahead starts empty.
            let server = try HTTPFileServer(directory: Fixtures.directory.path, faults: ["--rate", "60000"])
            var t = ReadAheadPlaybackTests()
            let run = try t.play([server.url("faststart.mp4"), server.url("faststart.mp4")], timeout: 10)
            #expect(run.engine.state == .ended)
            #expect(run.codes == Array(0...95) + Array(0...95), "\(run.codes)")
            #expect(run.engine.snapshot().framesDropped == 0)
            // Each read-ahead's first fill is not waited for.
            #expect(run.buffering.isEmpty, "\(run.buffering.map { ($0.on, $0.reason ?? "") })")
        }
    }

    @Test func withoutTheReadAheadTheSameStallIsAReadThatBlocks() async throws {
        try await offPool {
            let server = try HTTPFileServer(directory: Fixtures.directory.path,
                                            faults: ["--stall-at", "60000", "--stall-for", "4", "--times", "1"])
            var t = ReadAheadPlaybackTests()
            let run = try t.play(server.url("faststart.mp4"), timeout: 12, readAhead: ReadAheadOptions(enabled: false))
            #expect(run.engine.state == .ended)
            #expect(run.engine.snapshot().buffer?.policy == .direct)
            #expect(run.buffering.map(\.on) == [true, false])
            #expect(run.warnings.contains { $0.contains("the source stalled for") }, "\(run.warnings)")
        }
    }

    @Test func aLocalFileIsReadDirectly() throws {
        var t = ReadAheadPlaybackTests()
        let run = try t.play(Fixtures.path("faststart.mp4"), timeout: 5)
        #expect(self.everyFrameOnce(run.codes) || run.engine.snapshot().framesDropped > 0)
        #expect(run.engine.snapshot().buffer?.policy == .direct)
        #expect(run.engine.snapshot().buffer?.level == nil)
        #expect(run.buffering.isEmpty)
    }
}

@Suite struct BufferingGateTests {
    func level(_ seconds: Double, packets: Int, ended: Bool = false, full: Bool = false) -> BufferLevel {
        var l = BufferLevel()
        l.seconds = seconds
        l.packets = packets
        l.ended = ended
        l.full = full
        return l
    }

    @Test func waitsWhenDryAndResumesAtTheThreshold() {
        var g = BufferingGate()
        #expect(g.check(level(2, packets: 60), resumeSeconds: 1, now: ClockTime(nanoseconds: 0)) == .go)
        #expect(g.check(level(0, packets: 0), resumeSeconds: 1, now: ClockTime(nanoseconds: 100)) == .startWait)
        #expect(g.isWaiting)
        // Some packets come, not yet a second of media: still waiting (no resume on the first packet).
        #expect(g.check(level(0.4, packets: 12), resumeSeconds: 1, now: ClockTime(nanoseconds: 200)) == .keepWaiting)
        #expect(g.check(level(1.0, packets: 30), resumeSeconds: 1, now: ClockTime(nanoseconds: 1_100)) == .resume(waited: .nanoseconds(1_000)))
        #expect(!g.isWaiting)
        #expect(g.check(level(0.9, packets: 27), resumeSeconds: 1, now: ClockTime(nanoseconds: 1_200)) == .go)
    }

    @Test func theEndOrAFullReadAheadResumesAtOnce() {
        var g = BufferingGate()
        #expect(g.check(level(0, packets: 0), resumeSeconds: 5, now: ClockTime(nanoseconds: 0)) == .startWait)
        #expect(g.check(level(0.2, packets: 6, ended: true), resumeSeconds: 5, now: ClockTime(nanoseconds: 50)) == .resume(waited: .nanoseconds(50)))
        #expect(g.check(level(0, packets: 0), resumeSeconds: 5, now: ClockTime(nanoseconds: 60)) == .startWait)
        #expect(g.check(level(3, packets: 90, full: true), resumeSeconds: 5, now: ClockTime(nanoseconds: 70)) == .resume(waited: .nanoseconds(10)))
        // An input read to its end never waits: what is left plays out.
        #expect(g.check(level(0, packets: 0, ended: true), resumeSeconds: 5, now: ClockTime(nanoseconds: 80)) == .go)
    }

    @Test func theReasonSaysWhatIsHeldAndHowFastDataComes() {
        var l = level(0, packets: 0)
        l.inputBytesPerSecond = 120_000
        l.mediaBytesPerSecond = 375_000
        #expect(l.waitReason(source: "http://h/v.mp4") == "the read-ahead of http://h/v.mp4 ran dry (0.0 s held; data arrives at 120 kB/s, the media needs 375 kB/s)")
    }
}
