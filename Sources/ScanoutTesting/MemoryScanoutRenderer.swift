import ScanoutDisplay
import ScanoutKMS
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutRender

/// Buffers in plain memory with the CPU compositor, for a `FakeKMSDevice`: the pixels a frame
/// would put on the screen can be read back in tests.
public final class MemoryScanoutRenderer: ScanoutRenderer {
    public let name = "memory"
    private let cpu = CPUCompositor()
    /// The composition of the last frame drawn (what the display asked for).
    public private(set) var lastComposition: Composition?
    /// The canvas of the last composed screen drawn.
    public private(set) var lastCanvas: Canvas?
    /// Buffers made so far.
    public private(set) var buffersMade = 0
    /// Frames drawn so far, and censored frames (the background) drawn so far.
    public private(set) var framesDrawn = 0
    public private(set) var censoredDrawn = 0
    /// Called at each draw (a test's clock takes the draw's time there).
    public var onDraw: (() -> Void)?

    final class Memory { var bytes: [UInt8]; init(_ n: Int) { bytes = [UInt8](repeating: 0, count: n) } }

    public init() {}

    /// Why 10-bit buffers are refused (nil: made like 8-bit ones), for tests of a renderer that
    /// cannot draw them.
    public var deepRefusal: String?
    /// A failure of every 10-bit buffer while `deepRefusal` says they are drawn (an allocation
    /// the driver refuses at run time).
    public var deepBufferFailure: String?
    /// The formats of the buffers made, in order.
    public private(set) var formatsMade: [CanvasFormat] = []

    public func makeBuffer(width: Int, height: Int, format: CanvasFormat = .xrgb8888, modifiers: [UInt64] = []) throws -> ScanoutBuffer {
        if format != .xrgb8888, let why = deepRefusal ?? deepBufferFailure { throw KMSDisplayError.bufferFailed(why) }
        buffersMade += 1
        formatsMade.append(format)
        return ScanoutBuffer(width: width, height: height,
                             framebuffer: KMSFramebufferDescription(width: width, height: height, format: format.fourcc,
                                                                    planes: [KMSFramebufferPlane(memory: .gemHandle(UInt32(buffersMade)), pitch: UInt32(4 * width))]),
                             format: format, backing: Memory(4 * width * height))
    }

    public func makeCaptureBuffer(width: Int, height: Int) throws -> ScanoutBuffer { try makeBuffer(width: width, height: height) }

    public func draw(_ frame: VideoFrame, as composition: Composition, into buffer: ScanoutBuffer) throws {
        guard let canvas = buffer.backing as? Memory else { throw KMSDisplayError.bufferFailed("not a memory buffer") }
        framesDrawn += 1
        lastComposition = composition
        onDraw?()
        try canvas.bytes.withUnsafeMutableBytes {
            try cpu.compose(frame, as: composition, into: $0.baseAddress!, stride: 4 * buffer.width, width: buffer.width, height: buffer.height,
                            format: buffer.format)
        }
    }

    public func draw(_ frames: [VideoFrame?], on canvas: Canvas, into buffer: ScanoutBuffer) throws {
        guard let bytes = buffer.backing as? Memory else { throw KMSDisplayError.bufferFailed("not a memory buffer") }
        framesDrawn += 1
        lastCanvas = canvas
        onDraw?()
        try bytes.bytes.withUnsafeMutableBytes { try cpu.compose(frames, on: canvas, into: $0.baseAddress!, stride: 4 * buffer.width) }
    }

    public func drawCensored(_ background: RGBColor, into buffer: ScanoutBuffer) throws {
        guard let canvas = buffer.backing as? Memory else { throw KMSDisplayError.bufferFailed("not a memory buffer") }
        censoredDrawn += 1
        canvas.bytes.withUnsafeMutableBytes {
            fill($0.baseAddress!, stride: 4 * buffer.width, width: buffer.width, height: buffer.height, with: background, format: buffer.format)
        }
    }

    public func read(_ buffer: ScanoutBuffer) throws -> RGBImage {
        guard let canvas = buffer.backing as? Memory else { throw KMSDisplayError.bufferFailed("not a memory buffer") }
        guard buffer.format == .xrgb8888 else {
            return canvas.bytes.withUnsafeBytes { RGBImage(xrgb2101010: $0, width: buffer.width, height: buffer.height, stride: 4 * buffer.width) }
        }
        return RGBImage(xrgb: canvas.bytes, width: buffer.width, height: buffer.height, stride: 4 * buffer.width)
    }

    /// The 10-bit code values (R, G, B) of the pixel at `x`, `y` of an XRGB2101010 buffer.
    public func deepPixel(_ buffer: ScanoutBuffer, x: Int, y: Int) throws -> (r: UInt32, g: UInt32, b: UInt32) {
        guard let canvas = buffer.backing as? Memory else { throw KMSDisplayError.bufferFailed("not a memory buffer") }
        let v = canvas.bytes.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 4 * (y * buffer.width + x), as: UInt32.self)) }
        return (v >> 20 & 0x3ff, v >> 10 & 0x3ff, v & 0x3ff)
    }
}
