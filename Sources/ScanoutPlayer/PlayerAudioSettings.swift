import ScanoutCore
import ScanoutAudio

/// The player's audio settings: where sound goes, how loud, which track.
public struct AudioSettings: Sendable, Equatable {
    /// The ALSA PCM device (`default`, `hdmi:CARD=PCH,DEV=0`, `plughw:0,3`...), or the name a
    /// test's `sinkFactory` opens; `none`: silent, no audio decoded.
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
    /// How `device` is opened, and the clock it is heard by: ALSA (`AudioSinkFactory.alsa`) unless
    /// a test plays to fake sinks (`ScanoutTesting.FakeAudioSinks`). Both fault settings above
    /// apply whatever the factory: the player counts the openings, the output the writes.
    ///
    /// Part of `==`: the settings stay a plain value, Sendable and Equatable, because the factory
    /// is compared by its `id` (closures cannot be compared; `AudioSinkFactory` says why that is
    /// enough).
    public var sinkFactory: AudioSinkFactory

    public init(device: String = "none", volume: Int = 100, muted: Bool = false, selection: AudioSelection = AudioSelection(),
                failWritesAfter: Int? = nil, failOpens: Int? = nil, sinkFactory: AudioSinkFactory = .alsa) {
        self.device = device
        self.volume = volume
        self.muted = muted
        self.selection = selection
        self.failWritesAfter = failWritesAfter
        self.failOpens = failOpens
        self.sinkFactory = sinkFactory
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
