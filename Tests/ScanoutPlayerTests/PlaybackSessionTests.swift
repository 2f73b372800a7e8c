import ScanoutDisplay
import ScanoutKMS
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ScanoutPlayer
import ScanoutTestSupport
import ScanoutTesting
import Testing

/// A display that records when each frame was shown and can take time to show it.
final class RecordingDisplay: Display {
    let clock: ManualClock
    let cost: Duration
    var shown: [(pts: Int64, at: ClockTime)] = []
    init(clock: ManualClock, cost: Duration = .zero) {
        self.clock = clock
        self.cost = cost
    }
    var description: String { "recording" }
    func present(_ frame: VideoFrame, orientation: Orientation) throws {
        shown.append((frame.pts ?? -1, clock.now()))
        clock.advance(by: cost)
    }
}

@Suite struct PlaybackSessionTests {
    @Test func presentsEveryFrameOnItsTargetWhenOnTime() throws {
        let clock = ManualClock()
        let start = clock.now()
        let display = RecordingDisplay(clock: clock)
        let reader = try FrameReader(input: try Fixtures.path("counter.mp4"))
        let stats = try PlaybackSession(reader: reader, display: display, clock: clock).run()
        #expect(stats.framesPresented == 96)
        #expect(stats.framesDropped == 0)
        #expect(display.shown.count == 96)
        // counter.mp4 is 30 fps in a 1/15360 time base: frame i is due i/30 s after the start.
        for (i, s) in display.shown.enumerated() {
            #expect(s.at - start == .nanoseconds(UInt64(Double(i) / 30 * 1e9)), "frame \(i)")
        }
        #expect(stats.pacingPercentile(99) == 0)
    }

    /// Before the first frame of a timeline is aimed, frames are decoded ahead while the sound
    /// waiting for it has none of it yet (`wantsSound`), `maxDecodedAhead` at most; then every
    /// frame is shown at its time, none lost, and no more are read for the sound until the next
    /// start.
    @Test func framesAreReadAheadForTheSoundBeforeATimelineStarts() throws {
        for (asks, decoded) in [(0, 1), (3, 4), (100, 9)] {
            let clock = ManualClock()
            let start = clock.now()
            let display = RecordingDisplay(clock: clock)
            let session = PlaybackSession(reader: try FrameReader(input: try Fixtures.path("counter.mp4")), display: display, clock: clock)
            var calls = 0
            session.wantsSound = {
                calls += 1
                return calls <= asks
            }
            _ = try session.step()
            #expect(session.stats.framesDecoded == decoded, "asked \(asks) times")
            #expect(display.shown.count == 1 && display.shown[0].at == start)
            while try session.step() != .ended {}
            #expect(display.shown.count == 96 && session.stats.framesDropped == 0)
            for (i, s) in display.shown.enumerated() { #expect(s.at - start == .nanoseconds(UInt64(Double(i) / 30 * 1e9)), "frame \(i)") }
            #expect(calls == min(asks, 8) + 1)
        }
    }

    @Test func dropsFramesThatAreMoreThanOneIntervalLate() throws {
        // Showing a frame takes 70 ms at 30 fps (33.3 ms a frame): the display falls behind, and a
        // frame that is already more than one interval late when decoded is dropped.
        let clock = ManualClock()
        let start = clock.now()
        let display = RecordingDisplay(clock: clock, cost: .milliseconds(70))
        let reader = try FrameReader(input: try Fixtures.path("counter.mp4"))
        let stats = try PlaybackSession(reader: reader, display: display, clock: clock).run()

        // The rule, frame by frame: due at i/30 s; dropped when now > due + 1/30 s; else shown at
        // max(now, due), which then costs 70 ms.
        var now = start
        var expected: [Int] = []
        for i in 0..<96 {
            let due = start + .nanoseconds(UInt64(Double(i) / 30 * 1e9))
            if !expected.isEmpty && now > due + .nanoseconds(33_333_333) { continue }
            now = max(now, due) + .nanoseconds(70_000_000)
            expected.append(i)
        }
        #expect(expected.count < 50 && expected.count > 40)
        #expect(stats.framesDecoded == 96)
        #expect(stats.framesPresented == expected.count)
        #expect(stats.framesDropped == 96 - expected.count)
        #expect(display.shown.map(\.pts) == expected.map { Int64($0 * 512) })
        // Shown frames are never early, and never more than one interval plus one display cost late.
        for (s, i) in zip(display.shown, expected) {
            let due = start + .nanoseconds(UInt64(Double(i) / 30 * 1e9))
            #expect(s.at + .nanoseconds(1) >= due && s.at <= due + .nanoseconds(33_333_333) + .nanoseconds(70_000_000))
        }
    }

    @Test func untimedPresentsEverythingWithoutWaiting() throws {
        let clock = ManualClock()
        let start = clock.now()
        let display = RecordingDisplay(clock: clock, cost: .milliseconds(70))
        let reader = try FrameReader(input: try Fixtures.path("counter_open.ts"))
        let stats = try PlaybackSession(reader: reader, display: display, clock: clock, timed: false).run()
        #expect(stats.framesPresented == 96)
        #expect(stats.framesDropped == 0)
        #expect(clock.now() - start == .milliseconds(96 * 70))
    }

    @Test func rateScalesTheSchedule() throws {
        let clock = ManualClock()
        let start = clock.now()
        let display = RecordingDisplay(clock: clock)
        let reader = try FrameReader(input: try Fixtures.path("counter.mp4"))
        _ = try PlaybackSession(reader: reader, display: display, clock: clock, rate: 2).run()
        let last = try #require(display.shown.last)
        // 95/30 s of media at 2x.
        #expect(last.at - start == .nanoseconds(UInt64(95.0 / 30 / 2 * 1e9)))
    }

    @Test func stopsWhenAsked() throws {
        let clock = ManualClock()
        let display = RecordingDisplay(clock: clock)
        let reader = try FrameReader(input: try Fixtures.path("counter.mp4"))
        var calls = 0
        let stats = try PlaybackSession(reader: reader, display: display, clock: clock).run(shouldStop: {
            calls += 1
            return calls > 10
        })
        #expect(stats.framesPresented == 10)
    }

    @Test func headlessDisplayKeepsTheLastPicture() throws {
        let display = HeadlessDisplay()
        let reader = try FrameReader(input: try Fixtures.path("rotated.mp4"))
        let stats = try PlaybackSession(reader: reader, display: display, timed: false).run()
        #expect(stats.framesPresented == 30)
        let image = try #require(try display.snapshot())
        // Rotation metadata applies to what the display shows.
        #expect(image.width == 240 && image.height == 320)
        #expect(display.description == "headless 240x320")
    }

    /// `warmUp` draws the frame (the renderer's picture is it) without presenting it, once per
    /// kind of frame: the same kind again draws nothing (the picture stays), another layout does.
    @Test func headlessWarmUpDrawsOncePerKindAndPresentsNothing() throws {
        let display = HeadlessDisplay()
        let reader = try FrameReader(input: try Fixtures.path("counter.mp4"))
        let a = VideoFrame(), b = VideoFrame()
        #expect(try reader.next(into: a) && reader.next(into: b))
        display.warmUp(for: a, layout: FrameLayout())
        #expect(display.framesPresented == 0)
        let first = try #require(try display.snapshot())
        #expect(frameCode(a) == 0 && first.width == 320 && first.height == 240)
        display.warmUp(for: b, layout: FrameLayout())
        #expect(try display.snapshot() == first, "the same kind: not drawn again")
        display.warmUp(for: b, layout: FrameLayout(orientation: Orientation(rotation: 90)))
        let turned = try #require(try display.snapshot())
        #expect(turned.width == 240 && turned.height == 320)
        #expect(display.framesPresented == 0)
    }
}

@Suite struct OutputSelectorTests {
    @Test func noCardMeansHeadlessWithAReason() throws {
        let scratch = try Scratch()
        let choice = OutputSelector.choose(directory: scratch.url.path)
        #expect(choice.kind == .headless)
        #expect(choice.reason.contains("no KMS device"))
        #expect(OutputSelector.choose(requested: "headless").reason == "headless output requested")
    }

    @Test func missingRenderNodeIsReportedForVAAPI() throws {
        let scratch = try Scratch()
        #expect(VAAPIProbe.devices(directory: scratch.url.path).isEmpty)
        #expect(VAAPIProbe.summary(directory: scratch.url.path).hasPrefix("unavailable: no render node"))
    }
}

@Suite struct DecodeAheadTests {
    @Test func waitsAreUsedToDecodeAheadAndOrderAndTimingStayExact() throws {
        let clock = ManualClock()
        let start = clock.now()
        let display = RecordingDisplay(clock: clock)
        let session = PlaybackSession(reader: try FrameReader(input: try Fixtures.path("counter_open.ts")), display: display, clock: clock)
        for _ in 0..<10 { _ = try session.step() }
        // Eight frames wait decoded behind the one on screen.
        #expect(session.stats.framesPresented == 10)
        #expect(session.stats.framesDecoded == 18)
        while try session.step() != .ended {}
        #expect(display.shown.count == 96)
        #expect(display.shown.map(\.pts) == display.shown.map(\.pts).sorted())
        for (i, s) in display.shown.enumerated() { #expect(s.at - start == .nanoseconds(UInt64(Double(i) / 30 * 1e9)), "frame \(i)") }
    }

    @Test func noDecodeAheadWhenTurnedOff() throws {
        let clock = ManualClock()
        let session = PlaybackSession(reader: try FrameReader(input: try Fixtures.path("counter.mp4")), display: RecordingDisplay(clock: clock), clock: clock)
        session.maxDecodedAhead = 0
        for _ in 0..<10 { _ = try session.step() }
        #expect(session.stats.framesDecoded == 10)
    }
}
