import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio

/// An item that failed (or something beside the items: `item` nil), as its `error` event said.
public struct ItemFailure: Equatable, Sendable {
    public var item: Int?
    /// The item's source, nil when `item` is.
    public var source: String?
    public var message: String
    /// Whether the player moved on to another item by itself.
    public var skipped: Bool
}

/// The audio device being played to, and what it did so far.
public struct AudioOutputStatus: Sendable, Equatable {
    public var device: String
    /// The format the device took.
    public var format: AudioFormat
    /// The device's ring buffer and period, frames.
    public var bufferFrames: Int
    public var periodFrames: Int
    public var framesPlayed: Int
    /// Underruns recovered: the device ran dry (the writing thread did not get the CPU in time).
    public var underruns: Int
    /// Chunks dropped because the queue was full.
    public var chunksDropped: Int
    /// Why the device stopped, once it has.
    public var loss: String?
}

/// How the current item's source is buffered, and what a late source costs.
public struct BufferStatus: Sendable, Equatable {
    public enum Policy: String, Sendable {
        /// A network source with an end, read ahead: when it runs dry the clock pauses
        /// (`buffering`) until enough is held again; no frame is dropped for it.
        case pause
        /// A live source: it cannot be waited for; a late frame moves the timeline back to it
        /// (`liveSlips`), and a silent source is `buffering` until packets come back.
        case slip
        /// A local file: read at disk speed, as the decoder asks.
        case direct
    }
    public var policy: Policy
    /// What the read-ahead holds (`pause` only).
    public var level: BufferLevel?
    /// Waits for the read-ahead so far, and their length in all, seconds.
    public var waits = 0
    public var waitSeconds = 0.0
    /// Frames late because a read waited for the network, shown with the timeline moved back.
    public var networkLateFrames = 0
    public init(policy: Policy) { self.policy = policy }
}

/// A copy of where the player stands, readable from any thread.
public struct PlayerSnapshot: Sendable {
    public var state: PlayerState = .idle
    /// How the current item's source is buffered; nil with no item.
    public var buffer: BufferStatus?
    public var playlist: [PlaylistItem] = []
    public var index: Int?
    public var position: Double = 0
    public var duration: Double?
    public var rate: Double = 1
    public var repeatMode: RepeatMode = .none
    public var output = ""
    /// Whether the screens are on (`setDisplayPower`).
    public var displayOn = true
    /// How each output shows the content's colour (`PlayerEngine.outputColours`).
    public var outputColours: [String: String] = [:]
    public var reasons: ServiceReasons = [.noSource]
    public var framesDecoded = 0
    public var framesPresented = 0
    public var framesDropped = 0
    /// Live inputs: late frames shown with the timeline moved back to them, and the delay added.
    public var liveSlips = 0
    public var liveSlipSeconds = 0.0
    public var bytesRead = 0
    public var decodeErrors = 0
    /// The latest pacing deviations (`PlaybackStats.pacingDeviations`), unsorted: the
    /// percentiles are worked out by whoever reads them, not on the playback thread, where
    /// sorting thousands of figures four times a second made frames late on a slow CPU.
    public var pacingDeviations: [Duration] = []
    public var pacingP50Ms: Double { PlaybackStats.percentile(50, of: pacingDeviations) }
    public var pacingP99Ms: Double { PlaybackStats.percentile(99, of: pacingDeviations) }
    public var decodeMsPerFrame = 0.0
    public var presentMsPerFrame = 0.0
    public var itemsFailed = 0
    /// The latest failure reported; nil before any.
    public var lastFailure: ItemFailure?
    /// Frames drawn censored, by output name.
    public var framesCensored: [String: Int] = [:]
    /// Copies of decoded pictures between CPU and GPU memory, and the ones that stayed on the GPU.
    public var transfers = TransferCounts()
    /// What playback waits for while `buffering`; nil otherwise.
    public var bufferingReason: String?
    /// Whether the current item is a live input (udp://, rtp://).
    public var live = false
    /// Its timeshift buffer and the position in it; nil for other items.
    public var timeshift: TimeshiftStatus?
    /// Transport-stream counts of each live input (by source) since the service started.
    public var transport: [String: TSCounts] = [:]
    /// The current item's variant choice when it is an adaptive HLS stream; nil otherwise.
    public var adaptive: AdaptiveStatus?
    /// The current item's tracks (video, audio, subtitles); empty with no item.
    public var tracks: [TrackInfo] = []
    /// The current item's video stream as opened (its colour: matrix, range, primaries,
    /// transfer, HDR10's static metadata); nil with no item.
    public var video: VideoStreamInfo?
    /// Stream indices of the tracks playing now (the subtitle track shown, the audio played).
    public var selectedTracks: Set<Int> = []
    /// The current item's subtitles; nil with no item.
    public var subtitles: SubtitleStatus?
    /// The audio device and its counts; nil while none is open.
    public var audioOutput: AudioOutputStatus?
    public init() {}
}
