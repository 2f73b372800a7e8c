import Foundation
import ScanoutTestSupport
import Testing

@Suite("scanout play --audio-device")
struct AudioCLITests {
    private func samples(_ path: String) throws -> [Int16] {
        try Data(contentsOf: URL(fileURLWithPath: path)).withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
    }

    @Test("--alang de plays the German track (880 Hz, 44.1 kHz mono) to the device, converted to its format")
    func germanTrack() throws {
        let scratch = try Scratch()
        let file = scratch.path("out.raw")
        let device = "file:FILE=\(file),FORMAT=raw"
        let r = try CLI.run(["play", try Fixtures.path("tracks.mkv"), "--output", "headless", "--renderer", "cpu", "--quiet",
                             "--audio-device", device, "--alang", "de,en", "--volume", "50"])
        #expect(r.status == 0, "exit \(r.status): \(r.stderrText)")
        let line = try #require(r.stdoutText.split(separator: "\n").first { $0.hasPrefix("audio: ") })
        // The null device behind the file plugin takes the track's own rate; channels: 2 at least.
        #expect(line.hasPrefix("audio: track 2 (mp3, ger) on \(device) as s16 44100 Hz 2 ch"), "\(line)")
        #expect(line.hasSuffix("0 underruns, 0 chunks dropped"), "\(line)")
        let written = try samples(file)
        #expect(written.count > 2 * 44100 * 2)
        #expect(abs(toneFrequency(written, channels: 2, rate: 44100) - 880) < 1)
        // Half volume: the tone's peak is half of what libavcodec decodes (about 4096 × 0.707 for
        // sine's default amplitude up-mixed to two channels), never full scale.
        #expect((written.map { abs(Int($0)) }.max() ?? 0) < 4096)
    }

    @Test("--rate 2: the whole track is heard, stretched to half its length, before play exits")
    func theWholeTrackAtTwiceTheSpeed() throws {
        let scratch = try Scratch()
        let file = scratch.path("out.raw")
        let clip = try Fixtures.path("tracks.mkv")
        let r = try CLI.run(["play", clip, "--output", "headless", "--renderer", "cpu", "--quiet", "--rate", "2",
                             "--audio-device", "file:FILE=\(file),FORMAT=raw"])
        #expect(r.status == 0, "exit \(r.status): \(r.stderrText)")
        // The default track (AAC, 48 kHz) as ffmpeg decodes it, in frames.
        let reference = try Proc.run(try Proc.which("ffmpeg"), ["-v", "error", "-i", clip, "-map", "0:a:0", "-f", "s16le",
                                                                 "-ac", "2", "-ar", "48000", "-"]).stdout.count / 4
        let all = try samples(file)
        // To the frame: the stretcher's last window (29 ms) and what the device held at the
        // end are heard too, after the silence that lines the sound up with the first frame
        // (which comes 80 ms after the start): less than 0.2 s of it.
        let silence = all.count / 2 - reference / 2
        #expect(silence >= 0 && silence < 9600, "\(all.count / 2) frames written, \(reference / 2) of the track expected")
        #expect(all.prefix(max(0, silence) * 2).allSatisfy { $0 == 0 })
        #expect(!r.stderrText.contains("RubberBand"), "\(r.stderrText)")
    }

    @Test("an audio-only input plays with --still on screen, every sample heard, at half speed too")
    func audioOnlyWithAStill() throws {
        let scratch = try Scratch()
        let still = scratch.path("still.png")
        _ = try Proc.run(try Proc.which("ffmpeg"), ["-v", "error", "-y", "-f", "lavfi", "-i", "color=blue:s=40x30", "-frames:v", "1", still])
        for (rate, frames) in [(1.0, 44100), (0.5, 88200)] {
            let file = scratch.path("out-\(rate).raw")
            let r = try CLI.run(["play", try Fixtures.path("audio_only.wav"), "--output", "headless", "--renderer", "cpu", "--quiet",
                                 "--rate", "\(rate)", "--still", still, "--audio-device", "file:FILE=\(file),FORMAT=raw"])
            #expect(r.status == 0, "exit \(r.status): \(r.stderrText)")
            // A still four times a second and one at the end, drawn at the picture's size.
            // (Timed by the sound: on a loaded machine one may be shown late enough to be dropped.)
            let summary = try #require(r.stdoutText.split(separator: "\n").first { $0.hasPrefix("summary: ") })
            #expect(summary.contains(" 5 decoded, 0 decode errors"), "\(summary)")
            #expect(summary.hasPrefix("summary: 5 frames presented, 0 dropped") || summary.hasPrefix("summary: 4 frames presented, 1 dropped"), "\(summary)")
            #expect(r.stdoutText.contains("on headless 40x30"), "\(r.stdoutText)")
            // 1 s of 44.1 kHz mono, as stereo: every frame, stretched at 0.5× to the frame.
            #expect(try samples(file).count / 2 == frames)
        }
    }

    @Test("a device that cannot open: one audioLost line, the video plays on its own clock")
    func deviceThatCannotOpen() throws {
        let r = try CLI.run(["play", try Fixtures.path("tracks.mkv"), "--output", "headless", "--renderer", "cpu", "--quiet", "--untimed",
                             "--audio-device", "scanout-no-such-device"])
        #expect(r.status == 0, "exit \(r.status): \(r.stderrText)")
        #expect(r.stderrLines.contains { $0.hasPrefix("scanout: audioLost device=scanout-no-such-device reason=audio device scanout-no-such-device: cannot open: ") })
        #expect(r.stdoutText.contains("summary: 90 frames presented, 0 dropped"))
    }

    @Test("SCANOUT_FAULTS=audio-lost@3: the device fails after three writes; every frame is still shown")
    func deviceLostMidPlay() throws {
        var env = ProcessInfo.processInfo.environment
        env["SCANOUT_FAULTS"] = "audio-lost@3"
        let r = try CLI.run(["play", try Fixtures.path("tracks.mkv"), "--output", "headless", "--renderer", "cpu", "--quiet",
                             "--audio-device", "null"], environment: env)
        #expect(r.status == 0, "exit \(r.status): \(r.stderrText)")
        #expect(r.stderrLines.contains("scanout: audioLost device=null reason=Input/output error"))
        let summary = try #require(r.stdoutText.split(separator: "\n").first { $0.hasPrefix("summary: ") })
        #expect(summary.contains("frames presented") && summary.contains("90 decoded"))
        #expect(r.stdoutText.contains("; audio device null lost: Input/output error; video goes on with its own clock"))
    }
}

@Suite("scanout probe, audio only") struct AudioOnlyProbeTests {
    @Test func probeListsTheTracksOfAnAudioOnlyFile() throws {
        let r = try CLI.run(["probe", try Fixtures.path("audio_only.wav")])
        #expect(r.status == 0)
        #expect(r.stdoutText.contains("video:     none (audio only"))
        #expect(r.stdoutText.contains("audio:     #0 pcm_s16le, no language, 44100 Hz 1 ch (selected)"))
    }
}
