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

/// A display that records the size and timestamp of each frame shown.
final class SizeRecordingDisplay: Display {
    var shown: [(pts: Int64, width: Int, height: Int)] = []
    var description: String { "size-recording" }
    func present(_ frame: VideoFrame, orientation: Orientation) throws {
        shown.append((frame.pts ?? -1, frame.width, frame.height))
    }
}

/// Audio-only items, and the sound of gapless items: checked on the samples a fake sink gets,
/// in virtual time (`FakeAudioPlayer`).
@Suite(.timeLimit(.minutes(1))) struct AudioItemTests {
    final class Events { var all: [PlayerEvent] = [] }

    private func engine(device: String, slate: String? = nil, clock: any PlaybackClock, display: any Display,
                        events: Events) -> PlayerEngine {
        var configuration = PlayerConfiguration()
        configuration.audio = AudioSettings(device: device)
        configuration.slate = slate
        return PlayerEngine(display: display, clock: clock, configuration: configuration) { events.all.append($0) }
    }

    /// A player on fake sinks with `display`, its events in `events`.
    private func player(slate: String? = nil, display: any Display, events: Events,
                        configure: (inout PlayerConfiguration) -> Void = { _ in }) -> FakeAudioPlayer {
        FakeAudioPlayer(configure: { c in c.slate = slate; configure(&c) }, display: { _ in display }) { events.all.append($0) }
    }

    /// A `width`×`height` PNG of one colour, made by the ffmpeg tool.
    private func picture(_ path: String, color: String, width: Int, height: Int) throws {
        _ = try Proc.run(try Proc.which("ffmpeg"), ["-v", "error", "-y", "-f", "lavfi", "-i", "color=\(color):s=\(width)x\(height)",
                                                    "-frames:v", "1", path])
    }

    private func int16s(_ path: String) throws -> [Int16] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
    }

    /// Plays until the state leaves `playing` (the manual clock moves as the engine waits).
    private func play(_ e: PlayerEngine) {
        var turns = 0
        while e.state == .playing, turns < 20_000 {
            e.tick()
            turns += 1
        }
    }

    /// Plays out what the output holds, until it has written `frames` frames (10 s of real
    /// time at most); the frames it wrote.
    private func drain(_ p: FakeAudioPlayer, frames: Int) -> Int {
        guard let out = p.engine.audio.output else { return 0 }
        p.playOut { out.counts.framesPlayed >= frames || out.loss != nil }
        return out.counts.framesPlayed
    }

    /// audio_only.wav (1 s, 44.1 kHz mono s16) plays to its end with the slate on screen; every
    /// sample reaches the device (as stereo), in order.
    @Test func aWavPlaysToItsEndWithTheSlate() throws {
        let scratch = try Scratch()
        let slate = scratch.path("slate.png")
        try picture(slate, color: "blue", width: 64, height: 48)
        let display = SizeRecordingDisplay()
        let events = Events()
        let p = player(slate: slate, display: display, events: events)
        let e = p.engine!
        let wav = try Fixtures.path("audio_only.wav")
        try e.load([PlaylistItem(source: wav)], autoplay: true)
        play(e)
        #expect(e.state == .ended)
        let names = events.all.map(\.name)
        let order = ["itemChanged", "prepared", "durationChanged", "firstFrame", "ended"].compactMap { names.firstIndex(of: $0) }
        #expect(order.count == 5 && order == order.sorted())
        #expect(events.all.contains { if case let .prepared(_, _, w, h, codec, d) = $0 { return w == 64 && h == 48 && codec == "pcm_s16le" && d == 1.0 }; return false })
        #expect(!display.shown.isEmpty && display.shown.allSatisfy { $0.width == 64 && $0.height == 48 })
        // The last still is shown at the audio's end: 44100 in the track's 1/44100 time base.
        #expect(display.shown.last?.pts == 44100)
        let played = drain(p, frames: 44100)
        #expect(played == 44100)
        let written = try #require(p.sink).samples
        // After the 44-byte header; mono goes to both channels at −3 dB (libswresample's matrix).
        let source = try int16s(wav).suffix(44100)
        let expected = source.flatMap { s -> [Int] in let v = Int((Double(s) * 0.5.squareRoot()).rounded()); return [v, v] }
        // Every one: the sink keeps all it is written (ALSA's `file` plugin kept a buffer back).
        #expect(written.count == expected.count)
        let off = zip(written, expected).filter { abs(Int($0) - $1) > 1 }.count
        #expect(off == 0)
    }

    /// With no device the item still ends after the audio's length, on the monotonic clock, and
    /// a seek lands where asked.
    @Test func withNoDeviceTheItemEndsAfterTheAudiosLength() throws {
        let clock = ManualClock()
        let display = SizeRecordingDisplay()
        let events = Events()
        let e = engine(device: "none", clock: clock, display: display, events: events)
        try e.load([PlaylistItem(source: try Fixtures.path("audio_only.wav"))], autoplay: true)
        let start = clock.now()
        try e.seek(to: 0.5, exact: true)
        #expect(events.all.contains { if case let .seekCompleted(p, _) = $0 { return abs(p - 0.5) < 0.03 }; return false })
        play(e)
        #expect(e.state == .ended)
        let seconds = (clock.now() - start).secondsValue
        #expect(seconds >= 0.5 && seconds < 0.6)
        // Black 16×16 without a slate or cover.
        #expect(display.shown.allSatisfy { $0.width == 16 && $0.height == 16 })
    }

    /// An mp3 with an embedded PNG shows the PNG; `probe`'s demuxer lists its tracks.
    @Test func anMp3WithACoverShowsTheCover() throws {
        let scratch = try Scratch()
        let cover = scratch.path("cover.png")
        try picture(cover, color: "red", width: 40, height: 30)
        let mp3 = scratch.path("song.mp3")
        _ = try Proc.run(try Proc.which("ffmpeg"), ["-v", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=440:duration=1",
                                                    "-i", cover, "-map", "0:a", "-map", "1:v", "-c:a", "libmp3lame", "-c:v", "png",
                                                    "-disposition:v", "attached_pic", "-id3v2_version", "3", mp3])
        var options = DemuxerOptions()
        options.acceptsAudioOnly = true
        let reader = try FrameReader(input: mp3, demuxerOptions: options)
        #expect(reader.demuxer.audioOnly && reader.demuxer.coverTrack != nil)
        #expect(reader.demuxer.tracks.map(\.kind).contains(.audio))
        #expect(reader.video.width == 40 && reader.video.height == 30)
        let frame = VideoFrame()
        #expect(try reader.next(into: frame))
        // The PNG decodes to packed RGB: red.
        var rgb: [UInt8] = []
        frame.withPlaneRows(0) { if rgb.isEmpty { rgb = Array($0.prefix(3)) } }
        #expect(rgb.count == 3 && rgb[0] > 250 && rgb[1] < 5 && rgb[2] < 5)
        var stills = 1
        while try reader.next(into: frame) { stills += 1 }
        // Four a second over about one second, and one at the end.
        #expect(stills >= 4 && stills <= 6)
    }

    /// The samples of tracks.mkv's default audio track as the engine's output gets them
    /// (48 kHz stereo s16), decoded from the start.
    private func reference() throws -> [Int16] {
        try decodedSound(of: try Fixtures.path("tracks.mkv"), format: AudioFormat(sampleRate: 48000, channels: 2))
    }

    /// A gapless pass of tracks.mkv twice plays every sample of both passes: the packets read
    /// while each item was prepared are played too.
    @Test func aGaplessLoopPlaysEverySampleOfBothPasses() throws {
        let p = player(display: SizeRecordingDisplay(), events: Events())
        let e = p.engine!
        let clip = try Fixtures.path("tracks.mkv")
        try e.load([PlaylistItem(source: clip), PlaylistItem(source: clip)], autoplay: true)
        play(e)
        #expect(e.index == 1 && e.state == .ended)
        let track = try reference().count / 2
        let played = drain(p, frames: 2 * track)
        // Within one AAC packet (1024 frames).
        #expect(abs(played - 2 * track) <= 1024)
    }
}

extension AudioItemTests {
    /// At twice the speed, a gapless pass of tracks.mkv twice plays both passes' sound
    /// stretched to half its length, to the last sample of each: at the move to the second item
    /// and at the end, what the output's stretcher holds is played, not dropped (`rubberband`
    /// holds 29 ms at 2×). The output thread stretches the sound and writes nothing meanwhile:
    /// the engine's clock (`AudioPacedClock`) waits for it, as a card's time would not.
    @Test func aGaplessLoopAtTwiceTheSpeedPlaysBothPassesToTheirEnds() throws {
        let p = player(display: SizeRecordingDisplay(), events: Events())
        let e = p.engine!
        let clip = try Fixtures.path("tracks.mkv")
        try e.setRate(2)
        try e.load([PlaylistItem(source: clip), PlaylistItem(source: clip)], autoplay: true)
        play(e)
        #expect(e.index == 1 && e.state == .ended)
        let track = try reference().count / 2
        let out = try #require(e.audio.output)
        // Everything written, the stretcher's last samples included: the output waits for more.
        #expect(p.playOut())
        let played = out.counts.framesPlayed
        // Within one AAC packet (1024 frames) stretched (512); undrained, 2784 frames short.
        #expect(abs(played - track) <= 512, "\(played) frames played of \(track), \(String(describing: e.audio.status))")
    }

    /// A device that could not open (`audio-open@1`) is tried again 2 s later, without
    /// stalling the frames (the item plays to its end), and is heard from then on: `audioLost`,
    /// then `audioRestored`.
    @Test func aDeviceThatCouldNotOpenIsTriedAgain() throws {
        let events = Events()
        let p = player(display: SizeRecordingDisplay(), events: events) { $0.audio.failOpens = 1 }
        let e = p.engine!
        try e.load([PlaylistItem(source: try Fixtures.path("tracks.mkv"))], autoplay: true)
        #expect(e.audio.output == nil)
        var turns = 0
        while e.state == .playing, turns < 10_000 { e.tick(); turns += 1 }
        let names = events.all.map(\.name)
        let lost = try #require(names.firstIndex(of: "audioLost"))
        let restored = try #require(names.firstIndex(of: "audioRestored"))
        #expect(lost < restored && names.filter { $0 == "audioRestored" }.count == 1)
        #expect(e.state == .ended && e.snapshot().framesPresented > 0)
        let out = try #require(e.audio.output)
        p.playOut()
        #expect(out.counts.framesPlayed > 0)
        #expect(p.sinks.opened.count == 1, "the opening that failed made no sink")
    }
}
