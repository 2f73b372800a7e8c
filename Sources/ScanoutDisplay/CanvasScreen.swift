import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutRender

/// Where a composed screen goes: something that draws a `Canvas` with one frame per zone and
/// shows it (headless: into memory; a KMS screen: into each output's buffer).
public protocol CanvasOutput: AnyObject {
    /// Draws `canvas` with `frames[i]` in zone i and shows it; returns once it is drawn.
    func present(_ canvas: Canvas, frames: [VideoFrame?]) throws
    /// The output's refresh, when it has one.
    var vblankSource: (any VBlankSource)? { get }
    /// Whether hardware frames may come in GPU memory only.
    var acceptsGPUFrames: Bool { get }
}

extension CanvasOutput {
    public var vblankSource: (any VBlankSource)? { nil }
    public var acceptsGPUFrames: Bool { false }
}

/// A screen made of zones: each zone's player presents into its `ZoneSurface`; at each refresh
/// the screen takes every zone's last frame and composes them once onto its output (`compose`),
/// each laid out in its rectangle by the zone's composition, turned and scaled as the zone's item
/// says, with the zone's logo and subtitles. The geometry (`canvas`) may change between two
/// composes (a picture-in-picture moved or resized) without touching the zones' players.
///
/// `compose` runs on one thread at a time (the screen's loop, `run`, or a test's).
public final class CanvasScreen {
    public let output: any CanvasOutput
    private let lock = NSLock()
    private var state: (canvas: Canvas, zones: [ZoneSurface])
    private var composedCount = 0
    /// Text drawn over zones, by zone name (a line or a ticker), at the compose's time.
    private var texts: [String: TextZone] = [:]
    /// The output's vblanks as the zones' players read them, taken at each compose; nil when the
    /// output has none.
    private let vblanks: ScreenVBlanks?

    /// A screen of `canvas` on `output`, one surface per zone (named "0", "1", … unless `names`
    /// says otherwise). The zones pace themselves on the output's vblanks, when it has them, as
    /// the last compose saw them (`ScreenVBlanks`): they never touch the output.
    public init(canvas: Canvas, output: any CanvasOutput, names: [String]? = nil) {
        self.output = output
        let names = names ?? canvas.zones.indices.map(String.init)
        let vblanks = output.vblankSource.map(ScreenVBlanks.init)
        self.vblanks = vblanks
        let surfaces = canvas.zones.indices.map { i in
            ZoneSurface(name: i < names.count ? names[i] : String(i), vblankSource: vblanks,
                        acceptsGPUFrames: output.acceptsGPUFrames)
        }
        state = (canvas, surfaces)
    }

    /// The zones' places; `zones[i]` is drawn in `canvas.zones[i]`.
    public var canvas: Canvas { lock.withLock { state.canvas } }

    /// Composed frames shown so far (read from any thread).
    public var composed: Int { lock.withLock { composedCount } }

    /// The zones' surfaces, in drawing order.
    public var zones: [ZoneSurface] { lock.withLock { state.zones } }

    /// A surface for a zone to be added (`relayout(_:zones:)`), paced on this screen's output.
    public func makeSurface(name: String) -> ZoneSurface {
        ZoneSurface(name: name, vblankSource: vblanks, acceptsGPUFrames: output.acceptsGPUFrames)
    }

    /// Draws `text` over zone `index` from the next compose on (nil: none).
    public func setText(_ text: TextZone?, zone index: Int) {
        lock.withLock {
            guard state.zones.indices.contains(index) else { return }
            texts[state.zones[index].name] = text
        }
    }

    /// Moves, resizes or restyles the zones from the next compose on; the count of zones stays.
    public func relayout(_ canvas: Canvas) throws {
        try relayout(canvas, zones: zones)
    }

    /// Puts `zones` in `canvas`'s places from the next compose on: zones added (surfaces from
    /// `makeSurface`), removed or drawn in another order, each keeping its frame and text.
    public func relayout(_ canvas: Canvas, zones: [ZoneSurface]) throws {
        guard canvas.zones.count == zones.count else {
            throw RenderError.invalidSize("\(canvas.zones.count) zones for \(zones.count) surfaces")
        }
        lock.withLock {
            state = (canvas, zones)
            let names = Set(zones.map(\.name))
            texts = texts.filter { names.contains($0.key) }
        }
    }

    /// The canvas this compose draws `seconds` after the screen started: each zone's geometry
    /// with its current item's layout (turn, scaling), logo, subtitle layer and text, and its
    /// last frame.
    public func current(at seconds: Double = 0) -> (canvas: Canvas, frames: [VideoFrame?]) {
        var (c, zones, texts) = lock.withLock { (state.canvas, state.zones, self.texts) }
        var frames: [VideoFrame?] = []
        for (i, surface) in zones.enumerated() {
            let s = surface.current()
            var composition = c.zones[i].composition
            composition.orientation = s.layout.orientation
            composition.scaling = s.layout.scaling
            if let overlay = s.overlay { composition.overlay = overlay }
            c.zones[i].composition = composition
            c.zones[i].name = surface.name
            if let frame = s.frame, let subs = s.subtitles {
                let r = c.zones[i].rect
                c.zones[i].composition.subtitles = subs.layer(for: frame, in: c.zones[i].sized, outputWidth: r.width, outputHeight: r.height)
            }
            if let text = texts[surface.name]?.layer(at: seconds) { c.zones[i].composition.addText(text) }
            frames.append(s.frame)
        }
        return (c, frames)
    }

    /// Draws every zone's last frame onto the output, once, `seconds` after the screen started.
    public func compose(at seconds: Double = 0) throws {
        let (c, frames) = current(at: seconds)
        try output.present(c, frames: frames)
        lock.withLock { composedCount += 1 }
        if let vblanks, let source = output.vblankSource { vblanks.update(from: source) }
    }
}

/// A composed screen with no display: the CPU compositor into memory, or GLES into an offscreen
/// target; the last picture can be taken with `snapshot()`. Presents on one thread (the
/// compositor's): a GLES renderer made elsewhere is current there, so `init(gl:)` with a closure
/// makes it on that thread at the first present. The CPU compositor's last picture may be taken
/// from any thread; the GLES one only on the compositor's.
///
/// `@unchecked Sendable`: the CPU picture and the count are read and written under `lock`; the
/// GLES renderer and target are used on the presenting thread only.
public final class HeadlessCanvasOutput: CanvasOutput, @unchecked Sendable {
    private let lock = NSLock()
    private let cpu: CPUCompositor?
    private var gl: GLRenderer?
    private let makeGL: (() throws -> GLRenderer)?
    private var target: GLRenderTarget?
    private var last: RGBImage?
    private var presentCount = 0

    /// Composed pictures shown so far.
    public var presents: Int { lock.withLock { presentCount } }

    /// The CPU compositor.
    public init() {
        cpu = CPUCompositor()
        makeGL = nil
    }

    /// GLES: hardware frames are imported as they are.
    public init(gl: GLRenderer) {
        cpu = nil
        self.gl = gl
        makeGL = nil
    }

    /// GLES, the renderer made by `make` on the thread that presents, at the first present.
    public init(makeGL make: @escaping () throws -> GLRenderer) {
        cpu = nil
        makeGL = make
    }

    public var acceptsGPUFrames: Bool { cpu == nil }

    public func present(_ canvas: Canvas, frames: [VideoFrame?]) throws {
        if gl == nil, let makeGL { gl = try makeGL() }
        if let cpu {
            let picture = try cpu.compose(frames, on: canvas)
            lock.withLock { last = picture }
        } else if let gl {
            let size = canvas.outputSize
            if target?.width != size.width || target?.height != size.height {
                target = nil
                target = try gl.makeTarget(width: size.width, height: size.height)
            }
            try gl.render(frames.map { $0.map { GLSource.frame($0) } }, on: canvas, into: target!)
        }
        lock.withLock { presentCount += 1 }
    }

    /// The last composed picture (read back from the GPU now, for GLES); nil before the first.
    public func snapshot() throws -> RGBImage? {
        if let gl, let target { return try gl.read(target) }
        return lock.withLock { last }
    }
}
