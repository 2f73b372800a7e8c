import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutRender

/// Somewhere frames are shown: a KMS screen, or nothing physical at all (headless).
///
/// `present` is called from the playback loop's thread only, once per frame that is due. The frame
/// is reused by the loop once `present` returns: a display that shows it longer (a KMS plane
/// scanning it out) keeps its own reference (`VideoFrame.clone()`).
public protocol Display: AnyObject {
    /// What this output is, for logs and summaries ("headless 1920x1080").
    var description: String { get }
    /// Shows `frame`, turned by `orientation`, now.
    func present(_ frame: VideoFrame, orientation: Orientation) throws
    /// Shows `frame` laid out by `layout` (orientation and scaling mode), now. Displays that do not
    /// scale get the default, which ignores the scaling mode.
    func present(_ frame: VideoFrame, layout: FrameLayout) throws
    /// Where the display's vblank timestamps come from, when it has any (a KMS screen's page-flip
    /// events). Nil: the display has no refresh of its own, and frames are timed by the clock alone.
    var vblankSource: (any VBlankSource)? { get }
    /// Whether hardware frames may come in GPU memory only (`FrameDestination.gpu`): the display
    /// puts them on a plane or draws them on the GPU, and downloads them only when it must.
    var acceptsGPUFrames: Bool { get }
    /// Counts the display's uploads of decoded pictures (and GPU copies and imports) in
    /// `transfers`, the pipeline's counter.
    func countTransfers(in transfers: FrameTransfers?)
    /// The image drawn over every frame from the next one on (a logo, a watermark); nil: none.
    /// Displays that draw no overlay (test doubles) keep the default, which holds none.
    var overlay: Overlay? { get set }
    /// The current item's subtitles, drawn over every frame at its time; nil: none. Displays that
    /// draw no overlay (test doubles) keep the default, which holds none.
    var subtitles: SubtitleRenderer? { get set }
    /// Gets ready to draw frames like `frame` laid out by `layout`, without showing anything:
    /// called before the first frame of a timeline is aimed, so that the cost of a renderer's
    /// first draw of a kind of frame does not make that frame late. The default does nothing.
    func warmUp(for frame: VideoFrame, layout: FrameLayout)
    /// What is on the output now, as drawn (overlay and subtitles included); nil when nothing
    /// has been shown, or the output cannot be read back. Called on the playback loop's thread.
    /// The default reads nothing.
    func snapshot() throws -> RGBImage?
    /// Switches the screens off (DPMS off: nothing is shown, nothing may be presented until they
    /// are on again) or back on. The default (no screen) only keeps nothing to do.
    func setPower(on: Bool) throws
}

extension Display {
    public var acceptsGPUFrames: Bool { false }
    public func countTransfers(in transfers: FrameTransfers?) {}
    public func warmUp(for frame: VideoFrame, layout: FrameLayout) {}
    public func snapshot() throws -> RGBImage? { nil }
    public func setPower(on: Bool) throws {}
    public var overlay: Overlay? {
        get { nil }
        set {}
    }
    public var subtitles: SubtitleRenderer? {
        get { nil }
        set {}
    }

    /// `options` for decoding into this display: hardware frames stay in GPU memory when it takes
    /// them so, and its uploads go into the same counter as the decoder's downloads (`options`'
    /// own, or a new one). What `play` and the player engine both assemble.
    public func decoding(_ options: DecoderOptions) -> DecoderOptions {
        var o = options
        if acceptsGPUFrames { o.destination = .gpu }
        let transfers = o.transfers ?? FrameTransfers()
        o.transfers = transfers
        countTransfers(in: transfers)
        return o
    }

    public func present(_ frame: VideoFrame, layout: FrameLayout) throws {
        try present(frame, orientation: layout.orientation)
    }
    public var vblankSource: (any VBlankSource)? { nil }
}

/// A kind of frame a renderer gets ready for (`Display.warmUp`): its first draw of one makes
/// its state for it.
struct WarmKind: Equatable {
    var width: Int, height: Int, format: Int32
    var layout: FrameLayout
    init(_ frame: VideoFrame, _ layout: FrameLayout) {
        (width, height, format) = (frame.width, frame.height, frame.pixelFormat.rawValue)
        self.layout = layout
    }
}

/// How one frame is laid out on the output.
public struct FrameLayout: Equatable, Sendable {
    public var orientation: Orientation
    public var scaling: ScalingMode
    public init(orientation: Orientation = .identity, scaling: ScalingMode = .fit) {
        self.orientation = orientation
        self.scaling = scaling
    }
}

/// The refresh timing of a display: the timestamp of its latest vblank (from the kernel's
/// page-flip event) and the refresh period. Read on the playback loop's thread.
public protocol VBlankSource: AnyObject {
    /// The time between two vblanks.
    var refreshInterval: Duration { get }
    /// The monotonic clock's time of the most recent vblank seen, nil before the first one.
    var lastVBlank: ClockTime? { get }
    /// How long a present takes from its call to its commit (the draw): an estimate from the
    /// presents so far, not counting waits for an earlier flip; zero when unknown.
    var commitLead: Duration { get }
    /// Whether a present can be started early and its commit held until a time
    /// (`holdNextCommit`).
    var holdsCommits: Bool { get }
    /// The next present draws at once and commits no sooner than `time`.
    func holdNextCommit(until time: ClockTime)
}

extension VBlankSource {
    /// The vblank nearest to `time`, extrapolated from the last one seen by whole refresh periods;
    /// nil when no vblank has been seen yet.
    public func vblank(nearest time: ClockTime) -> ClockTime? { VBlankGrid(self).vblank(nearest: time) }

    /// The first vblank after `time`: where a flip committed at `time` reaches the screen (a
    /// non-blocking atomic commit latches at the next vblank); nil before the first vblank.
    public func vblank(after time: ClockTime) -> ClockTime? { VBlankGrid(self).vblank(after: time) }

    public var commitLead: Duration { .zero }
    public var holdsCommits: Bool { false }
    public func holdNextCommit(until time: ClockTime) {}

    /// When to start presenting a frame meant for the vblank at `slot`, so that its commit comes
    /// halfway through the refresh before it. A flip latches at the first vblank after its
    /// commit, so a frame presented at its own vblank would be seen a refresh late (later still
    /// when the draw is slow); aiming the commit at mid-refresh, with the draw's time
    /// (`commitLead`) taken off, leaves half a refresh of slack either way for the draw's
    /// jitter and for the extrapolated vblank times.
    public func presentTime(for slot: ClockTime) -> ClockTime { VBlankGrid(self).presentTime(for: slot) }
}
