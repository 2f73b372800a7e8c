/// Which subtitles an item shows, as a viewer asks (mpv's `--sub-file`, `--sid`, `--slang`):
/// a sideband file or URL first; else the embedded track with index `track`; else the first
/// track of a preferred language; else a forced track (`TrackSelector`). Shared by `play`,
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

    public init(file: String? = nil, track: Int? = nil, languages: [String] = [], enabled: Bool = true, delay: Double = 0) {
        self.file = file; self.track = track; self.languages = languages; self.enabled = enabled; self.delay = delay
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
