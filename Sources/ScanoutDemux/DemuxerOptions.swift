import CFFmpeg
import ScanoutCore

/// How an input is opened.
public struct DemuxerOptions: Sendable {
    /// Longest wait for the source to answer: opening, probing, and each read. Network sources
    /// that stall past it fail with `MediaError.timedOut` instead of hanging.
    public var timeoutSeconds: Double = 10
    /// How `udp://` and `rtp://` inputs are received (`LiveInput`).
    public var live = LiveInputOptions()
    /// How the variants of an HLS master playlist are chosen (`AdaptiveHLS`).
    public var adaptive = AdaptiveOptions()
    /// Whether an input with no video (or only a cover picture) opens, reading its audio track
    /// (the player and `probe`: `StillDecoder` shows the cover or the slate). Off for the
    /// commands whose output is the video's frames (`framemd5`, `render`, `decode`): for them such
    /// an input has no video stream.
    public var acceptsAudioOnly = false
    /// The content key of a CENC-encrypted MP4 (the mov demuxer's `decryption_key`, one key for
    /// every track); nil: none. Redacted in every description.
    public var decryptionKey: ContentKey?
    /// One variant of an HLS master playlist read from start to end (`VariantPin`: the frame-exact
    /// commands); nil: the variants are chosen and changed as the throughput allows.
    public var variantPin: VariantPin?
    /// How the player reads a network input with an end ahead of playback (`PacketReadAhead`).
    public var readAhead = ReadAheadOptions()
    public init(timeoutSeconds: Double = 10, live: LiveInputOptions = LiveInputOptions(), adaptive: AdaptiveOptions = AdaptiveOptions()) {
        self.timeoutSeconds = timeoutSeconds
        self.live = live
        self.adaptive = adaptive
    }
}

/// Facts about the chosen video stream, read once at open.
public struct VideoStreamInfo: Sendable {
    /// How often the still picture of an audio-only input is shown again (`StillDecoder`):
    /// enough for positions and seeks, few renders.
    public static let stillFrameRate = Rational(4, 1)
    public var index: Int
    public var codecName: String
    public var codecLongName: String
    public var profile: String?
    public var width: Int
    public var height: Int
    public var pixelFormat: PixelFormat
    /// Units of every timestamp of this stream.
    public var timeBase: Rational
    /// The frame rate FFmpeg guesses (`av_guess_frame_rate`); invalid when unknown.
    public var frameRate: Rational
    /// First presentation timestamp in `timeBase`, nil when unknown.
    public var startTime: Int64?
    /// Duration in `timeBase`, nil when unknown.
    public var duration: Int64?
    /// Frame count the container states, nil when it states none.
    public var declaredFrameCount: Int?
    public var sampleAspectRatio: Rational
    public var orientation: Orientation
    public var colorSpace: ColorSpace
    public var colorRange: ColorRange
    public var bitRate: Int64
    public var colorPrimaries: ColorPrimaries = .unspecified
    public var colorTransfer: ColorTransfer = .unspecified
    /// The mastering display and the light levels the container states (HDR10's static
    /// metadata); nil when it states none.
    public var masteringDisplay: MasteringDisplay?
    public var contentLightLevel: ContentLightLevel?

    public var durationSeconds: Double? { duration.map { Double($0) * timeBase.doubleValue } }
}
