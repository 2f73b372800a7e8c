import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ScanoutRender

/// Where a player stands.
///
///     idle ──load──► preparing ──► ready ──play──► playing ⇄ paused
///                        │                          │  ▲
///                        ▼                          ▼  │
///                      error ◄── every item bad   buffering / seeking ──► back
///     playing ──end of the last item (repeat none)──► ended;  any ──stop──► stopped
public enum PlayerState: String, Sendable, CaseIterable {
    case idle, preparing, ready, playing, paused, buffering, seeking, ended, stopped, error
}

/// What happens at the end of an item.
public enum RepeatMode: String, Sendable, CaseIterable {
    /// Play the playlist once, then end.
    case none
    /// Play the current item again and again.
    case one
    /// Start the playlist again after its last item.
    case all
}

/// One entry of a playlist: a file path or URL, and how to show it.
public struct PlaylistItem: Equatable, Sendable {
    public var source: String
    /// Nil: the player's default scaling mode.
    public var scaling: ScalingMode?
    /// Extra clockwise rotation, degrees (0, 90, 180, 270), on top of the stream's own orientation.
    public var rotation: Int
    /// The decoder for this item; nil: the player's.
    public var playerType: PlayerType?
    /// The decoder the content suggests (a content token's `playerType` claim); the item's or
    /// the player's own choice wins over it, as the URL's `?playerType=` hint does.
    public var contentHint: PlayerType?
    /// The content token the item was authorised with, nil for none. The player does not read
    /// it; the output looks the item's policy up by it.
    public var token: String?
    /// Drawn over this item's frames; nil: the player's overlay (`PlayerConfiguration.overlay`).
    public var overlay: Overlay?
    /// This item's audio track (`--aid`/`--alang` per item); empty: the player's choice.
    public var audio = AudioSelection()
    /// This item's subtitles (a sideband file, a track, languages); nil: the player's
    /// (`PlayerConfiguration.subtitles`).
    public var subtitles: SubtitleSelection?
    /// Seconds a still image (PNG, JPEG, WebP...) is shown; nil: the player's
    /// (`PlayerConfiguration.imageDuration`). Ignored for video.
    public var duration: Double?

    public init(source: String, scaling: ScalingMode? = nil, rotation: Int = 0, playerType: PlayerType? = nil,
                contentHint: PlayerType? = nil, token: String? = nil, overlay: Overlay? = nil) {
        self.source = source
        self.scaling = scaling
        self.rotation = rotation
        self.playerType = playerType
        self.contentHint = contentHint
        self.token = token
        self.overlay = overlay
    }

    /// The stream's orientation followed by this item's rotation.
    public func orientation(stream: Orientation) -> Orientation {
        // Orientation = mirror^m ∘ rotate(a); rotate(r) ∘ mirror ∘ rotate(a) = mirror ∘ rotate(a − r).
        stream.mirrored ? Orientation(rotation: stream.rotation - rotation, mirrored: true)
                        : Orientation(rotation: stream.rotation + rotation)
    }
}

/// Why the service is not doing its job; empty when it is.
public struct ServiceReasons: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// Nothing to play: no playlist, or no item of it can be opened.
    public static let noSource = ServiceReasons(rawValue: 1)
    /// The current item fails to decode.
    public static let decodeFailing = ServiceReasons(rawValue: 2)
    /// The display refuses frames.
    public static let noOutput = ServiceReasons(rawValue: 4)
    /// A live source (UDP, RTP) sent nothing for longer than its timeout; playback goes on when
    /// packets come back.
    public static let sourceTimeout = ServiceReasons(rawValue: 8)
    /// The channel playing was withdrawn by its announcer (SAP delete, or no announcement within
    /// its timeout); playback stopped. Up again once something plays.
    public static let channelInvalid = ServiceReasons(rawValue: 16)

    public var names: [String] {
        var n: [String] = []
        if contains(.noSource) { n.append("noSource") }
        if contains(.decodeFailing) { n.append("decodeFailing") }
        if contains(.noOutput) { n.append("noOutput") }
        if contains(.sourceTimeout) { n.append("sourceTimeout") }
        if contains(.channelInvalid) { n.append("channelInvalid") }
        return n
    }
}

/// Settings of a player, changeable while it runs.
public struct PlayerConfiguration: Sendable, Equatable {
    /// The time between two `position` events while playing.
    public var positionInterval = Duration.seconds(1)
    /// A frame read slower than this counts as buffering.
    public var stallThreshold = Duration.milliseconds(500)
    /// Image (any format libavformat reads: PNG, JPEG) shown when nothing can be played.
    public var slate: String?
    /// Scaling for items that name none.
    public var scaling: ScalingMode = .fit
    /// Seconds a still image is shown when its item names no `duration`.
    public var imageDuration: Double = PlayerConfiguration.defaultImageDuration
    public static let defaultImageDuration = 5.0
    /// Drawn over the frames of items that name no overlay of their own, and over the slate.
    public var overlay: Overlay?
    /// The time between two attempts to play again when every item failed.
    public var retryInterval = Duration.seconds(5)
    /// Where sound goes (`none`: silent), its volume, and the audio track of items naming none.
    public var audio = AudioSettings()
    public var demuxer = DemuxerOptions()
    public var decoder = DecoderOptions()
    /// The buffer kept of live (UDP/RTP) inputs for pause and seeks behind the live edge.
    public var timeshift = TimeshiftOptions()
    /// Subtitles of items that choose none of their own: by default a forced track only.
    public var subtitles = SubtitleSelection()
    /// Frames are shown at their time (false: every frame as soon as it is decoded, nothing
    /// read ahead: `play --untimed`, and `--capture`, which the display paces).
    public var timed = true
    /// A live input that goes silent: `buffering` until its packets come back, the service down
    /// past its timeout (true: `serve`); false: the read waits its timeout and the item fails
    /// with it (`play`).
    public var waitsOutSilence = true
    public init() {}

    public static func == (a: Self, b: Self) -> Bool {
        a.positionInterval == b.positionInterval && a.stallThreshold == b.stallThreshold && a.slate == b.slate
            && a.scaling == b.scaling && a.imageDuration == b.imageDuration && a.overlay == b.overlay && a.retryInterval == b.retryInterval
            && a.demuxer.timeoutSeconds == b.demuxer.timeoutSeconds && a.demuxer.live == b.demuxer.live
            && a.demuxer.adaptive == b.demuxer.adaptive && a.demuxer.readAhead == b.demuxer.readAhead
            && a.decoder.threads == b.decoder.threads && a.timeshift == b.timeshift && a.subtitles == b.subtitles
            && a.timed == b.timed && a.waitsOutSilence == b.waitsOutSilence
    }
}
