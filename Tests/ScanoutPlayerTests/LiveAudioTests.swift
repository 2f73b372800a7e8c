import Foundation
import ScanoutDisplay
import ScanoutMedia
import ScanoutPlayer
import ScanoutTestSupport
import ScanoutTesting
import Testing

/// A live UDP channel with sound, played with timeshift on the monotonic clock to a device
/// paced in real time (`RealTimeFIFODevice`).
@Suite("Live audio with timeshift", .serialized, .timeLimit(.minutes(1)))
struct LiveAudioTests {
    let format = AudioFormat(sampleRate: 48000, channels: 2)

    /// counter_live.ts (30 s, 30 fps, 90 kHz) with a track of seeded white noise beside it (MP2,
    /// 48 kHz stereo): no two stretches of its samples alike, so where a piece of it comes from
    /// is found by matching.
    private func channel(in scratch: Scratch) throws -> String {
        let ts = scratch.path("live_audio.ts")
        _ = try Proc.run(try Proc.which("ffmpeg"), ["-v", "error", "-y", "-i", try Fixtures.path("counter_live.ts"),
                                                    "-f", "lavfi", "-i", "anoisesrc=d=30:c=white:r=48000:a=0.3:seed=7",
                                                    "-map", "0:v", "-map", "1:a", "-c:v", "copy", "-c:a", "mp2", "-b:a", "192k",
                                                    "-ac", "2", "-shortest", "-f", "mpegts", ts])
        return ts
    }

    /// Where `piece` starts in `all`, matching its first 256 samples (nil when nowhere).
    private func offset(of piece: ArraySlice<Int16>, in all: [Int16]) -> Int? {
        let probe = Array(piece.prefix(256))
        guard probe.count == 256 else { return nil }
        return stride(from: 0, through: all.count - probe.count, by: 2).first { all[$0..<($0 + 256)].elementsEqual(probe) }
    }

    @Test func soundFollowsThePictureThroughAPause() async throws { try await offPool { try self.soundFollowsThePictureThroughAPauseBlocking() } }

    /// Plays 1.5 s, pauses 2 s, plays 1.5 s more: the sound arrives, every frame timed by the
    /// audio clock is within one frame interval of it, the audio goes on after the pause from
    /// where it stopped (the samples the device got are one unbroken stretch of the channel's,
    /// so none was lost for the paused span and none jumped to the live edge), the picture stays
    /// behind the edge, and the snapshot lists the audio track as playing.
    func soundFollowsThePictureThroughAPauseBlocking() throws {
        let scratch = try Scratch()
        let ts = try channel(in: scratch)
        let reference = try DecodedTrack(ts, format: format)
        let device = try RealTimeFIFODevice(directory: scratch.url.path, format: format)
        let sender = try LoopbackSender(file: ts, seconds: 30)
        var configuration = PlayerConfiguration()
        configuration.audio = AudioSettings(device: device.device)
        configuration.demuxer.timeoutSeconds = 5
        let display = HeardRecordingDisplay(clock: MonotonicClock())
        let e = PlayerEngine(display: display, clock: display.clock, configuration: configuration) { _ in }
        display.heard = { [unowned e] now in e.audio.output?.streamTime(at: now, epoch: e.session.masterEpoch) }
        try e.load([PlaylistItem(source: sender.source)])
        try e.play()
        func run(_ seconds: Double) {
            let end = Date().addingTimeInterval(seconds)
            while Date() < end {
                e.tick()
                if !e.isRunning { usleep(50_000) }
            }
        }
        run(1.5)
        let track = try #require(e.audio.track)
        #expect(track.kind == .audio && track.codecName == "mp2")
        let snapshot = e.snapshot()
        #expect(snapshot.tracks.contains { $0.index == track.index && $0.kind == .audio })
        #expect(snapshot.selectedTracks.contains(track.index))
        try e.pause()
        let pausedAt = try #require(e.timeshiftStatus).position
        run(2)
        try e.play()
        let resumedAt = display.clock.now()
        run(1.5)
        let status = try #require(e.timeshiftStatus)
        #expect(status.behindLive > 1.5)
        #expect(status.position - pausedAt > 1.2)

        // The frames follow the audio clock, before the pause and after it. Left out: the first
        // frames after the sound starts and after it resumes, while the device takes its first
        // writes into a buffer it does not report (ALSA's file plugin keeps one buffer back, and
        // the FIFO holds 21 ms), so the clock leads the sound by that much until the frames drop
        // to catch up.
        let pausedClock = display.shown.last { $0.at < resumedAt }?.at ?? 0
        for segment in [display.shown.filter { $0.at <= pausedClock }, display.shown.filter { $0.at >= resumedAt }] {
            let timed = segment.filter { $0.heard != nil }.dropFirst(3)
            for f in timed {
                let media = Double(f.pts) / 90000
                #expect(abs(f.heard! - media) <= 1.0 / 30, "frame at \(media) s shown when the audio was at \(f.heard!) s")
            }
            #expect(timed.count >= 8)
        }

        e.stop()  // what ALSA's file plugin kept back goes to the device
        device.waitUntilQuiet()
        let written = device.samples
        // About 3 s of sound; the first MP2 frames decode differently mid-stream (the
        // synthesis filter's history), so the match starts two frames in.
        #expect(written.count > 2 * 48000 * 2)
        let skip = 2 * 1152 * 2
        let start = try #require(offset(of: written[skip...], in: reference.samples))
        let stretch = reference.samples[start..<min(reference.samples.count, start + written.count - skip)]
        #expect(written[skip...].elementsEqual(stretch), "the sound is not one unbroken stretch of the channel's")
        withExtendedLifetime(sender) {}
    }
}
