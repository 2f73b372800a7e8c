import ScanoutCore
import ScanoutDecode
import ScanoutDisplay

/// A display that times the one it wraps: seconds spent presenting since `seconds` was last reset.
final class TimedDisplay: Display {
    let inner: HeadlessDisplay
    var seconds = 0.0

    init(_ inner: HeadlessDisplay) { self.inner = inner }

    var description: String { inner.description }
    var vblankSource: (any VBlankSource)? { inner.vblankSource }
    var acceptsGPUFrames: Bool { inner.acceptsGPUFrames }
    func countTransfers(in transfers: FrameTransfers?) { inner.countTransfers(in: transfers) }
    /// Not timed: it readies the renderer before a timeline starts, it presents nothing.
    func warmUp(for frame: VideoFrame, layout: FrameLayout) { inner.warmUp(for: frame, layout: layout) }

    func present(_ frame: VideoFrame, orientation: Orientation) throws {
        let t = monotonicSeconds()
        defer { seconds += monotonicSeconds() - t }
        try inner.present(frame, orientation: orientation)
    }

    func present(_ frame: VideoFrame, layout: FrameLayout) throws {
        let t = monotonicSeconds()
        defer { seconds += monotonicSeconds() - t }
        try inner.present(frame, layout: layout)
    }
}
