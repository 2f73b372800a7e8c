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

/// The decoded samples of an audio track as the engine's output gets them (s16, the output's
/// rate and channels), with the stream time each decoded chunk starts at.
struct DecodedTrack {
    var samples: [Int16] = []
    /// (stream seconds, index of the chunk's first sample in `samples`).
    var chunks: [(start: Double, offset: Int)] = []
    let format: AudioFormat

    /// Decodes track `index` of `path` (its default audio track when nil) from the start.
    init(_ path: String, track index: Int? = nil, format: AudioFormat) throws {
        self.format = format
        let reader = try FrameReader(input: path)
        let track = try #require(TrackSelector.pick(.audio, from: reader.demuxer.tracks, index: index, languages: []))
        let decoder = try AudioDecoder(demuxer: reader.demuxer, track: track, output: format)
        final class Made { var chunks: [AudioChunk] = [] }
        let made = Made()
        try reader.demuxer.route(track: track.index) { packet in made.chunks += (try? decoder.decode(packet)) ?? [] }
        let frame = VideoFrame()
        while try reader.next(into: frame) {}
        for c in made.chunks {
            chunks.append((c.start ?? .nan, samples.count))
            samples += c.samples
        }
    }

    /// The index in `samples` of the first sample at or after stream time `t`, cut as
    /// `AudioOutput` cuts a chunk at a seek's target (rounded to the nearest sample).
    func sampleIndex(at t: Double) -> Int {
        let i = chunks.lastIndex { $0.start <= t } ?? 0
        let frames = Int(((t - chunks[i].start) * Double(format.sampleRate)).rounded())
        return chunks[i].offset + max(0, frames) * format.channels
    }
}

/// Where two sample arrays first differ (nil when equal), said briefly instead of printing them.
func difference(_ a: some Collection<Int16>, _ b: some Collection<Int16>) -> String? {
    if let i = zip(a, b).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset {
        return "first difference at sample \(i) of \(a.count) and \(b.count)"
    }
    return a.count == b.count ? nil : "\(a.count) samples, \(b.count) expected"
}

/// A display that records, for each frame shown, the stream time the audio output says is
/// heard at that instant (nil when it says nothing).
final class HeardRecordingDisplay: Display {
    let clock: any PlaybackClock
    /// Asked at each frame: the audio position now.
    var heard: (ClockTime) -> Double? = { _ in nil }
    var shown: [(pts: Int64, at: ClockTime, heard: Double?)] = []
    var vblankSource: (any VBlankSource)?
    init(clock: any PlaybackClock) { self.clock = clock }
    var description: String { "heard-recording" }
    func present(_ frame: VideoFrame, orientation: Orientation) throws {
        let now = clock.now()
        shown.append((frame.pts ?? -1, now, heard(now)))
    }
}

/// Where a test's sound goes: a fake sink in virtual time (`FakeAudioPlayer`), or ALSA, through
/// its `file` plugin into a FIFO read in real time (`RealTimeFIFODevice`), so that one test
/// keeps the path through ALSA covered end to end.
enum SoundPath: CaseIterable, Sendable { case fake, alsa }

/// Audio after exact seeks, checked on the samples the device gets: the sound from the target
/// on, to the sample, nothing of before the seek after it, and each frame shown when the audio
/// clock is at its time. In virtual time on a fake sink; the first test also through ALSA in
/// real time.
@Suite(.timeLimit(.minutes(1))) struct AudioSeekTests {
    final class Events { var all: [PlayerEvent] = [] }
    /// tracks.mkv's video (3 s at 30 fps, time base 1/1000, first frame at 25 ms, keyframes at
    /// 0.025, 1.025 and 2.025 s) with 3 s of seeded white noise, FLAC, 48 kHz stereo, in packets
    /// of 96 ms from 0. FLAC decodes every packet alone, to the source's samples whatever came
    /// before (tracks.mkv's AAC does not: the noise its decoder substitutes depends on the
    /// packets decoded before, so a seek changes low bits).
    let scratch: Scratch
    let clip: String
    let reference: DecodedTrack
    let format = AudioFormat(sampleRate: 48000, channels: 2)
    let originSeconds = 0.025

    init() throws {
        scratch = try Scratch()
        clip = scratch.path("noise.mkv")
        _ = try Proc.run(try Proc.which("ffmpeg"), ["-v", "error", "-y", "-i", try Fixtures.path("tracks.mkv"),
                                                    "-f", "lavfi", "-i", "anoisesrc=d=3:c=white:r=48000:a=0.3:seed=3",
                                                    "-map", "0:v", "-map", "1:a", "-c:v", "copy", "-c:a", "flac", "-ac", "2", clip])
        reference = try DecodedTrack(clip, format: format)
    }

    /// Makes `display` ask `e`'s output what is heard at each frame.
    private func listen(_ e: PlayerEngine, display: HeardRecordingDisplay) {
        display.heard = { [unowned e] now in e.audio.output?.streamTime(at: now, epoch: e.session.masterEpoch) }
    }

    private func playToEnd(_ e: PlayerEngine) {
        var turns = 0
        while e.state == .playing, turns < 20_000 {
            e.tick()
            turns += 1
        }
    }

    /// A screen whose next vblank is always `ahead` from now on `clock` (its last one
    /// `period − ahead` ago): a frame shown on it is seen `ahead` after its present.
    final class VBlankAhead: VBlankSource {
        let clock: any PlaybackClock
        let refreshInterval: Duration
        let ahead: Duration
        init(clock: any PlaybackClock, period: Duration, ahead: Duration) {
            self.clock = clock
            refreshInterval = period
            self.ahead = ahead
        }
        var lastVBlank: ClockTime? { clock.now() + ahead - refreshInterval }
    }

    /// Runs `body` on an engine playing to the device of `path`, on a screen whose vblanks come
    /// from `vblanks` (made on the engine's clock); once the output has written the frames
    /// `body` asks for and all it had queued, the engine stops, which drops what the device
    /// holds. Returns `body`'s result, what the device got, and the frames shown.
    private func playing<T>(_ path: SoundPath = .fake, vblanks: ((any PlaybackClock) -> any VBlankSource)? = nil,
                            _ body: (PlayerEngine, Events, any PlaybackClock) throws -> (result: T, frames: Int)) throws
        -> (result: T, written: [Int16], display: HeardRecordingDisplay) {
        switch path {
        case .fake: try playingOnAFakeSink(vblanks: vblanks, body)
        case .alsa: try playingThroughALSA(vblanks: vblanks, body)
        }
    }

    /// `playing` on a fake sink, in virtual time: played out to the last chunk queued.
    private func playingOnAFakeSink<T>(vblanks: ((any PlaybackClock) -> any VBlankSource)?,
                                       _ body: (PlayerEngine, Events, any PlaybackClock) throws -> (result: T, frames: Int)) throws
        -> (result: T, written: [Int16], display: HeardRecordingDisplay) {
        let events = Events()
        var display: HeardRecordingDisplay!
        let p = FakeAudioPlayer(display: { clock in
            display = HeardRecordingDisplay(clock: clock)
            display.vblankSource = vblanks?(clock)
            return display
        }) { events.all.append($0) }
        let e = p.engine!
        listen(e, display: display)
        let (result, frames) = try body(e, events, p.paced)
        if let out = e.audio.output {
            #expect(p.playOut { out.loss != nil || out.counts.framesPlayed >= frames }, "the output wrote what it had")
        }
        e.stop()
        return (result, p.sink?.samples ?? [], display)
    }

    /// `playing` through ALSA to a FIFO read in real time, the engine on the monotonic clock:
    /// until the output has written what it had (10 s at most); ALSA's `file` plugin writes out
    /// what it kept back (one buffer) once the engine stops.
    private func playingThroughALSA<T>(vblanks: ((any PlaybackClock) -> any VBlankSource)?,
                                       _ body: (PlayerEngine, Events, any PlaybackClock) throws -> (result: T, frames: Int)) throws
        -> (result: T, written: [Int16], display: HeardRecordingDisplay) {
        let scratch = try Scratch()
        let device = try RealTimeFIFODevice(directory: scratch.url.path, format: format)
        let clock = MonotonicClock()
        let display = HeardRecordingDisplay(clock: clock)
        display.vblankSource = vblanks?(clock)
        let events = Events()
        var configuration = PlayerConfiguration()
        configuration.audio = AudioSettings(device: device.device)
        let e = PlayerEngine(display: display, clock: clock, configuration: configuration) { events.all.append($0) }
        listen(e, display: display)
        let (result, frames) = try body(e, events, clock)
        // Until the queue is empty and the last chunk written: the output thread writes at the
        // FIFO's real pace, so this looks every 50 ms.
        if let out = e.audio.output {
            var last = -1
            for _ in 0..<200 where out.loss == nil {
                let played = out.counts.framesPlayed
                if played >= frames, out.queuedSeconds == 0, played == last { break }
                last = played
                usleep(50_000)
            }
        }
        e.stop()
        device.waitUntilQuiet()
        return (result, device.samples, display)
    }

    /// The samples of silence the output wrote before the item's first one: the sound waits for
    /// the first frame, which comes `PlayerAudio.pictureLead` after the start (at most 200 ms
    /// of it, checked here).
    private func startSilence(_ written: [Int16]) -> Int {
        let zeros = written.prefix { $0 == 0 }.count - reference.samples.prefix { $0 == 0 }.count
        let lead = max(0, zeros) / format.channels * format.channels
        #expect(lead <= 200 * format.sampleRate / 1000 * format.channels, "\(lead / format.channels) frames of silence at the start")
        return lead
    }

    /// Every frame shown after `after` (clock time) while the audio clock answered is in sync
    /// with the audio position (`expectInSync`), but the first two: a seek shows its target and
    /// starts the timeline again at the frame after it, and both are shown whatever the audio
    /// (as after every seek or resume); returns how many were checked.
    ///
    /// ALSA's `file` plugin reports no delay, so its clock runs on for only two periods (10 ms)
    /// after each write (`AudioOutput.streamTime`): on a busy machine it often says nothing, and
    /// those frames follow the session's own timeline from the last frame it timed. The fake
    /// sink reports what it holds, so its clock answers at every frame.
    private func checkFramesFollowTheAudio(_ display: HeardRecordingDisplay, after: ClockTime) -> Int {
        let timed = display.shown.filter { $0.at > after }.dropFirst(2).filter { $0.heard != nil }
        for f in timed {
            let media = Double(f.pts) / 1000
            expectInSync(media: media, heard: f.heard!)
        }
        return timed.count
    }

    /// Loaded paused, sought exactly to 1.3 s (stream time 1.325 s: inside an AAC packet, 0.3 s
    /// after the keyframe the seek decodes from), then played to the end: the device gets the
    /// track's samples from that instant on, every one, and nothing before it; the frames
    /// follow the audio clock. On a fake sink, and through ALSA in real time.
    @Test(arguments: SoundPath.allCases) func anExactSeekWhilePausedPlaysTheSamplesFromTheTarget(_ path: SoundPath) throws {
        let target = 1.3
        let from = reference.sampleIndex(at: originSeconds + target)
        // Not on a packet boundary: the cut is inside a chunk.
        #expect(!reference.chunks.contains { $0.offset == from })
        let expected = reference.samples[from...]
        let (playedAt, written, display) = try playing(path) { e, events, clock in
            try e.load([PlaylistItem(source: clip)], autoplay: false)
            try e.seek(to: target, exact: true)
            #expect(events.all.contains { if case let .seekCompleted(p, n) = $0 { return abs(p - target) < 1e-9 && n == 39 }; return false })
            let played = clock.now()
            try e.play()
            playToEnd(e)
            #expect(e.state == .ended)
            return (played, expected.count / 2)
        }
        let diff = difference(written, expected)
        #expect(diff == nil)
        // 1.3 s to 3 s: 51 frames; at least a third of them timed by the audio.
        #expect(checkFramesFollowTheAudio(display, after: playedAt) >= 17)
    }

    /// A seek while playing (0.5 s in, exactly to 2.3 s): the device gets the samples from the
    /// start up to about where the seek came (what was written before it), then those from the
    /// target on; nothing queued before the seek is written after it, and the frames after the
    /// seek follow the audio clock.
    @Test func anExactSeekWhilePlayingFlushesWhatCameBefore() throws {
        let target = 2.3
        let tail = reference.samples[reference.sampleIndex(at: originSeconds + target)...]
        let ((writtenBefore, writtenBySeek, seekedAt), written, display) = try playing { e, _, clock in
            try e.load([PlaylistItem(source: clip)], autoplay: true)
            var turns = 0
            while e.position < 0.5, e.state == .playing, turns < 10_000 { e.tick(); turns += 1 }
            let out = try #require(e.audio.output)
            let before = out.counts.framesPlayed
            let at = clock.now()
            try e.seek(to: target, exact: true)
            // The period being written as the seek returned is counted only once it is written.
            let bySeek = out.counts.framesPlayed + out.deviceBuffer.period
            playToEnd(e)
            #expect(e.state == .ended)
            return ((before, bySeek, at), tail.count / 2)
        }
        // What came before the seek: a prefix of the track, no longer than what was written by
        // the time the seek returned, the period in flight included (its flush came in between: nothing queued before it is
        // written after it, however long the seek's decoding took on a loaded machine). Then
        // the silence that lines the target's sound up with its frame, when the output thread
        // got there before the frame's time.
        let lead = startSilence(written)
        let between = written.dropLast(tail.count).reversed().prefix { $0 == 0 }.count / format.channels * format.channels
        #expect(between <= 200 * format.sampleRate / 1000 * format.channels, "\(between / format.channels) frames of silence before the target")
        let head = written.count - tail.count - lead - between
        #expect(writtenBefore > 0 && head > 0 && head <= 2 * writtenBySeek, "head \(head), by the seek \(writtenBySeek)")
        let headDiff = difference(written.dropFirst(lead).prefix(max(0, head)), reference.samples.prefix(max(0, head)))
        #expect(headDiff == nil)
        let tailDiff = difference(written.suffix(tail.count), tail)
        #expect(tailDiff == nil)
        // 2.3 s to 3 s: 21 frames; at least a third of them timed by the audio.
        #expect(checkFramesFollowTheAudio(display, after: seekedAt) >= 7)
    }

    /// An item whose sound starts 0.5 s after its picture: its packets come about 15 frames after
    /// the first frame's in the file, past what is read ahead for it (`maxDecodedAhead`), so
    /// none of it is there when the first frame is aimed. The first chunk that comes is still
    /// lined up with that frame (`PlayerAudio.lineUpWith`): the device gets silence first, until
    /// 0.475 s after the frame (its stream time is 0.025 s), instead of the sound as soon as it
    /// is read, about 0.27 s early (no silence at all).
    @Test func soundThatStartsAfterThePictureIsLinedUpWithIt() throws {
        let late = scratch.path("late.mkv")
        _ = try Proc.run(try Proc.which("ffmpeg"), ["-v", "error", "-y", "-i", try Fixtures.path("tracks.mkv"), "-itsoffset", "0.5",
                                                    "-f", "lavfi", "-i", "anoisesrc=d=2:c=white:r=48000:a=0.3:seed=3",
                                                    "-map", "0:v", "-map", "1:a", "-c:v", "copy", "-c:a", "flac", "-ac", "2", late])
        let (_, written, _) = try playing { e, _, _ in
            try e.load([PlaylistItem(source: late)], autoplay: true)
            playToEnd(e)
            #expect(e.state == .ended)
            return ((), 0)
        }
        let silent = written.prefix { $0 == 0 }.count / format.channels
        #expect(silent >= format.sampleRate / 10 && silent < format.sampleRate * 6 / 10, "\(silent) frames of silence first")
        #expect(written.count > format.sampleRate * format.channels)
    }

    /// On a screen, a frame is seen at the vblank after its present: a seek's target frame is
    /// seen some time after it is shown (here 200 ms: the screen's next vblank is always 200 ms
    /// away). The sound from the target waits for it: the device gets the samples from before
    /// the seek, then silence until the frame is seen (200 ms at most: less the time the output
    /// thread takes to get there), then every sample from the target on.
    @Test func onAScreenTheTargetsSoundStartsWhenItsFrameIsSeen() throws {
        let target = 2.3
        let tail = reference.samples[reference.sampleIndex(at: originSeconds + target)...]
        let (_, written, _) = try playing(vblanks: { VBlankAhead(clock: $0, period: .milliseconds(250), ahead: .milliseconds(200)) }) { e, _, _ in
            try e.load([PlaylistItem(source: clip)], autoplay: true)
            var turns = 0
            while e.position < 0.5, e.state == .playing, turns < 10_000 { e.tick(); turns += 1 }
            try e.seek(to: target, exact: true)
            playToEnd(e)
            #expect(e.state == .ended)
            return ((), tail.count / 2)
        }
        #expect(difference(written.suffix(tail.count), tail) == nil)
        let before = written.dropFirst(startSilence(written)).dropLast(tail.count)
        let silent = before.reversed().prefix { $0 == 0 }.count / format.channels
        #expect(silent > 0 && silent <= 200 * format.sampleRate / 1000, "\(silent) frames of silence before the target's sound")
        #expect(difference(before.dropLast(silent * format.channels), reference.samples.prefix(before.count - silent * format.channels)) == nil)
    }
}
