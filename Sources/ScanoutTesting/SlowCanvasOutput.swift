import Foundation
import ScanoutCore
import ScanoutDecode
import ScanoutDisplay
import ScanoutRender

/// A composed screen's output that takes `presentTakes` to draw each canvas (it draws nothing):
/// a compositor slower than the refresh, for tests of a screen's pace.
///
/// `@unchecked Sendable`: `count` is read and written under `lock`; the screen presents on its
/// compositor thread and a test reads `presents` on its own.
public final class SlowCanvasOutput: CanvasOutput, @unchecked Sendable {
    public let presentTakes: Duration
    private let lock = NSLock()
    private var count = 0

    public init(presentTakes: Duration) {
        self.presentTakes = presentTakes
    }

    /// Canvases presented so far.
    public var presents: Int { lock.withLock { count } }

    public func present(_ canvas: Canvas, frames: [VideoFrame?]) throws {
        Thread.sleep(forTimeInterval: presentTakes.secondsValue)
        lock.withLock { count += 1 }
    }
}
