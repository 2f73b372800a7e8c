import ScanoutCore
import ScanoutDemux

/// Which subtitles an item shows, as a viewer asks (mpv's `--sub-file`, `--sid`, `--slang`):
/// a sideband file or URL first; else the embedded track with index `track`; else the first
/// track of a preferred language; else the track flagged default; else a forced track, as mpv
/// chooses (`TrackSelector`). Shared by `play`,
/// `render` and the service's playlist items.
public struct SubtitleSelection: Sendable, Hashable {
    /// A `.srt`/`.vtt`/`.ass` file or URL beside the item; its times count from the item's first
    /// picture (the video stream's start time).
    public var file: String?
    /// An embedded subtitle track, by stream index.
    public var track: Int?
    /// Preferred languages, first first (`en`, `fre`, `pt-BR`).
    public var languages: [String]
    /// False: no subtitles at all (not even forced ones).
    public var enabled: Bool
    /// Seconds added to every event's times (positive: shown later).
    public var delay: Double
    /// The safe margin the text keeps from the output's edges.
    public var margin: SubtitleMargin

    public init(file: String? = nil, track: Int? = nil, languages: [String] = [], enabled: Bool = true, delay: Double = 0,
                margin: SubtitleMargin = .fraction(0)) {
        self.file = file; self.track = track; self.languages = languages; self.enabled = enabled; self.delay = delay
        self.margin = margin
    }

    /// The selection of an item that names its own file, track or languages (`item`) over the
    /// player's (`self`): the item's choice of text, the player's on/off, delay and margin.
    public func overridden(by item: SubtitleSelection?) -> SubtitleSelection {
        guard let item else { return self }
        var s = self
        s.file = item.file; s.track = item.track; s.languages = item.languages
        s.enabled = enabled && item.enabled
        if item.delay != 0 { s.delay = item.delay }
        return s
    }

    /// The embedded track this selection picks from `tracks`; nil when it picks none or a file.
    public func embeddedTrack(in tracks: [TrackInfo]) -> TrackInfo? {
        guard enabled, file == nil else { return nil }
        return TrackSelector.pick(.subtitle, from: tracks, index: track, languages: languages)
    }

    /// The whole script this selection shows for `input` (whose tracks are `tracks` and whose
    /// video starts at `videoStart` seconds), read at once: a sideband file shifted onto the
    /// video's clock, or an embedded track read in a pass of its own; nil for none. Event times
    /// are media times of the input; `delay` is not applied.
    public func script(input: String, tracks: [TrackInfo], videoStart: Double, timeoutSeconds: Double = 10) throws -> SubtitleScript? {
        guard enabled else { return nil }
        if let file {
            var script = try SubtitleFile.read(file, timeoutSeconds: timeoutSeconds)
            for i in script.events.indices { script.events[i].start += videoStart }
            return script
        }
        if let track, !tracks.contains(where: { $0.index == track && $0.kind == .subtitle }) {
            throw MediaError.openFailed(input: input, reason: "stream \(track) is not a subtitle track (see `scanout probe`)")
        }
        guard let chosen = embeddedTrack(in: tracks) else { return nil }
        return try SubtitleFile.read(input, track: chosen.index, timeoutSeconds: timeoutSeconds)
    }
}

/// The safe margin subtitles keep from every edge of the output (overscan on televisions):
/// a fraction of the output's size (`0.05`: 5 % of the width on the left and right, 5 % of the
/// height at the top and bottom), or a number of pixels on every side. Written as a number:
/// below 1 a fraction, from 1 on whole pixels (`--sub-margin`, `subtitles.safeMargin`).
public enum SubtitleMargin: Sendable, Hashable, ExpressibleByFloatLiteral, CustomStringConvertible {
    case fraction(Double)
    case pixels(Int)

    public init(floatLiteral value: Double) { self = .fraction(value) }

    /// `value` as the command line and the config write it; nil for a negative, fractional
    /// (above 1) or non-finite number.
    public init?(_ value: Double) {
        guard value.isFinite, value >= 0 else { return nil }
        if value < 1 { self = .fraction(value); return }
        guard value == value.rounded(), value <= 4096 else { return nil }
        self = .pixels(Int(value))
    }

    /// The margins in pixels (left and right, top and bottom) on a `width`×`height` output.
    public func pixels(width: Int, height: Int) -> (x: Int, y: Int) {
        switch self {
        case .fraction(let f): return (Int((Double(width) * f).rounded()), Int((Double(height) * f).rounded()))
        case .pixels(let p): return (p, p)
        }
    }

    /// As the config and `GET /config` write it.
    public var number: Double {
        switch self {
        case .fraction(let f): return f
        case .pixels(let p): return Double(p)
        }
    }

    public var description: String { "\(number)" }
}
