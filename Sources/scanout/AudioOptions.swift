import Foundation
import ArgumentParser
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
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
    @Option(help: ArgumentHelp("An audio-only input: the picture shown while it plays (default: its cover art, else black).", valueName: "image"))
    var still: String?
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

/// The player's events that `play` prints, one stderr line each: the sound's device lost and
/// back, and warnings. (Errors end the run and are printed once, as its exit status says.)
func reportPlayerEvent(_ event: PlayerEvent) {
    switch event {
    case let .audioLost(device, reason): StandardError.write("scanout: audioLost device=\(device) reason=\(reason)\n")
    case let .audioRestored(device): StandardError.write("scanout: audioRestored device=\(device)\n")
    case let .warning(message): StandardError.write("scanout: warning: \(message)\n")
    default: break
    }
}

/// `audio: track 2 (mp3, ger) on null: 144000 frames played, 0 underruns, 0 chunks dropped`; nil when silent.
func audioSummary(_ sound: PlayerAudio) -> String? {
    guard let s = sound.status else { return nil }
    let track = sound.track.map { "track \($0.index) (\($0.codecName)\($0.language.map { ", " + $0 } ?? ""))" } ?? "no track"
    return "audio: \(track) on \(s.device) as \(s.format) (buffer \(s.bufferFrames), period \(s.periodFrames) frames): \(s.framesPlayed) frames played, \(s.underruns) underruns, \(s.chunksDropped) chunks dropped"
        + (s.loss.map { "; \($0)" } ?? "")
}
