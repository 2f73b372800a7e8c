/// The player's audio settings: where sound goes, how loud, which track.
public struct AudioSettings: Sendable, Equatable {
    /// The ALSA PCM device (`default`, `hdmi:CARD=PCH,DEV=0`, `plughw:0,3`...); `none`: silent,
    /// no audio decoded.
    public var device: String
    /// 0...100, applied to the samples (`sample × volume / 100`).
    public var volume: Int
    public var muted: Bool
    /// The audio track every item plays unless it names its own (`AudioSelection`).
    public var selection: AudioSelection
    /// `audio-lost@N` of a fault plan: writes fail after N periods.
    public var failWritesAfter: Int?
    /// `audio-open@N` of a fault plan: the first N openings fail.
    public var failOpens: Int?

    public init(device: String = "none", volume: Int = 100, muted: Bool = false, selection: AudioSelection = AudioSelection(),
                failWritesAfter: Int? = nil, failOpens: Int? = nil) {
        self.device = device
        self.volume = volume
        self.muted = muted
        self.selection = selection
        self.failWritesAfter = failWritesAfter
        self.failOpens = failOpens
    }

    public var isSilent: Bool { device == "none" || device.isEmpty }
}

/// Which audio track to play: a stream index (`--aid`), else the first language of the list some
/// track has (`--alang`), else the track flagged default (`TrackSelector`).
public struct AudioSelection: Sendable, Equatable {
    public var track: Int?
    public var languages: [String]
    public init(track: Int? = nil, languages: [String] = []) {
        self.track = track
        self.languages = languages
    }
    public var isEmpty: Bool { track == nil && languages.isEmpty }
}
