import Foundation
import ArgumentParser
import ScanoutMedia
import ScanoutPlayer
import ScanoutDisplay

/// The sound options of `play`: the ALSA device, the volume, the audio track.
struct AudioOptions: ParsableArguments {
    @Option(help: "ALSA PCM device for the sound (default, hdmi:CARD=PCH,DEV=0, plughw:0,3...; `scanout probe` lists them); none: silent.")
    var audioDevice: String = "none"
    @Option(help: "Audio track by language, in order of preference (comma-separated: de,en).")
    var alang: String?
    @Option(help: "Audio track by stream index (`scanout probe` lists the tracks); wins over --alang.")
    var aid: Int?
    @Option(help: "Volume 0...100, applied to the samples.")
    var volume: Int = 100
    @Flag(help: "Start muted.")
    var mute = false
    @Option(help: ArgumentHelp("Write one line per frame shown: its media time (s) and the CLOCK_MONOTONIC ns it was presented at: on KMS the vblank of its page flip, else just after the display took it (lip-sync measurements).", valueName: "file"))
    var presentLog: String?

    func validate() throws {
        guard (0...100).contains(volume) else { throw ValidationError("--volume: 0...100, not \(volume)") }
    }

    /// The settings as the player takes them; `audio-lost@N` of `SCANOUT_FAULTS` included.
    func settings() throws -> AudioSettings {
        let faults = try FaultPlan.fromEnvironment(ProcessInfo.processInfo.environment)
        return AudioSettings(device: audioDevice, volume: volume, muted: mute,
                      selection: AudioSelection(track: aid, languages: languageList(alang)),
                      failWritesAfter: faults.audioLostAt, failOpens: faults.audioOpenFailures)
    }
}

/// `de, en` → ["de", "en"].
func languageList(_ text: String?) -> [String] {
    (text ?? "").split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
}

/// The audio events of `play`, one stderr line each.
func reportAudio(_ event: PlayerEvent) {
    switch event {
    case let .audioLost(device, reason): StandardError.write("scanout: audioLost device=\(device) reason=\(reason)\n")
    case let .audioRestored(device): StandardError.write("scanout: audioRestored device=\(device)\n")
    case let .warning(message): StandardError.write("scanout: warning: \(message)\n")
    default: break
    }
}

/// `audio: track 2 (mp3, ger) on null: 144000 frames played, 0 underruns, 0 chunks dropped`; nil when silent.
func audioSummary(_ sound: PlayerAudio) -> String? {
    guard let output = sound.output else { return nil }
    let c = output.counts
    let track = sound.track.map { "track \($0.index) (\($0.codecName)\($0.language.map { ", " + $0 } ?? ""))" } ?? "no track"
    return "audio: \(track) on \(output.deviceName) as \(output.format) (buffer \(output.deviceBuffer.frames), period \(output.deviceBuffer.period) frames): \(c.framesPlayed) frames played, \(c.underruns) underruns, \(c.dropped) chunks dropped"
        + (output.loss.map { "; \($0)" } ?? "")
}

/// The lines of `--present-log`: `media_seconds monotonic_ns`, one per frame shown. On a KMS screen
/// the time is the vblank timestamp of the frame's page-flip event (when it reached the screen);
/// elsewhere the CLOCK_MONOTONIC ns just after the display took the frame.
final class PresentLog {
    private let file: UnsafeMutablePointer<FILE>
    private var frames = 0
    /// KMS: media times of frames committed whose flip has not been paired yet, and flip times
    /// not paired yet (each commit ends in exactly one flip of the first output's CRTC).
    private var committed: [Double] = []
    private var flips: [UInt64] = []
    private var crtc: UInt32?
    private let kms: KMSDisplay?

    init(path: String, kms: KMSDisplay? = nil) throws {
        guard let f = fopen(path, "w") else { throw ValidationError("--present-log: cannot write \(path)") }
        file = f
        self.kms = kms
        kms?.onFlip = { [weak self] crtc, ns in self?.flipped(crtc: crtc, at: ns) }
    }

    deinit {
        kms?.onFlip = nil
        fclose(file)
    }

    /// Notes the frame the session shows now, once per frame (called after each step).
    func note(_ session: PlaybackSession) {
        let shown = session.currentStats().framesPresented
        guard shown != frames else { return }
        defer { frames = shown }
        guard kms != nil else {
            fputs("\(session.position) \(monotonicNanoseconds())\n", file)
            return
        }
        // One entry per commit keeps commits and flips in step even if a step showed two frames.
        committed += Array(repeating: session.position, count: max(1, shown - frames))
        pair()
    }

    private func flipped(crtc: UInt32, at ns: UInt64) {
        if self.crtc == nil { self.crtc = crtc }
        guard crtc == self.crtc else { return }
        flips.append(ns)
        pair()
    }

    private func pair() {
        let n = min(committed.count, flips.count)
        guard n > 0 else { return }
        for i in 0..<n { fputs("\(committed[i]) \(flips[i])\n", file) }
        committed.removeFirst(n)
        flips.removeFirst(n)
    }
}
