import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio

/// One track as `probe` reports it; `selected` is what playback picks with no preference given
/// (the default audio track, a forced subtitle track).
struct ProbeTrack: Codable {
    var index: Int
    var kind: String
    var codec: String
    var language: String?
    var title: String?
    var `default`: Bool
    var forced: Bool
    var selected: Bool
    /// Audio only: samples per second and channels.
    var sampleRate: Int?
    var channels: Int?

    static func list(_ tracks: [TrackInfo]) -> [ProbeTrack] {
        let picked = [TrackSelector.pick(.audio, from: tracks)?.index, TrackSelector.pick(.subtitle, from: tracks)?.index]
        return tracks.map { t in
            ProbeTrack(index: t.index, kind: t.kind.rawValue, codec: t.codecName, language: t.language, title: t.title,
                       default: t.isDefault, forced: t.isForced, selected: t.kind == .video || picked.contains(t.index),
                       sampleRate: t.kind == .audio ? t.sampleRate : nil, channels: t.kind == .audio ? t.channels : nil)
        }
    }

    /// `  audio:     #1 aac, eng, 48000 Hz 2 ch, "Deutsch" (default, selected)`
    var line: String {
        var parts = ["#\(index) \(codec)", language ?? "no language"]
        if let sampleRate, let channels { parts.append("\(sampleRate) Hz \(channels) ch") }
        if let title { parts.append("\"\(title)\"") }
        let flags = [(`default`, "default"), (forced, "forced"), (selected, "selected")].filter(\.0).map(\.1)
        let label = kind == "subtitle" ? "subtitle:" : "\(kind):"
        return "  \(label.padding(toLength: 11, withPad: " ", startingAt: 0))\(parts.joined(separator: ", "))\(flags.isEmpty ? "" : " (\(flags.joined(separator: ", ")))")"
    }
}
