import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutRender

/// One zone of a composed screen, as the player of that zone sees it: a `Display` whose
/// `present` keeps the frame (a reference, `VideoFrame.clone()`) and its layout for the screen to
/// compose at its next refresh (`CanvasScreen.compose`). A zone's player paces itself on the
/// screen's vblanks (`vblankSource`) and counts its own drops; a zone whose next frame is late
/// keeps its last one on the screen and holds no other zone back.
///
/// `@unchecked Sendable`: the zone's player presents on its own thread and the screen takes the
/// frame on the compositor's; every field they share is read and written under `lock`.
public final class ZoneSurface: Display, @unchecked Sendable {
    /// What the screen composes for this zone.
    public struct Shown {
        public var frame: VideoFrame?
        public var layout: FrameLayout
        public var overlay: Overlay?
        public var subtitles: SubtitleRenderer?
        /// Frames presented into the zone so far.
        public var presented: Int
        /// A look at the last frame's luma (nil for a frame in GPU memory or an RGB one), for
        /// the zone's picture watch (black, frozen).
        public var sample: PictureSample?
    }

    public let name: String
    private let lock = NSLock()
    private var shown = Shown(frame: nil, layout: FrameLayout(), overlay: nil, subtitles: nil, presented: 0, sample: nil)
    /// The screen's refresh, which the zone's player aims its frames at.
    public weak var vblankSource: (any VBlankSource)?
    public let acceptsGPUFrames: Bool
    private var transfers: FrameTransfers?

    public init(name: String, vblankSource: (any VBlankSource)? = nil, acceptsGPUFrames: Bool = false) {
        self.name = name
        self.vblankSource = vblankSource
        self.acceptsGPUFrames = acceptsGPUFrames
    }

    public var description: String { "zone \(name)" }

    public func present(_ frame: VideoFrame, orientation: Orientation) throws {
        try present(frame, layout: FrameLayout(orientation: orientation))
    }

    public func present(_ frame: VideoFrame, layout: FrameLayout) throws {
        let kept = frame.clone()
        let sample = frame.pictureSample()
        lock.withLock {
            shown.frame = kept
            shown.sample = sample
            shown.layout = layout
            shown.presented += 1
        }
    }

    public var overlay: Overlay? {
        get { lock.withLock { shown.overlay } }
        set { lock.withLock { shown.overlay = newValue } }
    }

    public var subtitles: SubtitleRenderer? {
        get { lock.withLock { shown.subtitles } }
        set { lock.withLock { shown.subtitles = newValue } }
    }

    public func countTransfers(in transfers: FrameTransfers?) { lock.withLock { self.transfers = transfers } }

    /// The zone as it is now: its last frame (nil before the first), layout and layers.
    public func current() -> Shown { lock.withLock { shown } }

    /// Forgets the frame shown (the zone's item stopped): the zone shows its background.
    public func clear() { lock.withLock { shown.frame = nil } }
}
