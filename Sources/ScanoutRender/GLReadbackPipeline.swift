import CEGL
import ScanoutCore
import ScanoutDemux
import ScanoutDecode

/// Reads a `GLRenderer`'s frames back without waiting on each: frame N is drawn and its readback
/// into pixel pack buffer N mod `depth` started (`glReadPixels` into the buffer, then a fence),
/// and the frame submitted `depth - 1` frames before it is handed out once its fence signals
/// (the buffer mapped, packed into rgb24). Meanwhile the caller decodes the next frame, so the
/// GPU's drawing and copying overlap the CPU's work instead of stalling it.
///
/// Frames come back in submission order with the `Tag` they were submitted with, and each image
/// is byte-identical to `GLRenderer.render`'s for the same frame (the same drawing, the same
/// RGBA8 read). `finish()` hands out the frames still in flight at the end of a stream.
///
/// On a GLES 2 context (no pixel pack buffers or fences; `GLRenderer.dialect == .es100`) each
/// frame is read back synchronously as `GLRenderer.render` does, and handed out by the `submit`
/// that drew it: the same frames, in the same order. So it is with `depth` 0 on any context (to
/// compare the two); `depth` 1 reads back through the buffer but waits at once.
///
/// One thread, like the renderer and its context; not Sendable. The buffers and fences are
/// released with the pipeline (`deinit`), on that thread.
public final class GLReadbackPipeline<Tag> {
    /// A frame read back: the tag it was submitted with, and its picture.
    public struct Finished {
        public var tag: Tag
        public var image: RGBImage
    }

    public let renderer: GLRenderer
    /// Pixel buffers in the ring: at most `depth - 1` frames wait between calls (0: none, every
    /// frame read back as drawn).
    public let depth: Int
    /// Whether the readback is asynchronous (GLES 3), rather than each frame read back as drawn.
    public let isPipelined: Bool
    /// Timings of the last `submit` (upload and draw of its frame; readback: starting its read
    /// plus waiting for, mapping and packing the frames it handed out) or `finish` (readback only).
    public private(set) var lastStats = GLRenderStats()

    /// A frame whose readback has been started, waiting in the ring.
    private struct InFlight {
        var tag: Tag
        var slot: Int
        var picture: DrawnPicture
        var fence: GLFence
        /// A hardware frame's picture (its DMA-BUFs or CUDA memory, or an export), which the
        /// drawing may still read until the fence.
        var keepAlive: AnyObject?
    }

    private var buffers: [GLPixelPackBuffer] = []
    /// Oldest first.
    private var inFlight: [InFlight] = []
    private var nextSlot = 0

    /// A pipeline `depth` frames deep (3: one drawing, one copying, one being handed out) over
    /// `renderer`, which it draws with (its timings and context).
    public init(renderer: GLRenderer, depth: Int = 3) throws {
        precondition(depth >= 0, "GLReadbackPipeline: depth must not be negative")
        self.renderer = renderer
        self.depth = depth
        isPipelined = renderer.dialect == .es300 && depth > 0
        guard isPipelined else { return }
        try renderer.context.makeCurrent()
        buffers = try (0..<depth).map { _ in try GLPixelPackBuffer(context: renderer.context) }
    }

    /// Frames submitted and not yet handed out.
    public var framesInFlight: Int { inFlight.count }

    /// Brings `source` to the GPU and draws it as `composition` says (`GLRenderer.render`),
    /// starts its readback, and returns the frames that are done: the oldest once the ring is
    /// full, otherwise none (on GLES 2, this one). A frame may be reused as soon as this returns:
    /// the hardware picture it holds, or the exported surface, is kept until its readback is done.
    public func submit(_ source: GLSource, as composition: Composition = Composition(), tag: Tag) throws -> [Finished] {
        try submit(tag: tag, keepAlive: source.keepAlive) { completion in try renderer.render(source, as: composition, completion: completion) }
    }

    /// Hands out every frame still in flight, oldest first (the end of a stream).
    public func finish() throws -> [Finished] {
        let t0 = ClockTime.now()
        var done: [Finished] = []
        while !inFlight.isEmpty { done.append(try collectOldest()) }
        lastStats = GLRenderStats(readback: (ClockTime.now() - t0).secondsValue)
        return done
    }

    private func submit(tag: Tag, keepAlive: AnyObject?,
                        render: (GLRenderer.Completion) throws -> RGBImage) throws -> [Finished] {
        guard isPipelined else {
            let image = try render(.readPixels)
            lastStats = renderer.lastStats
            return [Finished(tag: tag, image: image)]
        }
        var started: ClockTime?
        let slot = nextSlot
        _ = try render(.handOff { [self] picture in
            started = ClockTime.now()
            try buffers[slot].read(width: picture.width, height: picture.height)
            inFlight.append(InFlight(tag: tag, slot: slot, picture: picture, fence: try GLFence(context: renderer.context),
                                     keepAlive: keepAlive))
        })
        nextSlot = (slot + 1) % depth
        var stats = renderer.lastStats
        var done: [Finished] = []
        while inFlight.count >= depth { done.append(try collectOldest()) }
        if let started { stats.readback = (ClockTime.now() - started).secondsValue }
        lastStats = stats
        return done
    }

    /// Waits for the oldest frame's fence, maps its buffer and packs it into rgb24.
    private func collectOldest() throws -> Finished {
        try renderer.context.makeCurrent()
        let f = inFlight.removeFirst()
        try f.fence.wait()
        let image = try buffers[f.slot].withMappedBytes(count: f.picture.rgbaByteCount) { f.picture.image(fromRGBA: $0) }
        return Finished(tag: f.tag, image: image)
    }
}
