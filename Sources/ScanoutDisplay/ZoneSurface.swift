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
/// frame on the compositor's; every field they share is read and written under `lock` (the GPU
/// sampling state is the presenting thread's alone).
public final class ZoneSurface: Display, @unchecked Sendable {
    /// What the screen composes for this zone.
    public struct Shown {
        public var frame: VideoFrame?
        public var layout: FrameLayout
        public var overlay: Overlay?
        public var subtitles: SubtitleRenderer?
        /// Frames presented into the zone so far.
        public var presented: Int
        /// A look at the last frame's luma (for frames in GPU memory, the last one downloaded
        /// for it; nil for an RGB picture), for the zone's picture watch (black, frozen).
        public var sample: PictureSample?
    }

    public let name: String
    private let lock = NSLock()
    private var shown = Shown(frame: nil, layout: FrameLayout(), overlay: nil, subtitles: nil, presented: 0, sample: nil)
    /// The screen's refresh, which the zone's player aims its frames at.
    public weak var vblankSource: (any VBlankSource)?
    public let acceptsGPUFrames: Bool
    private var transfers: FrameTransfers?

    /// How often a frame in GPU memory is downloaded for the picture watch.
    public let gpuSampleInterval: Duration
    private let clock: any PlaybackClock
    /// Read and written by the presenting thread only.
    private var lastGPUSample: ClockTime?
    /// Frames in GPU memory downloaded for their sample so far (presenting thread).
    public private(set) var gpuSamples = 0

    public init(name: String, vblankSource: (any VBlankSource)? = nil, acceptsGPUFrames: Bool = false,
                gpuSampleInterval: Duration = .milliseconds(250), clock: any PlaybackClock = MonotonicClock()) {
        self.name = name
        self.vblankSource = vblankSource
        self.acceptsGPUFrames = acceptsGPUFrames
        self.gpuSampleInterval = gpuSampleInterval
        self.clock = clock
    }

    public var description: String { "zone \(name)" }

    public func present(_ frame: VideoFrame, orientation: Orientation) throws {
        try present(frame, layout: FrameLayout(orientation: orientation))
    }

    public func present(_ frame: VideoFrame, layout: FrameLayout) throws {
        let kept = frame.clone()
        let sample = gpuSample(of: frame) ?? frame.pictureSample()
        lock.withLock {
            shown.frame = kept
            // A frame in GPU memory between two downloads keeps the last sample.
            if sample != nil || !frame.isGPUOnly { shown.sample = sample }
            shown.layout = layout
            shown.presented += 1
        }
    }

    /// For a frame only in GPU memory (a hardware zone drawn by GLES), its sample from a copy
    /// downloaded at most every `gpuSampleInterval`: the picture watch looks twice a second, so
    /// four downloads a second keep what it sees under a quarter of a second old. Taken before
    /// the frame is handed to the screen, so that no other thread is using its surface. nil for
    /// a frame with planes, and between downloads.
    private func gpuSample(of frame: VideoFrame) -> PictureSample? {
        guard frame.isGPUOnly else { return nil }
        let now = clock.now()
        if let last = lastGPUSample, now - last < gpuSampleInterval { return nil }
        lastGPUSample = now
        let copy = frame.clone()
        guard (try? copy.makeCPUResident()) != nil else { return nil }
        gpuSamples += 1
        return copy.pictureSample()
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
