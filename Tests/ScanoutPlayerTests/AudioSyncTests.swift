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

/// An audio clock the test moves: the stream time heard is `start + (now − t0) × speed` from
/// `silentUntil` (clock time; nil before it) until `lostAt` (nil from it on).
final class ScriptedAudioClock: MediaClockSource {
    let clock: ManualClock
    let t0: ClockTime
    var start: Double
    var speed = 1.0
    var silentUntil: ClockTime?
    var lostAt: ClockTime?
    init(clock: ManualClock, start: Double) {
        self.clock = clock
        t0 = clock.now()
        self.start = start
    }
    func streamTime(at now: ClockTime, epoch: Int) -> Double? {
        if let lostAt, now >= lostAt { return nil }
        if let silentUntil, now < silentUntil { return nil }
        return start + (now - t0).secondsValue * speed
    }
}

@Suite struct AudioSyncTests {
    /// counter.mp4: 96 frames at 30 fps, time base 1/15360, first frame at pts 0.
    private func session(_ clock: ManualClock, _ display: RecordingDisplay) throws -> PlaybackSession {
        PlaybackSession(reader: try FrameReader(input: try Fixtures.path("counter.mp4")), display: display, clock: clock)
    }

    /// The audio is heard 0.5 s into the stream when the video starts: the frames before are
    /// dropped (after the first, shown at once), and from then on every frame is shown when the
    /// audio position is its own media time, within one frame.
    @Test func framesFollowTheAudioPosition() throws {
        let clock = ManualClock()
        let display = RecordingDisplay(clock: clock)
        let s = try session(clock, display)
        let audio = ScriptedAudioClock(clock: clock, start: 0.5)
        s.masterClock = audio
        let stats = try s.run()
        #expect(stats.framesDropped >= 13 && stats.framesDropped <= 15)
        for (i, shown) in display.shown.enumerated().dropFirst() {
            let media = Double(shown.pts) / 15360
            let heard = audio.streamTime(at: shown.at, epoch: 0)!
            #expect(abs(heard - media) <= 1.0 / 30, "frame \(i) at pts \(shown.pts): audio at \(heard)")
        }
        #expect(display.shown.last.map { $0.pts } == Int64(95 * 512), "the last frame is shown")
    }

    /// A session at `rate` timed by an audio clock heard from 0 at that rate.
    private func session(_ clock: ManualClock, _ display: RecordingDisplay, followingAudioAt rate: Double) throws
        -> (PlaybackSession, ScriptedAudioClock) {
        let s = try session(clock, display)
        s.setRate(rate)
        let audio = ScriptedAudioClock(clock: clock, start: 0)
        audio.speed = rate
        s.masterClock = audio
        return (s, audio)
    }

    /// At 2x, with the audio stretched to play at 2x, frames follow the audio position too.
    @Test func atTwiceTheRateFramesFollowTheAudio() throws {
        let clock = ManualClock()
        let display = RecordingDisplay(clock: clock)
        let (s, audio) = try session(clock, display, followingAudioAt: 2)
        let stats = try s.run()
        #expect(stats.framesDropped == 0)
        for shown in display.shown {
            let heard = audio.streamTime(at: shown.at, epoch: 0)!
            #expect(abs(heard - Double(shown.pts) / 15360) <= 1.0 / 30)
        }
    }

    /// At 1.5x, a display that takes 30 ms a frame cannot keep up (a frame every 22.2 ms):
    /// frames are dropped. Timed by the sound, one that would be seen more than 20 ms after its
    /// sound is dropped, though less than a frame interval (22.2 ms) late: every frame shown is
    /// within 20 ms of its sound, frame by frame as the rule says.
    @Test func aFrameMoreThan20MillisecondsBehindItsSoundIsDropped() throws {
        let clock = ManualClock()
        let start = clock.now()
        // 30 ms and 7 ns: no frame lands on the 20 ms bound itself, where rounding would decide.
        let cost = Duration.nanoseconds(30_000_007)
        let display = RecordingDisplay(clock: clock, cost: cost)
        let (s, audio) = try session(clock, display, followingAudioAt: 1.5)
        let stats = try s.run()

        var now = start
        var expected: [Int] = []
        for i in 0..<96 {
            let due = start + .nanoseconds(UInt64(Double(i) / 30 / 1.5 * 1e9))
            if !expected.isEmpty && now > due + .nanoseconds(20_000_000) { continue }
            now = max(now, due) + cost
            expected.append(i)
        }
        #expect(display.shown.map { Int($0.pts / 512) } == expected)
        #expect(stats.framesDropped == 96 - expected.count && stats.framesDropped > 0)
        for shown in display.shown {
            let behind = (audio.streamTime(at: shown.at, epoch: 0)! - Double(shown.pts) / 15360) / 1.5
            #expect(behind <= 0.020 + 1e-6, "frame at pts \(shown.pts) seen \(behind * 1000) ms after its sound")
        }
    }

    /// A clock that says nothing for the first 90 ms, then answers 80 ms ahead of the session's
    /// own timeline (a device that took its first writes into a buffer it does not report).
    /// Frame 3 (100 ms) was aimed at 67 ms, while the clock said nothing; after its wait the
    /// clock says its sound was heard 80 ms ago: it is dropped, not shown that far behind its
    /// sound. So is frame 4 (47 ms late); frame 5 is 13 ms late, within the 20 ms, and shown.
    /// Every frame shown while the clock answers is seen within 20 ms of its sound.
    @Test func aClockThatStartsDuringTheWaitJudgesTheFrameAgain() throws {
        let clock = ManualClock()
        let start = clock.now()
        let display = RecordingDisplay(clock: clock)
        let s = try session(clock, display)
        let audio = ScriptedAudioClock(clock: clock, start: 0.080)
        audio.silentUntil = start + .nanoseconds(90_000_000)
        s.masterClock = audio
        let stats = try s.run()
        #expect(display.shown.map { Int($0.pts / 512) } == [0, 1, 2] + Array(5..<96))
        #expect(stats.framesDropped == 2)
        for shown in display.shown.dropFirst(3) {
            let behind = audio.streamTime(at: shown.at, epoch: 0)! - Double(shown.pts) / 15360
            #expect(behind <= 0.020 && behind >= -1.0 / 30, "frame at pts \(shown.pts) seen \(behind * 1000) ms after its sound")
        }
    }

    /// Audio of another item (an old epoch) or a clock that stops answering: the session goes on
    /// with its own timeline from the last frame the audio timed, one frame interval apart, no drop.
    @Test func withoutTheAudioClockVideoGoesOnWithItsOwn() throws {
        let clock = ManualClock()
        let display = RecordingDisplay(clock: clock)
        let s = try session(clock, display)
        let audio = ScriptedAudioClock(clock: clock, start: 0)
        audio.lostAt = clock.now() + .nanoseconds(1_000_000_000)
        s.masterClock = audio
        let stats = try s.run()
        #expect(stats.framesPresented == 96)
        #expect(stats.framesDropped == 0)
        let gaps = zip(display.shown.dropFirst(), display.shown).map { ($0.at - $1.at).nanosecondCount }
        #expect(gaps.allSatisfy { abs($0 - 33_333_333) <= 1000 })

        // The audio heard is item 0's, 2 s in (it would drop 60 frames); the session plays item 1.
        final class OtherItem: MediaClockSource {
            let inner: ScriptedAudioClock
            init(_ inner: ScriptedAudioClock) { self.inner = inner }
            func streamTime(at now: ClockTime, epoch: Int) -> Double? { epoch == 0 ? inner.streamTime(at: now, epoch: 0) : nil }
        }
        let other = try session(clock, RecordingDisplay(clock: clock))
        other.masterClock = OtherItem(ScriptedAudioClock(clock: clock, start: 2))
        other.masterEpoch = 1
        #expect(try other.run().framesDropped == 0)
    }

    final class Events { var all: [PlayerEvent] = [] }

    /// An engine on fake sinks (`FakeAudioPlayer`), its events in `events`.
    private func player(_ events: Events, configure: (inout PlayerConfiguration) -> Void = { _ in }) -> FakeAudioPlayer {
        FakeAudioPlayer(configure: configure, display: { RecordingDisplay(clock: $0.sinks.clock) }) { events.all.append($0) }
    }

    /// Plays tracks.mkv to the end on `e`; `midway` runs once the position has passed 1 s.
    private func playToEnd(_ e: PlayerEngine, midway: () -> Void = {}) throws {
        try e.load([PlaylistItem(source: try Fixtures.path("tracks.mkv"))], autoplay: true)
        var turns = 0
        while e.state == .playing, e.position < 1, turns < 10_000 { e.tick(); turns += 1 }
        midway()
        while e.state == .playing, turns < 10_000 { e.tick(); turns += 1 }
    }

    /// The device's opening fails at once (ALSA's, no sound card needed): nothing plays, so this
    /// one needs no fake sink to run in virtual time.
    @Test func aDeviceThatCannotOpenGivesAnEventAndSilentVideo() throws {
        let clock = ManualClock()
        let events = Events()
        var configuration = PlayerConfiguration()
        configuration.audio = AudioSettings(device: "scanout-no-such-device")
        let e = PlayerEngine(display: RecordingDisplay(clock: clock), clock: clock, configuration: configuration) { events.all.append($0) }
        try playToEnd(e)
        #expect(events.all.contains { if case let .audioLost(device, _) = $0 { return device == "scanout-no-such-device" }; return false })
        let snap = e.snapshot()
        #expect(snap.framesPresented == 90 && snap.framesDropped == 0)
    }

    /// How a device is lost mid-play: unplugged one second in (every write fails with `EIO`),
    /// or by the fault plan's `audio-lost@250` (`AudioSettings.failWritesAfter`: 250 writes of a
    /// period or the rest of a chunk, three to an AAC packet of 1024 frames: about 1.7 s in).
    enum Loss: CaseIterable { case unplugged, faultPlan }

    /// The device is reported lost once, with why; the frames go on on the session's own clock,
    /// every one shown.
    @Test(arguments: Loss.allCases) func aDeviceLostMidPlayGivesAnEventAndEveryFrameIsShown(_ loss: Loss) throws {
        let events = Events()
        let p = player(events) { if loss == .faultPlan { $0.audio.failWritesAfter = 250 } }
        let e = p.engine!
        try playToEnd(e) {
            #expect(e.audio.output?.loss == nil && e.audio.output?.counts.framesPlayed ?? 0 > 0, "the device played, one second in")
            if loss == .unplugged { p.sink?.unplug(errno: EIO) }
        }
        let lost = events.all.filter { $0.name == "audioLost" }
        #expect(lost.count == 1)
        if case let .audioLost(device, reason)? = lost.first {
            #expect(device == "hw:fake")
            #expect(reason.contains("Input/output error"))
        }
        #expect(events.all.contains { if case let .warning(m) = $0 { return m.contains("video goes on with its own clock") }; return false })
        let snap = e.snapshot()
        #expect(snap.framesPresented == 90 && snap.framesDropped == 0)
    }

    @Test func anItemsLanguagePicksItsTrack() throws {
        var item = PlaylistItem(source: try Fixtures.path("tracks.mkv"))
        item.audio = AudioSelection(languages: ["de"])
        let p = player(Events()) { $0.audio.selection = AudioSelection(languages: ["en"]) }
        let e = p.engine!
        try e.load([item])
        #expect(e.audio.track?.index == 2 && e.audio.track?.language == "ger")
        try e.load([PlaylistItem(source: try Fixtures.path("tracks.mkv"))])
        #expect(e.audio.track?.index == 1)
        var byIndex = PlaylistItem(source: try Fixtures.path("tracks.mkv"))
        byIndex.audio = AudioSelection(track: 2, languages: ["en"])
        try e.load([byIndex])
        #expect(e.audio.track?.index == 2)
        e.setVolume(40, muted: true)
        #expect(e.configuration.audio.volume == 40 && e.configuration.audio.muted)
    }

    /// A gapless move to the next item keeps the device (one output, one thread) and makes the
    /// session follow the new item's samples (a new epoch), after a seek in the first item.
    @Test func gaplessItemsKeepTheDevice() throws {
        let events = Events()
        let p = player(events)
        let e = p.engine!
        let clip = try Fixtures.path("tracks.mkv")
        try e.load([PlaylistItem(source: clip), PlaylistItem(source: clip)], autoplay: true)
        let first = try #require(e.audio.output)
        let epoch = e.session.masterEpoch
        try e.seek(to: 1.5, exact: false)
        var turns = 0
        while e.index == 0, turns < 10_000 { e.tick(); turns += 1 }
        #expect(e.index == 1)
        #expect(e.audio.output === first)
        #expect(e.session.masterEpoch == epoch + 1)
        #expect(!events.all.contains { $0.name == "audioLost" })
    }
}
