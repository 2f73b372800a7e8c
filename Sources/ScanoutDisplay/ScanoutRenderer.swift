import ScanoutKMS
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutRender

/// A buffer a KMS plane scans out: XRGB8888 (or XRGB2101010 for HDR) of one output's mode size,
/// and where its memory lives. `backing` keeps that memory alive (a `GBMBuffer`, or bytes in
/// memory for tests).
public final class ScanoutBuffer {
    public let width: Int
    public let height: Int
    public let framebuffer: KMSFramebufferDescription
    /// What its pixels mean: 8-bit SDR, or a 10-bit HDR signal.
    public let format: CanvasFormat
    package let backing: AnyObject
    /// What the renderer keeps per buffer (a GL render target).
    var target: AnyObject?

    package init(width: Int, height: Int, framebuffer: KMSFramebufferDescription, format: CanvasFormat = .xrgb8888, backing: AnyObject) {
        self.width = width
        self.height = height
        self.framebuffer = framebuffer
        self.format = format
        self.backing = backing
    }
}

extension CanvasFormat {
    /// The DRM fourcc of a buffer of this layout.
    public var fourcc: UInt32 { self == .xrgb8888 ? FourCC.xrgb8888 : FourCC.xrgb2101010 }
}

/// How a KMS display gets scanout buffers and draws frames into them: the CPU compositor into
/// mapped linear buffers, GLES into EGLImage render targets, or plain memory for tests.
public protocol ScanoutRenderer: AnyObject {
    /// "cpu", "gl", for logs and counters.
    var name: String { get }
    /// A scanout buffer of `format`; `modifiers` are the layouts the output's primary plane takes
    /// for it (empty when the driver does not say).
    func makeBuffer(width: Int, height: Int, format: CanvasFormat, modifiers: [UInt64]) throws -> ScanoutBuffer
    /// nil when the renderer draws XRGB2101010 buffers with 10 bits kept from the picture; else
    /// why not (an HDR screen then gets the content tone mapped to SDR).
    var deepRefusal: String? { get }
    /// A buffer a writeback connector writes into, and that `read` can read.
    func makeCaptureBuffer(width: Int, height: Int) throws -> ScanoutBuffer
    /// Draws `frame` as `composition` says into `buffer`, filling all of it (the buffer's size is
    /// the output's); returns once the drawing is complete.
    func draw(_ frame: VideoFrame, as composition: Composition, into buffer: ScanoutBuffer) throws
    /// Draws `canvas` (of the buffer's output size) with `frames[i]` in zone i into `buffer`.
    func draw(_ frames: [VideoFrame?], on canvas: Canvas, into buffer: ScanoutBuffer) throws
    /// Fills `buffer` with `background` (a censored frame).
    func drawCensored(_ background: RGBColor, into buffer: ScanoutBuffer) throws
    /// The buffer's pixels.
    func read(_ buffer: ScanoutBuffer) throws -> RGBImage
    /// Where uploads of decoded pictures (and GPU copies and imports) are counted; renderers
    /// that draw from CPU planes without a GPU upload count nothing.
    var transfers: FrameTransfers? { get set }
    /// The GBM device the buffers come from (nil for memory buffers): a decoder that allocates
    /// its pictures there hands over buffers this renderer imports as they are.
    var gbmDevice: GBMDevice? { get }
}

extension ScanoutRenderer {
    public var gbmDevice: GBMDevice? { nil }

    /// An SDR buffer.
    public func makeBuffer(width: Int, height: Int, modifiers: [UInt64]) throws -> ScanoutBuffer {
        try makeBuffer(width: width, height: height, format: .xrgb8888, modifiers: modifiers)
    }

    public var transfers: FrameTransfers? {
        get { nil }
        set {}
    }

    /// Fills rows of `format` with `bg`.
    package func fill(_ base: UnsafeMutableRawPointer, stride: Int, width: Int, height: Int, with bg: RGBColor, format: CanvasFormat = .xrgb8888) {
        CPUCompositor.fill(base, stride: stride, width: width, height: height, with: bg, format: format)
    }
}

/// The CPU path: linear GBM buffers mapped and written by `CPUCompositor`.
public final class CPUScanoutRenderer: ScanoutRenderer {
    public let name = "cpu"
    private let gbm: GBMDevice
    private let cpu = CPUCompositor()

    public init(gbm: GBMDevice) { self.gbm = gbm }
    public var gbmDevice: GBMDevice? { gbm }

    public var deepRefusal: String? { nil }

    /// Mapped by the CPU, so always linear, whatever else the plane takes.
    public func makeBuffer(width: Int, height: Int, format: CanvasFormat, modifiers: [UInt64]) throws -> ScanoutBuffer {
        try Self.wrap(GBMBuffer(device: gbm, width: width, height: height, format: format.fourcc, usage: .cpu), format: format)
    }

    public func makeCaptureBuffer(width: Int, height: Int) throws -> ScanoutBuffer {
        try Self.wrap(GBMBuffer(device: gbm, width: width, height: height, format: FourCC.xrgb8888, usage: .writeback))
    }

    static func wrap(_ bo: GBMBuffer, format: CanvasFormat = .xrgb8888) -> ScanoutBuffer {
        ScanoutBuffer(width: bo.width, height: bo.height,
                      framebuffer: KMSFramebufferDescription(width: bo.width, height: bo.height, format: bo.format, modifier: bo.modifier,
                                                             planes: [bo.framebufferPlane]),
                      format: format, backing: bo)
    }

    public func draw(_ frame: VideoFrame, as composition: Composition, into buffer: ScanoutBuffer) throws {
        guard let bo = buffer.backing as? GBMBuffer else { throw KMSDisplayError.bufferFailed("not a GBM buffer") }
        try bo.withMappedPixels(write: true) { base, stride in
            try cpu.compose(frame, as: composition, into: base, stride: stride, width: bo.width, height: bo.height, format: buffer.format)
        }
    }

    public func draw(_ frames: [VideoFrame?], on canvas: Canvas, into buffer: ScanoutBuffer) throws {
        guard let bo = buffer.backing as? GBMBuffer else { throw KMSDisplayError.bufferFailed("not a GBM buffer") }
        try bo.withMappedPixels(write: true) { base, stride in try cpu.compose(frames, on: canvas, into: base, stride: stride) }
    }

    public func drawCensored(_ background: RGBColor, into buffer: ScanoutBuffer) throws {
        guard let bo = buffer.backing as? GBMBuffer else { throw KMSDisplayError.bufferFailed("not a GBM buffer") }
        try bo.withMappedPixels(write: true) { base, stride in
            fill(base, stride: stride, width: bo.width, height: bo.height, with: background, format: buffer.format)
        }
    }

    public func read(_ buffer: ScanoutBuffer) throws -> RGBImage {
        guard let bo = buffer.backing as? GBMBuffer else { throw KMSDisplayError.bufferFailed("not a GBM buffer") }
        return try bo.readRGB()
    }
}

/// The GPU path: GBM buffers made for rendering and scanout, each imported once as an EGLImage
/// render target, drawn by `GLRenderer` (no readback).
public final class GLScanoutRenderer: ScanoutRenderer {
    public let name = "gl"
    private let gbm: GBMDevice
    public let gl: GLRenderer
    public var transfers: FrameTransfers? {
        get { gl.importer.transfers }
        set { gl.importer.transfers = newValue }
    }

    /// `gl` must render on an EGL display made on `gbm` (`EGLDisplayContext(gbmDevice:)`).
    public var gbmDevice: GBMDevice? { gbm }

    public init(gbm: GBMDevice, gl: GLRenderer) {
        self.gbm = gbm
        self.gl = gl
    }

    /// nil when this EGL display draws into XRGB2101010 GBM buffers, which is probed once (a
    /// small one made and imported as a render target); else why not.
    public private(set) lazy var deepRefusal: String? = probeDeepBuffers()

    /// XRGB8888, or XRGB2101010 (drawn with the HDR signal kept, `GLRenderTarget.format`) where
    /// `deepRefusal` is nil.
    public func makeBuffer(width: Int, height: Int, format: CanvasFormat, modifiers: [UInt64]) throws -> ScanoutBuffer {
        if format != .xrgb8888, let why = deepRefusal { throw KMSDisplayError.bufferFailed(why) }
        let bo = try GBMBuffer(device: gbm, width: width, height: height, format: format.fourcc, usage: .gl, modifiers: modifiers)
        let buffer = CPUScanoutRenderer.wrap(bo, format: format)
        buffer.target = try gl.makeTarget(bo.dmabuf, format: format)
        return buffer
    }

    /// Why this display cannot draw XRGB2101010 buffers, or nil: RGB10_A2 rendering needs GLES
    /// 3, and the driver must allocate the buffer for rendering and import it as an EGLImage.
    private func probeDeepBuffers() -> String? {
        guard gl.context.glesMajorVersion >= 3 else {
            return "the GLES renderer draws 10-bit buffers on GLES 3 only (this context is GLES \(gl.context.glesMajorVersion))"
        }
        do {
            let bo = try GBMBuffer(device: gbm, width: 64, height: 64, format: FourCC.xrgb2101010, usage: .gl)
            _ = try gl.makeTarget(bo.dmabuf, format: .xrgb2101010(.pq))
            return nil
        } catch {
            return "the GLES renderer cannot draw XRGB2101010 buffers here: \(error)"
        }
    }

    public func makeCaptureBuffer(width: Int, height: Int) throws -> ScanoutBuffer {
        CPUScanoutRenderer.wrap(try GBMBuffer(device: gbm, width: width, height: height, format: FourCC.xrgb8888, usage: .writeback))
    }

    public func draw(_ frame: VideoFrame, as composition: Composition, into buffer: ScanoutBuffer) throws {
        guard let target = buffer.target as? GLRenderTarget else { throw KMSDisplayError.bufferFailed("no GL render target") }
        try gl.render(.frame(frame), as: composition, into: target)
    }

    public func draw(_ frames: [VideoFrame?], on canvas: Canvas, into buffer: ScanoutBuffer) throws {
        guard let target = buffer.target as? GLRenderTarget else { throw KMSDisplayError.bufferFailed("no GL render target") }
        try gl.render(frames.map { $0.map { GLSource.frame($0) } }, on: canvas, into: target)
    }

    public func drawCensored(_ background: RGBColor, into buffer: ScanoutBuffer) throws {
        guard let target = buffer.target as? GLRenderTarget else { throw KMSDisplayError.bufferFailed("no GL render target") }
        try gl.clear(target, to: background)
    }

    public func read(_ buffer: ScanoutBuffer) throws -> RGBImage {
        guard let bo = buffer.backing as? GBMBuffer else { throw KMSDisplayError.bufferFailed("not a GBM buffer") }
        return try bo.readRGB()
    }
}
