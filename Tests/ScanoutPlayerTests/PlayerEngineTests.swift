import Foundation
import ScanoutDisplay
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ScanoutPlayer
import ScanoutRender
import ScanoutTestSupport
import ScanoutTesting
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The frame number a fixture shows in its top band (bit b = the 32-pixel block b, white = 1),
/// read from the luma plane, 16 rows down.
func frameCode(_ frame: VideoFrame) -> Int {
    var code = 0
    var row = 0
    frame.withPlaneRows(0) { bytes in
        defer { row += 1 }
        guard row == 16 else { return }
        for bit in 0..<10 where bit * 32 + 16 < bytes.count {
            if bytes[bit * 32 + 16] > 128 { code |= 1 << bit }
        }
    }
    return code
}

/// A display that records every frame shown: its timestamp, the frame number drawn in it, and
/// when (on the manual clock).
final class CodeRecordingDisplay: Display {
    let clock: ManualClock
    var shown: [(pts: Int64?, code: Int, at: ClockTime, layout: FrameLayout)] = []
    var failing = false
    var vblankSource: (any VBlankSource)?
    init(clock: ManualClock) { self.clock = clock }
    var description: String { "recording" }
    func present(_ frame: VideoFrame, orientation: Orientation) throws {
        try present(frame, layout: FrameLayout(orientation: orientation))
    }
    func present(_ frame: VideoFrame, layout: FrameLayout) throws {
        if failing { throw SupportError("display unplugged") }
        shown.append((frame.pts, frameCode(frame), clock.now(), layout))
    }
}

/// A vblank every `period` ns, the first at `phase`.
final class FixedVBlank: VBlankSource {
    let refreshInterval: Duration
    let lastVBlank: ClockTime?
    init(period: Duration, phase: ClockTime) { refreshInterval = period; lastVBlank = phase }
}

/// An engine on a manual clock with every event recorded.
final class Harness {
    let clock = ManualClock()
    let display: CodeRecordingDisplay
    var events: [PlayerEvent] = []
    var engine: PlayerEngine!

    init(configuration: PlayerConfiguration = PlayerConfiguration()) {
        display = CodeRecordingDisplay(clock: clock)
        engine = PlayerEngine(display: display, clock: clock, configuration: configuration) { [unowned self] e in events.append(e) }
    }

    /// Ticks until `done` or `limit` ticks.
    func run(limit: Int = 10_000, until done: () -> Bool) {
        var n = 0
        while !done() && n < limit {
            engine.tick()
            n += 1
        }
    }

    /// The events without the periodic position reports.
    var mainEvents: [PlayerEvent] {
        events.filter { if case .position = $0 { return false } else { return true } }
    }

    var states: [PlayerState] {
        events.compactMap { if case .stateChanged(_, let to) = $0 { return to } else { return nil } }
    }
}

let frame30 = 1e9 / 30

/// A playlist of two copies of counter.mp4 in `scratch` (a.mp4, b.mp4) loaded with repeat all,
/// and b.mp4 deleted since: for tests of files that vanish.
func loopOfTwoWithTheSecondGone(in scratch: Scratch) throws -> (Harness, String, String) {
    let a = scratch.path("a.mp4"), b = scratch.path("b.mp4")
    try FileManager.default.copyItem(atPath: try Fixtures.path("counter.mp4"), toPath: a)
    try FileManager.default.copyItem(atPath: try Fixtures.path("counter.mp4"), toPath: b)
    let h = Harness()
    try h.engine.load([PlaylistItem(source: a), PlaylistItem(source: b)])
    h.engine.setRepeat(.all)
    try FileManager.default.removeItem(atPath: b)
    return (h, a, b)
}

@Suite struct PlayerEngineTests {
    @Test func stateSequenceAndEventOrderOfOnePlaythrough() throws {
        let h = Harness()
        let path = try Fixtures.path("counter.mp4")
        try h.engine.load([PlaylistItem(source: path)])
        #expect(h.engine.state == .ready)
        try h.engine.play()
        h.run { h.engine.state == .ended }
        #expect(h.states == [.preparing, .ready, .playing, .ended])
        let duration = try #require(h.engine.duration)
        // The preparation's stages are measured on the real clock; the rest is on the manual one.
        let stages = try #require(h.events.lazy.compactMap { e -> PreparationStages? in
            if case .firstFrame(_, _, _, let s) = e { return s } else { return nil }
        }.first)
        #expect(stages.firstDecode > 0)
        let expected: [PlayerEvent] = [
            .stateChanged(from: .idle, to: .preparing),
            .itemChanged(index: 0, source: path),
            .prepared(item: 0, source: path, width: 320, height: 240, codec: "h264", duration: duration),
            .durationChanged(duration),
            .serviceState(up: true, reasons: []),
            .stateChanged(from: .preparing, to: .ready),
            .stateChanged(from: .ready, to: .playing),
            .play(userInitiated: true),
            .firstFrame(item: 0, source: path, sinceRequest: 0, stages: stages),
            .stateChanged(from: .playing, to: .ended),
            .ended,
        ]
        #expect(h.mainEvents == expected)
        // Position reports once a second of playback: at 1, 2 and 3 s (96 frames = 3.2 s).
        let positions = h.events.compactMap { if case .position(let s, _, _) = $0 { return s } else { return nil } }
        #expect(positions.count == 3)
        #expect(h.display.shown.map(\.code) == Array(0..<96))
    }

    @Test func commandsOutOfStateAreRefusedWithTheState() throws {
        let h = Harness()
        #expect(throws: PlayerError.invalidState(command: "play", state: .idle)) { try h.engine.play() }
        #expect(throws: PlayerError.invalidState(command: "pause", state: .idle)) { try h.engine.pause() }
        #expect(throws: PlayerError.emptyPlaylist) { try h.engine.load([]) }
        #expect(throws: PlayerError.rateOutOfRange(5)) { try h.engine.setRate(5) }
        #expect(throws: PlayerError.rotationInvalid(45)) { try h.engine.load([PlaylistItem(source: "x", rotation: 45)]) }
        #expect(h.events.isEmpty)
        try h.engine.setRate(3)
        #expect(h.events == [.rateChanged(3), .warning("rate 3.0x is above 2x: frames may be dropped on this machine")])
    }

    @Test func loopOfOneClipIsGaplessEveryFrameOfBothPassesShownOnTime() throws {
        let h = Harness()
        try h.engine.load([PlaylistItem(source: try Fixtures.path("counter.mp4"))])
        h.engine.setRepeat(.one)
        let start = h.clock.now()
        try h.engine.play()
        h.run { h.display.shown.count >= 192 }
        let shown = h.display.shown.prefix(192)
        #expect(shown.map(\.code) == Array(0..<96) + Array(0..<96))
        #expect(h.engine.snapshot().framesDropped == 0)
        // Frame k of the two passes is due k/30 s after the start: the loop adds no gap.
        for (k, s) in shown.enumerated() {
            let due = Double(start.nanoseconds) + Double(k) * frame30
            #expect(abs(Double(s.at.nanoseconds) - due) < 2, "frame \(k) at \(s.at), due \(due)")
        }
        #expect(h.mainEvents.contains(.itemChanged(index: 0, source: try Fixtures.path("counter.mp4"))))
        #expect(h.engine.state == .playing)
    }

    /// A pause that falls after an item's last frame and before the loop finds the item's end:
    /// the next item starts when playback resumes, not one frame after that last frame (which
    /// would make it as late as the pause was long, and drop its frames until caught up).
    @Test func pauseBetweenTheLastFrameAndTheEndLosesNoFrameOfTheNextItem() throws {
        let h = Harness()
        try h.engine.load([PlaylistItem(source: try Fixtures.path("counter.mp4"))])
        h.engine.setRepeat(.all)
        try h.engine.play()
        h.run { h.display.shown.count >= 96 }
        try h.engine.pause()
        h.clock.advance(by: .nanoseconds(500_000_000))
        try h.engine.play()
        let resumed = h.clock.now()
        h.run { h.display.shown.count >= 96 + 40 }
        #expect(h.display.shown.map(\.code) == Array(0..<96) + Array(0..<40))
        #expect(h.engine.snapshot().framesDropped == 0)
        // The next item's first frame is shown at the resume, the ones after it on its timeline.
        #expect(h.display.shown[96].at == resumed)
        #expect(abs(Double((h.display.shown[96 + 39].at - resumed).nanosecondCount) - 39 * frame30) < 2)
    }

    @Test func playlistOfTwoClipsPlaysBothWithoutAGapThenEnds() throws {
        let h = Harness()
        let a = try Fixtures.path("counter.mp4"), b = try Fixtures.path("counter_open.ts")
        try h.engine.load([PlaylistItem(source: a), PlaylistItem(source: b)])
        let start = h.clock.now()
        try h.engine.play()
        h.run { h.engine.state == .ended }
        #expect(h.display.shown.map(\.code) == Array(0..<96) + Array(0..<96))
        #expect(h.engine.snapshot().framesDropped == 0)
        // The first frame of the second clip comes one frame interval after the last of the first.
        let first2 = h.display.shown[96].at
        #expect(abs(Double((first2 - start).nanosecondCount) - 96 * frame30) < 2)
        let items = h.events.compactMap { if case .itemChanged(let i, _) = $0 { return i } else { return nil } }
        #expect(items == [0, 1])
        #expect(h.states == [.preparing, .ready, .playing, .ended])
    }

    /// The next item is opened once the current one has settled: `upcomingSettle` after its
    /// first frame, or a quarter of its length when that is shorter (counter.mp4: 3.2 s, so
    /// 0.8 s), not while it starts; and still soon enough for a gapless move. Opens are seen
    /// through `localInput`, which is asked at each.
    @Test func theNextItemIsOpenedOnceTheCurrentOneHasSettled() throws {
        for settle: Duration in [.seconds(1), .milliseconds(500), .zero] {
            let h = Harness()
            let a = try Fixtures.path("counter.mp4"), b = try Fixtures.path("counter_open.ts")
            var opens: [(source: String, at: ClockTime)] = []
            h.engine.localInput = { [unowned h] source in
                opens.append((source, h.clock.now()))
                return nil
            }
            h.engine.upcomingSettle = settle
            try h.engine.load([PlaylistItem(source: a), PlaylistItem(source: b)])
            try h.engine.play()
            h.run { h.engine.state == .ended }
            #expect(h.display.shown.map(\.code) == Array(0..<96) + Array(0..<96))
            // (b is asked for again when it becomes current.)
            #expect(opens.map(\.source).prefix(2) == [a, b])
            let first = try #require(h.display.shown.first?.at)
            let opened = try #require(opens.first { $0.source == b }?.at)
            let expected = Double(min(settle, .milliseconds(800)).nanosecondCount)
            // Checked after each frame shown: within one frame interval after it is due.
            #expect(Double(opened.nanoseconds) >= Double(first.nanoseconds) + expected && Double(opened.nanoseconds) <= Double(first.nanoseconds) + expected + frame30 + 1,
                    "settle \(settle): opened \(Double((opened - first).nanosecondCount) / 1e6) ms after the first frame")
        }
    }

    @Test func exactSeekShowsTheRequestedFrameAndPlaysOnFromIt() throws {
        for fixture in ["counter.mp4", "counter_open.ts", "counter_vfr.mkv"] {
            let h = Harness()
            try h.engine.load([PlaylistItem(source: try Fixtures.path(fixture))])
            let index = try FrameIndex.build(input: try Fixtures.path(fixture))
            let tb = try FrameReader(input: try Fixtures.path(fixture)).video.timeBase.doubleValue
            for n in [50, 7, 71, 0] {
                let seconds = Double(index.timestamps[n] - index.timestamps[0]) * tb
                try h.engine.seek(to: seconds, exact: true)
                #expect(h.display.shown.last?.code == n, "\(fixture): seek to frame \(n)")
                #expect(h.display.shown.last?.pts == index.timestamps[n])
                #expect(h.events.last == .seekCompleted(position: seconds, frame: n), "\(fixture) \(n)")
                #expect(h.engine.state == .ready)
            }
            try h.engine.seek(to: Double(index.timestamps[60] - index.timestamps[0]) * tb, exact: true)
            try h.engine.play()
            let before = h.display.shown.count
            h.run { h.display.shown.count >= before + 3 }
            #expect(h.display.shown.suffix(4).map(\.code) == [60, 61, 62, 63], "\(fixture)")
        }
    }

    @Test func exactSeeksPastAnOpenGOPKeyframeCountNoDecodeErrors() throws {
        // The leading pictures of the keyframe at frame 200 reference the GOP before it; a seek
        // needs none of them, so a clean stream stays clean.
        let path = try Fixtures.path("counter_open_long.ts")
        let h = Harness()
        try h.engine.load([PlaylistItem(source: path)])
        let index = try FrameIndex.build(input: path)
        let tb = try FrameReader(input: path).video.timeBase.doubleValue
        for n in [219, 200, 229] {
            try h.engine.seek(to: Double(index.timestamps[n] - index.timestamps[0]) * tb, exact: true)
            #expect(h.display.shown.last?.code == n)
        }
        #expect(h.engine.snapshot().decodeErrors == 0)
    }

    @Test func inexactSeekLandsOnTheKeyframeBefore() throws {
        let h = Harness()
        try h.engine.load([PlaylistItem(source: try Fixtures.path("counter.mp4"))])  // GOPs of 30
        try h.engine.seek(to: 45.0 / 30, exact: false)
        #expect(h.display.shown.last?.code == 30)
        guard case .seekCompleted(let position, let frame)? = h.events.last else { Issue.record("no seekCompleted"); return }
        #expect(frame == nil)
        #expect(abs(position - 1.0) < 1e-9)
        #expect(throws: PlayerError.self) { try h.engine.seek(to: 99, exact: true) }
    }

    @Test func inexactSeekInMPEGTSLandsOnTheKeyframeBeforeNotAfter() throws {
        // The container bisects on timestamps to any packet; decoding from there showed the next keyframe.
        let path = try Fixtures.path("counter_open_long.ts")
        let h = Harness()
        try h.engine.load([PlaylistItem(source: path)])
        let index = try FrameIndex.cached(input: path)
        let tb = try FrameReader(input: path).video.timeBase.doubleValue
        for n in [150, 199, 215, 60] {
            let target = index.timestamps[n]
            let key = try #require(index.keyframes.last { $0.pts <= target })
            try h.engine.seek(to: Double(target - index.timestamps[0]) * tb, exact: false)
            #expect(h.display.shown.last?.pts == key.pts, "seek to frame \(n)")
        }
        #expect(h.engine.snapshot().decodeErrors == 0)
    }

    @Test func seekWhilePlayingEmitsStartedThenCompletedAndKeepsPlaying() throws {
        let h = Harness()
        try h.engine.load([PlaylistItem(source: try Fixtures.path("counter.mp4"))])
        try h.engine.play()
        h.run { h.display.shown.count >= 10 }
        h.events.removeAll()
        try h.engine.seek(to: 80.0 / 30, exact: true)
        let expected: [PlayerEvent] = [
            .seekStarted(target: 80.0 / 30, exact: true),
            .stateChanged(from: .playing, to: .seeking),
            .stateChanged(from: .seeking, to: .playing),
            .seekCompleted(position: 80.0 / 30, frame: 80),
        ]
        #expect(h.mainEvents == expected)
        h.run { h.engine.state == .ended }
        #expect(h.display.shown.suffix(16).map(\.code) == Array(80..<96))
        #expect(h.engine.snapshot().framesDropped == 0)
    }

    @Test func pauseHoldsThePictureAndResumeDropsNothing() throws {
        let h = Harness()
        try h.engine.load([PlaylistItem(source: try Fixtures.path("counter.mp4"))])
        try h.engine.play()
        h.run { h.display.shown.count >= 10 }
        try h.engine.pause()
        h.engine.tick()
        h.clock.advance(by: .nanoseconds(5_000_000_000))
        h.engine.tick()
        #expect(h.display.shown.count == 10)
        let resumed = h.clock.now()
        try h.engine.play()
        h.run { h.display.shown.count >= 11 }
        // The next frame is due one frame interval after the resume.
        #expect(abs(Double((h.display.shown[10].at - resumed).nanosecondCount) - frame30) < 2)
        h.run { h.engine.state == .ended }
        #expect(h.display.shown.map(\.code) == Array(0..<96))
        #expect(h.states == [.preparing, .ready, .playing, .paused, .playing, .ended])
        #expect(h.mainEvents.contains(.pause(userInitiated: true)))
    }

    @Test func framesLandOnTheVBlankNearestTheirTime() throws {
        let h = Harness()
        // 60 Hz, vblanks 5 ms after the start's phase: every 30 fps frame goes to the vblank
        // 5 ms from its time, presented (the stand-in display draws and commits at once) half a
        // refresh before it.
        let period = Duration.nanoseconds(16_666_667)
        h.display.vblankSource = FixedVBlank(period: period, phase: h.clock.now() + .nanoseconds(5_000_000))
        try h.engine.load([PlaylistItem(source: try Fixtures.path("counter.mp4"))])
        try h.engine.play()
        h.run { h.engine.state == .ended }
        #expect(h.display.shown.count == 96)
        let phase = Int64(1_000_000_000 + 5_000_000), p = period.nanosecondCount
        for s in h.display.shown.dropFirst() {
            let r = ((Int64(s.at.nanoseconds) - phase) % p + p) % p
            #expect(abs(r - p / 2) < 2, "committed at \(s.at), \(r) ns after a vblank")
        }
        let snap = h.engine.snapshot()
        #expect(abs(snap.pacingP50Ms - 5) < 0.01)
    }

    /// On a screen that holds commits, the first frame of a timeline is presented early and its
    /// commit held until the time its present would have started (half a refresh before its
    /// vblank, less the draw's estimate): at the start, and after a seek for its target and the
    /// frame after it (the timeline starts again there); the other frames present at their
    /// time, as before.
    @Test func theFirstFrameOfATimelineHoldsItsCommitUntilItsTime() throws {
        final class HoldingVBlank: VBlankSource {
            let refreshInterval: Duration
            let lastVBlank: ClockTime?
            var holds: [ClockTime] = []
            init(period: Duration, phase: ClockTime) { refreshInterval = period; lastVBlank = phase }
            var holdsCommits: Bool { true }
            func holdNextCommit(until time: ClockTime) { holds.append(time) }
        }
        let h = Harness()
        let period = Duration.nanoseconds(16_666_667)
        let start = h.clock.now()
        let vblanks = HoldingVBlank(period: period, phase: start + .nanoseconds(5_000_000))
        h.display.vblankSource = vblanks
        try h.engine.load([PlaylistItem(source: try Fixtures.path("counter.mp4"))])
        try h.engine.play()
        h.run { h.engine.position >= 1 }
        // The first frame's vblank is 5 ms after the start: its commit, half a refresh before.
        #expect(vblanks.holds == [start + .nanoseconds(5_000_000) - .nanoseconds(period.nanosecondCount / 2)])
        try h.engine.seek(to: 2, exact: true)
        h.run { h.engine.state == .ended }
        #expect(vblanks.holds.count == 3)
        #expect(h.display.shown.map(\.code).suffix(36) == Array(60..<96))
    }

    @Test func badItemIsSkippedAndReported() throws {
        let h = Harness()
        let good = try Fixtures.path("counter.mp4")
        try h.engine.load([PlaylistItem(source: "/nonexistent/clip.mp4"), PlaylistItem(source: good)])
        #expect(h.engine.state == .ready)
        #expect(h.engine.index == 1)
        let expected: [PlayerEvent] = [
            .stateChanged(from: .idle, to: .preparing),
            .error(message: MediaError.notFound(input: "/nonexistent/clip.mp4").description, item: 0, skipped: true),
        ]
        #expect(Array(h.mainEvents.prefix(2)) == expected)
    }

    @Test func nothingPlayableShowsTheSlateReportsDownAndRecoversWhenTheFileComes() throws {
        let scratch = try Scratch()
        let path = scratch.path("later.mp4")
        var config = PlayerConfiguration()
        config.slate = try Fixtures.path("rotated.mp4")
        config.retryInterval = .seconds(2)
        let h = Harness(configuration: config)
        #expect(throws: PlayerError.media(item: 0, .notFound(input: path))) {
            try h.engine.load([PlaylistItem(source: path)], autoplay: true)
        }
        #expect(h.engine.state == .error)
        #expect(h.engine.reasons == [.noSource])
        // The slate (rotated.mp4's first frame, code 0, turned upright) is on screen.
        #expect(h.display.shown.count == 1)
        #expect(h.display.shown[0].layout.orientation == Orientation(rotation: 90))
        h.engine.tick()
        #expect(h.engine.state == .error)
        try FileManager.default.copyItem(atPath: try Fixtures.path("counter.mp4"), toPath: path)
        h.clock.advance(by: .seconds(2))
        h.engine.tick()
        #expect(h.engine.state == .playing)
        h.run { h.engine.state == .ended }
        #expect(h.display.shown.dropFirst().map(\.code) == Array(0..<96))
        #expect(h.mainEvents.contains(.play(userInitiated: false)))
        #expect(h.mainEvents.contains(.serviceState(up: true, reasons: [])))
    }

    @Test func aFileThatVanishesIsSkippedAtItsTurnAndTheLoopGoesOn() throws {
        let scratch = try Scratch()
        let (h, _, b) = try loopOfTwoWithTheSecondGone(in: scratch)
        try h.engine.play()
        h.run { h.display.shown.count >= 192 }
        #expect(h.display.shown.prefix(192).map(\.code) == Array(0..<96) + Array(0..<96))
        #expect(h.mainEvents.contains(.error(message: MediaError.notFound(input: b).description, item: 1, skipped: true)))
        #expect(h.engine.index == 0)
        #expect(h.engine.state == .playing)
        #expect(h.engine.snapshot().framesDropped == 0)
    }

    @Test func whenEveryItemVanishesAtTheEndOfOneOnlyTheLastFailureIsNotSkipped() throws {
        // The end of an item tries the next ones as a load does: the last failure, after which
        // nothing is tried, is not "skipped"; the slate goes up and the service reports down.
        let scratch = try Scratch()
        let (h, a, b) = try loopOfTwoWithTheSecondGone(in: scratch)
        try h.engine.play()
        try FileManager.default.removeItem(atPath: a)  // the open item keeps its descriptor
        h.run { h.engine.state == .error }
        let errors = h.mainEvents.filter { if case .error = $0 { return true } else { return false } }
        #expect(errors == [
            .error(message: MediaError.notFound(input: b).description, item: 1, skipped: true),
            .error(message: MediaError.notFound(input: a).description, item: 0, skipped: false),
        ])
        #expect(h.display.shown.map(\.code) == Array(0..<96))
        #expect(h.engine.reasons.contains(.noSource))
        #expect(h.engine.snapshot().itemsFailed == 2)
    }

    @Test func itemLayoutCarriesScalingAndRotation() throws {
        let h = Harness()
        let rotated = try Fixtures.path("rotated.mp4")  // stream turned 90°
        try h.engine.load([PlaylistItem(source: rotated, scaling: .fill, rotation: 90), PlaylistItem(source: try Fixtures.path("counter.mp4"))])
        try h.engine.play()
        h.run { h.engine.state == .ended }
        #expect(h.display.shown.first?.layout == FrameLayout(orientation: Orientation(rotation: 180), scaling: .fill))
        #expect(h.display.shown.last?.layout == FrameLayout(orientation: .identity, scaling: .fit))
    }

    @Test func nextAndPreviousMoveThroughThePlaylist() throws {
        let h = Harness()
        let a = try Fixtures.path("counter.mp4"), b = try Fixtures.path("bt709.mp4")
        try h.engine.load([PlaylistItem(source: a), PlaylistItem(source: b)])
        try h.engine.next()
        #expect(h.engine.index == 1)
        #expect(throws: PlayerError.noNextItem) { try h.engine.next() }
        try h.engine.previous()
        #expect(h.engine.index == 0)
        #expect(throws: PlayerError.noPreviousItem) { try h.engine.previous() }
        h.engine.setRepeat(.all)
        try h.engine.previous()
        #expect(h.engine.index == 1)
        try h.engine.play()
        h.run { h.display.shown.count >= 3 }
        try h.engine.next()
        #expect(h.engine.index == 0)
        #expect(h.engine.state == .playing)
        h.run { h.display.shown.count >= 5 }
        #expect(h.display.shown.suffix(2).map(\.code) == [0, 1])
        h.engine.stop()
        #expect(h.engine.state == .stopped)
        #expect(h.mainEvents.last == .stop)
    }

    @Test func displayFailureIsReportedAsNoOutput() throws {
        let h = Harness()
        try h.engine.load([PlaylistItem(source: try Fixtures.path("counter.mp4"))])
        try h.engine.play()
        h.run { h.display.shown.count >= 3 }
        h.display.failing = true
        h.engine.tick()
        #expect(h.engine.state == .error)
        #expect(h.engine.reasons.contains(.noOutput))
        #expect(h.mainEvents.contains(.serviceState(up: false, reasons: [.noOutput])))
    }
}

@Suite struct PlayerEngineLoadTests {
    @Test func aLoadThatFailsLeavesThePlayingItemPlaying() throws {
        let h = Harness()
        let good = try Fixtures.path("counter.mp4")
        try h.engine.load([PlaylistItem(source: good)])
        try h.engine.play()
        h.run { h.display.shown.count >= 5 }
        #expect(throws: PlayerError.media(item: 0, .notFound(input: "/nonexistent/x.mp4"))) {
            try h.engine.load([PlaylistItem(source: "/nonexistent/x.mp4")])
        }
        #expect(h.engine.state == .playing)
        #expect(h.engine.playlist == [PlaylistItem(source: good)])
        h.run { h.engine.state == .ended }
        #expect(h.display.shown.map(\.code) == Array(0..<96))
        #expect(h.engine.snapshot().framesDropped == 0)
    }
}

/// A named pipe fed with a file by a writer that stops for `stall` seconds once `after` bytes are
/// through (a live source that hangs mid-stream). The pipe's small buffer keeps the writer close
/// behind the reader, so the reader meets the pause. Stopped when released.
final class StallingPipe {
    let path: String
    private let writer: BackgroundProcess

    init(file: String, in scratch: Scratch, after: Int, stall: Double) throws {
        path = scratch.path("live.mp4")
        guard mkfifo(path, 0o600) == 0 else { throw SupportError("mkfifo \(path) failed") }
        writer = try BackgroundProcess("python3", ["-c", """
            import sys, time
            d = open(sys.argv[1], 'rb').read(); a = int(sys.argv[2])
            f = open(sys.argv[3], 'wb'); f.write(d[:a]); f.flush(); time.sleep(float(sys.argv[4])); f.write(d[a:]); f.close()
            """, file, String(after), path, String(stall)])
    }
}

@Suite struct PlayerEngineStallTests {
    @Test func aSourceThatHangsIsReportedAsBufferingAndPlaybackGoesOnWithoutDrops() throws {
        // 8 s with the index first (a pipe cannot seek), so that the stall (at 85% of the bytes,
        // ~6.8 s in) comes after libavformat's probing (up to 5 s of data), mid-playback.
        let scratch = try Scratch()
        let file = scratch.path("long.mp4")
        let band = "geq=lum='if(lt(Y,32),if(mod(floor(N/pow(2,floor(X/32))),2),235,16),lum(X,Y))':cb='if(lt(Y,32),128,cb(X,Y))':cr='if(lt(Y,32),128,cr(X,Y))'"
        _ = try Proc.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30,format=yuv420p,\(band),trim=end_frame=240",
                             "-c:v", "libx264", "-threads", "1", "-preset", "veryfast", "-g", "30", "-movflags", "+faststart", "-y", file])
        let size = try #require(try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int)
        let source = try StallingPipe(file: file, in: scratch, after: size * 85 / 100, stall: 4)
        let display = CodeRecordingDisplay(clock: ManualClock())
        var events: [PlayerEvent] = []
        var config = PlayerConfiguration()
        config.stallThreshold = .milliseconds(500)
        let engine = PlayerEngine(display: display, clock: MonotonicClock(), configuration: config) { events.append($0) }
        try engine.load([PlaylistItem(source: source.path)])
        try engine.play()
        while engine.isRunning { engine.tick() }
        #expect(engine.state == .ended)
        let buffering = events.compactMap { if case .buffering(let on, _) = $0 { return on } else { return nil } }
        #expect(buffering == [true, false])
        let states = events.compactMap { if case .stateChanged(_, let to) = $0 { return to } else { return nil } }
        #expect(states == [.preparing, .ready, .playing, .buffering, .playing, .ended])
        // The timeline restarts at the frame that came after the stall: nothing is dropped.
        #expect(display.shown.map(\.code) == Array(0..<240))
        #expect(engine.snapshot().framesDropped == 0)
    }
}

@Suite struct PlayerDecoderFallbackTests {
    /// A hardware decoder (the software stand-in for VA-API) failing mid-stream: the player keeps
    /// playing on software with every frame shown once, in order, and one `decoderFallback` event.
    @Test func aMidStreamFallbackIsAnEventAndNoFrameIsLost() throws {
        var config = PlayerConfiguration()
        config.decoder = DecoderOptions(playerType: .hw, environment: SelectorEnvironment(faults: FaultPlan(standIn: true, decodeFrom: 40)))
        let h = Harness(configuration: config)
        try h.engine.load([PlaylistItem(source: try Fixtures.path("counter.mp4"))])
        try h.engine.play()
        h.run { h.engine.state == .ended }
        h.engine.tick()
        let fallbacks = h.events.compactMap { e -> (String, String, Int)? in
            if case let .decoderFallback(from, to, _, frame) = e { return (from, to, frame) }
            return nil
        }
        #expect(fallbacks.count == 1)
        #expect(fallbacks.first?.0 == "hw" && fallbacks.first?.1 == "sw" && fallbacks.first?.2 == 40)
        #expect(h.display.shown.map(\.code) == Array(0..<96))
    }
}
