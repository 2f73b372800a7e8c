import ScanoutMedia
import ScanoutRender

/// Somewhere frames are shown: a KMS screen, or nothing physical at all (headless).
///
/// `present` is called from the playback loop's thread only, once per frame that is due.
public protocol Display: AnyObject {
    /// What this output is, for logs and summaries ("headless 1920x1080").
    var description: String { get }
    /// Shows `frame`, turned by `orientation`, now.
    func present(_ frame: VideoFrame, orientation: Orientation) throws
}

/// The output for machines with no screen: each presented frame is composited into an RGB
/// framebuffer with the CPU renderer (the same work a screen would need, so that timings and
/// drops are honest), and the last one is kept for snapshots.
public final class HeadlessDisplay: Display {
    private let renderer = CPURenderer()
    private var framebuffer = RGBImage(width: 0, height: 0, bytes: [])
    public private(set) var framesPresented = 0
    /// The last picture shown.
    public var lastImage: RGBImage? { framesPresented > 0 ? framebuffer : nil }

    public init() {}

    public var description: String {
        if framesPresented > 0 { return "headless \(framebuffer.width)x\(framebuffer.height)" }
        return "headless"
    }

    public func present(_ frame: VideoFrame, orientation: Orientation) throws {
        // The framebuffer's storage is reused frame after frame.
        try renderer.render(frame, orientation: orientation, into: &framebuffer)
        framesPresented += 1
    }
}
