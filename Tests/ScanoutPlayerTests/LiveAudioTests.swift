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

/// counter_live.ts (30 s, 30 fps, 90 kHz) with a track of seeded white noise beside it (MP2,
/// 48 kHz stereo): no two stretches of its samples alike, so where a piece of it comes from is
/// found by matching.
private func liveChannelWithSound(in scratch: Scratch) throws -> String {
    let ts = scratch.path("live_audio.ts")
    _ = try Proc.run(try Proc.which("ffmpeg"), ["-v", "error", "-y", "-i", try Fixtures.path("counter_live.ts"),
                                                "-f", "lavfi", "-i", "anoisesrc=d=30:c=white:r=48000:a=0.3:seed=7",
                                                "-map", "0:v", "-map", "1:a", "-c:v", "copy", "-c:a", "mp2", "-b:a", "192k",
                                                "-ac", "2", "-shortest", "-f", "mpegts", ts])
    return ts
}

/// That channel sent over UDP in real time and played with timeshift (the default 30 s) by an
/// engine on the monotonic clock, to a device paced in real time; the display asks the output
/// what is heard at each frame.
private final class LiveAudioHarness {
    let scratch: Scratch
    let reference: DecodedTrack
    let device: RealTimeFIFODevice
    let sender: LoopbackSender
    let display = HeardRecordingDisplay(clock: MonotonicClock())
    let engine: PlayerEngine

    init(format: AudioFormat) throws {
        scratch = try Scratch()
        let ts = try liveChannelWithSound(in: scratch)
        reference = try DecodedTrack(ts, format: format)
        device = try RealTimeFIFODevice(directory: scratch.url.path, format: format)
        sender = try LoopbackSender(file: ts, seconds: 30)
        var configuration = PlayerConfiguration()
        configuration.audio = AudioSettings(device: device.device)
        configuration.demuxer.timeoutSeconds = 5
        let e = PlayerEngine(display: display, clock: display.clock, configuration: configuration) { _ in }
        display.heard = { [unowned e] now in e.audio.output?.streamTime(at: now, epoch: e.session.masterEpoch) }
        engine = e
        try e.load([PlaylistItem(source: sender.source)])
        try e.play()
    }

    /// Runs the loop for `seconds` as `Player` does: frames while playing, a look every 50 ms while paused.
    func run(_ seconds: Double) {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            engine.tick()
            if !engine.isRunning { usleep(50_000) }
        }
    }
}

/// A live UDP channel with sound, played with timeshift on the monotonic clock to a device
/// paced in real time (`RealTimeFIFODevice`).
///
/// In real time, not on a fake sink in virtual time as the other audio tests: the channel comes
/// from a process that sends it over UDP at its own real pace (`LoopbackSender`), and what the
/// engine does with it (the live edge, the timeshift buffer's extent, the live hold and the
/// slips of the timeline) depends on when its packets arrive on the engine's clock. A manual
/// clock would run the picture ahead of packets that have not been sent yet; the sound then has
/// to be heard in real time too, so these go through ALSA.
@Suite("Live audio with timeshift", .serialized, .timeLimit(.minutes(1)))
struct LiveAudioTests {
    let format = AudioFormat(sampleRate: 48000, channels: 2)

    /// Where `piece` starts in `all`, matching its first 256 samples (nil when nowhere).
    private func offset(of piece: ArraySlice<Int16>, in all: [Int16]) -> Int? {
        let probe = Array(piece.prefix(256))
        guard probe.count == 256 else { return nil }
        return stride(from: 0, through: all.count - probe.count, by: 2).first { all[$0..<($0 + 256)].elementsEqual(probe) }
    }

    /// The buffer keeps the audio track's packets in the container's order, counts their bytes,
    /// drops them with their GOP, and measures time and builds its index from the video alone;
    /// a cursor hands them to the track's sink, the same bytes (read back from disk too).
    @Test(arguments: [false, true]) func theBufferKeepsTheAudioTrackBesideTheVideo(onDisk: Bool) throws {
        let scratch = try Scratch()
        let ts = try liveChannelWithSound(in: scratch)
        let demuxer = try Demuxer(input: ts)
        let audio = try #require(demuxer.tracks.first { $0.kind == .audio }).index
        final class Read { var packets: [(packet: Packet, video: Bool)] = [] }
        let read = Read()
        try demuxer.route(track: audio) { read.packets.append(($0.clone(), false)) }
        let p = Packet()
        while try demuxer.read(into: p) { read.packets.append((p.clone(), true)) }
        let tb = demuxer.video.timeBase
        let both = TimeshiftBuffer(options: TimeshiftOptions(seconds: 5, directory: onDisk ? scratch.url.path : nil), timeBase: tb, input: ts)
        let videoOnly = TimeshiftBuffer(options: TimeshiftOptions(seconds: 5), timeBase: tb, input: ts)
        both.keep(track: audio)
        let cursor = TimeshiftCursor(buffer: both)
        for (packet, video) in read.packets {
            if video {
                both.append(packet)
                videoOnly.append(packet)
            } else {
                both.append(keptTrack: packet)
                videoOnly.append(keptTrack: packet)  // not kept there: ignored
            }
        }
        both.finish(nil)
        let e = try #require(both.extent)
        let v = try #require(videoOnly.extent)
        #expect(e.start == v.start && e.end == v.end && e.gopsDropped == v.gopsDropped && e.gopsDropped > 0)
        #expect(e.bytes > v.bytes && e.packets > v.packets && e.spillFailures == 0)
        #expect(both.index().timestamps == videoOnly.index().timestamps)
        #expect(both.index().keyframes.map(\.pts) == videoOnly.index().keyframes.map(\.pts))
        // What is kept starts at the first keyframe kept, audio and video in the order read.
        let first = try #require(read.packets.firstIndex { $0.video && $0.packet.isKeyframe && Double($0.packet.pts ?? -1) * tb.doubleValue == e.start })
        let kept = read.packets[first...]
        final class Got { var packets: [(pts: Int64?, stream: Int, bytes: [UInt8])] = [] }
        let got = Got()
        try cursor.route(track: audio) { got.packets.append(($0.pts, $0.streamIndex, $0.bytes)) }
        let q = Packet()
        while try cursor.read(into: q) { got.packets.append((q.pts, q.streamIndex, q.bytes)) }
        #expect(got.packets.count == kept.count)
        let same = zip(got.packets, kept).allSatisfy { $0.pts == $1.packet.pts && $0.stream == $1.packet.streamIndex && $0.bytes == $1.packet.bytes }
        #expect(same)
        #expect(kept.contains { !$0.video })
    }

    @Test func soundFollowsThePictureThroughAPause() async throws { try await offPool { try self.soundFollowsThePictureThroughAPauseBlocking() } }

    /// Plays 2 s, pauses 2 s, plays 1.5 s more: the sound arrives, every frame timed by the
    /// audio clock is within one frame interval of it, the audio goes on after the pause from
    /// where it stopped (the samples the device got are one unbroken stretch of the channel's,
    /// so none was lost for the paused span and none jumped to the live edge), the picture stays
    /// behind the edge, and the snapshot lists the audio track as playing.
    func soundFollowsThePictureThroughAPauseBlocking() throws {
        let h = try LiveAudioHarness(format: format)
        let (e, display, device, reference) = (h.engine, h.display, h.device, h.reference)
        let run = h.run
        // 2 s: the sound starts half a second in (`liveHold`), and its clock, from a device that
        // reports no delay, answers at about a third of the frames after that.
        run(2)
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
        let pausedClock = display.shown.last { $0.at < resumedAt }?.at ?? .zero
        for segment in [display.shown.filter { $0.at <= pausedClock }, display.shown.filter { $0.at >= resumedAt }] {
            let timed = segment.filter { $0.heard != nil }.dropFirst(3)
            for f in timed {
                let media = Double(f.pts) / 90000
                expectInSync(media: media, heard: f.heard!)
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
    }

    @Test func aSeekBackInTheBufferPlaysTheSoundFromTheTarget() async throws { try await offPool { try self.aSeekBackInTheBufferPlaysTheSoundFromTheTargetBlocking() } }

    /// Plays 2.5 s, then seeks back (exactly, while playing) to half a second after the buffer's
    /// first keyframe and plays 1.5 s more: the sound after the seek is the channel's from the
    /// target on, aligned to the sample, and the frames after it follow the audio clock.
    func aSeekBackInTheBufferPlaysTheSoundFromTheTargetBlocking() throws {
        let h = try LiveAudioHarness(format: format)
        let (e, display, device, reference) = (h.engine, h.display, h.device, h.reference)
        let run = h.run
        run(2.5)
        // Between two frames, half a GOP after a keyframe: the seek decodes from that keyframe,
        // and the sound is cut at the target.
        let target = try #require(e.timeshiftStatus).start + 0.51
        let seekedAt = display.clock.now()
        try e.seekTimeshift(to: target)
        #expect(e.state == .playing)
        run(1.5)
        e.stop()
        device.waitUntilQuiet()

        let timed = display.shown.filter { $0.at >= seekedAt && $0.heard != nil }.dropFirst(3)
        for f in timed {
            let media = Double(f.pts) / 90000
            expectInSync(media: media, heard: f.heard!)
        }
        #expect(timed.count >= 8)

        // The sound after the seek: the channel's from the target on, to the sample. Within one
        // LSB: after the flush, libavcodec's MP2 decoder resumes its synthesis window at another
        // phase than the reference's decode from the start, and a quarter of its samples round
        // the other way. The last place it starts is the one after the seek: the sound played
        // before the seek had the target's samples too.
        let written = device.samples
        let from = reference.sampleIndex(at: target)
        let probe = reference.samples[from..<(from + 256)]
        let near = { (a: Int16, b: Int16) in abs(Int(a) - Int(b)) <= 1 }
        let at = try #require(stride(from: written.count - 256, through: 0, by: -2).first { written[$0..<($0 + 256)].elementsEqual(probe, by: near) },
                              "the sound from the target is not among the samples written")
        let after = written[at...]
        #expect(at > 0)
        #expect(after.count > 48000 * 2)
        #expect(after.elementsEqual(reference.samples[from..<(from + after.count)], by: near))
    }
}
