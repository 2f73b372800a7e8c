import ArgumentParser
import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio

/// The subtitle options of `render` and `play`: a sideband file, a track by index or language,
/// none, a delay and the safe margin.
struct SubtitleOptions: ParsableArguments {
    @Option(name: .customLong("sub-file"), help: ArgumentHelp("Subtitle file or URL (.srt, .vtt, .ass) shown over the video; its times count from the first picture.", valueName: "path-or-url"))
    var file: String?

    @Option(name: .customLong("sid"), help: "Embedded subtitle track to show, by stream index (see `scanout probe`).")
    var track: Int?

    @Option(name: .customLong("slang"), help: ArgumentHelp("Preferred subtitle languages, comma-separated (en,fre). Without --slang or --sid the track flagged default is shown, else a forced one.", valueName: "languages"))
    var languages: String?

    @Flag(name: .customLong("no-sub"), help: "Show no subtitles, not even forced ones.")
    var disabled = false

    @Option(name: .customLong("sub-delay"), help: "Seconds added to subtitle times (positive: later; earlier: --sub-delay=-0.2).")
    var delay: Double = 0

    @Option(name: .customLong("sub-margin"), help: ArgumentHelp("Safe margin kept free of subtitles on every side: below 1 a fraction of the output's size (0.05), else pixels (48).", valueName: "margin"))
    var margin: Double = 0

    func validate() throws {
        guard SubtitleMargin(margin) != nil else { throw ValidationError("--sub-margin: a fraction below 1 (0.05) or whole pixels (48), not \(margin)") }
        if disabled, file != nil || track != nil || languages != nil {
            throw ValidationError("--no-sub cannot be combined with --sub-file, --sid or --slang")
        }
        guard delay.isFinite else { throw ValidationError("--sub-delay: seconds, not \(delay)") }
    }

    /// Whether a file, track or language was named.
    var asked: Bool { file != nil || track != nil || languages != nil }

    var selection: SubtitleSelection {
        SubtitleSelection(file: file, track: track,
                          languages: (languages ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty },
                          enabled: !disabled, delay: delay, margin: SubtitleMargin(margin) ?? .fraction(0))
    }
}
