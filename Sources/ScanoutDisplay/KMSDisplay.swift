import ScanoutKMS
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutRender

/// Which way a frame reached the screen.
public enum KMSFramePath: String, Sendable, Equatable {
    /// Drawn into a scanout buffer by the renderer, shown on the primary plane.
    case composited
    /// The decoded DMA-BUF itself on a plane, no drawing.
    case native
}

/// Playback on KMS screens with atomic modesetting, as a compositor-free kiosk player needs it.
///
/// - One output per chosen connector (all connected ones, or those named), each with its own
///   CRTC, primary plane, mode and a ring of scanout buffers (triple buffering by default): a
///   frame is drawn into a buffer neither shown nor queued, so drawing overlaps scanout.
/// - Every real commit is checked by a `TEST_ONLY` commit first; the first one is a modeset, the
///   others non-blocking page flips whose completion events pace the next commit and carry the
///   vblank timestamps (`lastFlipTimestamp`).
/// - `presentNative` puts a DMA-BUF frame straight on a plane when a `TEST_ONLY` commit accepts
///   it, keeps it referenced until the flip that replaces it completes, and composites the frame
///   otherwise; `counters` say which path each frame took.
/// - Hotplug: a connector that appears gets an output at the next frame, one that vanishes is
///   released; playback goes on.
/// - `restore()` (also run by `deinit`) puts back the CRTC, plane and connector state found at
///   start.
///
/// One thread uses a display (the playback loop's); not Sendable.
public final class KMSDisplay: Display {
    public struct Options: Sendable {
        /// Connector names ("HDMI-A-1"); empty: every connected one.
        public var connectors: [String] = []
        /// "1920x1080@60" or "1920x1080"; nil: each screen's preferred mode.
        public var mode: String?
        /// Scanout buffers per output.
        public var buffers = 3
        /// Capture every committed frame through the writeback connector (`onCapture`).
        public var capture = false
        public var flipTimeoutMs: Int32 = 1000
        /// HDR content: signalled to screens that take it, tone mapped elsewhere (`HDRSettings`).
        public var hdr: HDRSettings
        public init(connectors: [String] = [], mode: String? = nil, buffers: Int = 3, capture: Bool = false, hdr: HDRSettings = HDRSettings()) {
            self.hdr = hdr
            self.connectors = connectors
            self.mode = mode
            self.buffers = buffers
            self.capture = capture
        }
    }

    /// What happened so far.
    public struct Counters: Sendable, Equatable {
        public var composited = 0
        public var native = 0
        /// Native attempts the `TEST_ONLY` commit refused (then composited).
        public var nativeRejected = 0
        public var flips = 0
        public var captures = 0
        /// Output frames drawn censored (the background instead of the content).
        public var censored = 0
        /// Zones of composed frames drawn censored on an output (their background instead).
        public var censoredZones = 0
        /// Turned canvases an output showed drawn upright and turned by its primary plane's
        /// `rotation`, and those the compositor turned (`turnPaths` says why).
        public var planeTurns = 0
        public var compositorTurns = 0
        public var outputsAdded = 0
        public var outputsRemoved = 0
        public init() {}
    }


    public let device: KMSDevice
    public var renderer: ScanoutRenderer
    /// What every output's picture looks like (background, scaling, the logo), handed to the
    /// renderer with each frame; the frame's orientation and subtitles are added per draw.
    public var composition: Composition
    /// A composed screen across the outputs: the rectangle of the canvas each output shows, by
    /// connector name (`WallLayout`); empty: each shows the whole canvas.
    public var wall: [String: PixelRect] = [:]
    public let options: Options
    /// The time the output filter is asked at: the clock the playback session paces with.
    public let clock: any PlaybackClock
    public internal(set) var counters = Counters()
    /// The vblank timestamp (monotonic clock) of the last completed flip.
    public internal(set) var lastFlipTimestamp: ClockTime?
    /// Why the last native attempt was refused.
    public internal(set) var lastNativeRejection: String?
    /// Called with each writeback capture (the index counts captures from 0).
    public var onCapture: ((Int, RGBImage) -> Void)?
    /// Called with each page-flip event: the CRTC and the vblank timestamp (monotonic clock)
    /// at which the committed frame reached its screen.
    public var onFlip: ((UInt32, ClockTime) -> Void)?
    /// When the present being drawn was called, and the running estimate of a draw (from the
    /// call to the commit, waits for earlier flips left out), in nanoseconds as a `Double` (a
    /// running average): `commitLead`.
    var drawStarted: ClockTime?
    var drawEstimate: Double?
    /// The kind of frame the renderer last got ready for (`warmUp`).
    var warmKind: WarmKind?
    /// The next real commit waits until then (`holdNextCommit`).
    var commitHold: ClockTime?
    /// Called when outputs are added or removed (hotplug), with a one-line description.
    public var onOutputsChanged: ((String) -> Void)?
    /// How each output shows a turned canvas, by connector name, once decided (`KMSTurnPath`).
    public internal(set) var turnPaths: [String: KMSTurnPath] = [:]
    /// Called once per output and turn when that is decided: the output's name and the path.
    public var onTurnChosen: ((String, KMSTurnPath) -> Void)?
    /// Called when an output's colour changes (HDR on, off, or tone mapped and why).
    public var onColourChanged: ((String, OutputColour) -> Void)?
    /// The last frame's content (its HDR metadata kept while the next frames carry none), and the
    /// HDR capability of each EDID blob read.
    var lastContent: HDRContent?
    /// Planes whose `COLOR_ENCODING` / `COLOR_RANGE` a native HDR frame changed (put back for SDR).
    var colourPlanes: Set<UInt32> = []
    var edidCapabilities: [UInt64: DisplayHDRCapability?] = [:]
    /// What `restore()` did, once it ran.
    public internal(set) var restoreReport: String?

    var outputs: [Output] = []
    /// The device's resources as last read: at start and on hotplug, never per frame.
    var resources: KMSResources
    let restoreState: KMSRestoreState
    var writeback: (connectorID: UInt32, buffer: ScanoutBuffer, fb: KMSFramebuffer)?
    var hotplugPending = false
    var restored = false

    /// Chooses the outputs on `device`; nothing is shown until the first `present`.
    public init(device: KMSDevice, renderer: ScanoutRenderer, composition: Composition = Composition(), options: Options = Options(),
                clock: any PlaybackClock = MonotonicClock()) throws {
        self.device = device
        self.renderer = renderer
        self.composition = composition
        self.options = options
        self.clock = clock
        let res = try device.resources()
        resources = res
        restoreState = KMSRestoreState(device: device, resources: res)
        outputs = try Self.chooseOutputs(res, options: options, path: device.path, taken: [])
        if options.capture { try setUpWriteback(res) }
    }

    deinit { restore() }

    public var description: String {
        let list = outputs.map { "\($0.name) \($0.mode)" }.joined(separator: ", ")
        return "kms \(device.path) [\(list)] (\(renderer.name))"
    }

    /// The buffer last committed (queued or on screen) on the output named `name`, for tests and
    /// snapshots.
    public func shownBuffer(named name: String) -> ScanoutBuffer? {
        guard let o = outputs.first(where: { $0.name == name }), let i = o.queued ?? o.onScreen else { return nil }
        return o.buffers[i]
    }

    /// Off: every output's CRTC `ACTIVE` 0 in one commit (DPMS off; the mode, the connector's route
    /// and the planes stay), so the screens go dark and standby; nothing may be presented until
    /// they are on again. On: the next present lights them with its frame (a modeset, as at the
    /// start).
    public func setPower(on: Bool) throws {
        if on {
            for o in outputs { o.needsModeset = true }
            return
        }
        var request = AtomicRequest()
        let lit = outputs.filter { !$0.needsModeset }
        for o in lit { request.set(o.crtcID, "ACTIVE", 0) }
        guard !lit.isEmpty else { return }
        do {
            try device.atomicCommit(request, flags: [.testOnly, .allowModeset])
            try device.atomicCommit(request, flags: [.allowModeset])
        } catch let e as KMSError {
            throw KMSDisplayError.commitRejected(path: device.path, outputs: lit.map(\.name), error: e)
        }
        for o in outputs {
            o.needsModeset = true
            o.queued = nil
        }
    }

    /// The first output's buffer last committed, read back (`GET /snapshot`).
    public func snapshot() throws -> RGBImage? {
        guard let name = outputs.first?.name, let buffer = shownBuffer(named: name) else { return nil }
        return try renderer.read(buffer)
    }

    /// The outputs being driven: connector name and mode.
    public var outputSummary: [(name: String, mode: KMSMode)] { outputs.map { ($0.name, $0.mode) } }

    // MARK: Presenting

    /// Put hardware-decoded frames (those carrying a DMA-BUF export) on planes when possible.
    public var nativePlanes = false
    /// The current item's subtitles, laid out on each output's mode as its frame is composited;
    /// while set, frames are composited rather than put on a plane of their own.
    public var subtitles: SubtitleRenderer?
    /// Asked once per output and frame (the connector as last read, `clock`'s time) whether
    /// the output shows the frame or the background (censored); every device event is forwarded to
    /// it. This is where a content policy's `OutputGuard` plugs in.
    public var outputFilter: (any OutputFilter)? {
        didSet { outputFilter?.handle(.hotplug, connectors: connectors) }
    }
    /// A composed screen's zones with a content policy of their own, by zone index
    /// (`Canvas.zones`): an output a zone's filter censors shows that zone's rectangle as its
    /// background, the other zones as they are. Device events are forwarded to them too.
    public var zoneFilters: [Int: any OutputFilter] = [:] {
        didSet { for f in zoneFilters.values { f.handle(.hotplug, connectors: connectors) } }
    }
    /// Which filters hold HDCP on which connector, for merging their property changes.
    var filterChanges = KMSFilterChanges()
    /// The connectors as last read (at start and after each hotplug).
    public var connectors: [KMSConnector] { resources.connectors }

    /// Shows `frame`: on a plane as it is when `nativePlanes` is on and the frame carries a
    /// DMA-BUF export that a plane accepts, otherwise drawn into a free buffer of every output.
    public func present(_ frame: VideoFrame, orientation: Orientation) throws {
        drawStarted = clock.now()
        if nativePlanes, let surface = frame.surface, let dmabuf = try? DMABufFrame(surface: surface) {
            let hdr = frame.colorTransfer.dynamicRange == .sdr ? nil : content(of: frame)
            try presentNative(dmabuf, keepAlive: surface, orientation: orientation, hdr: hdr, fullRange: frame.colorRange == .full,
                              fallback: { frame })
            return
        }
        try presentComposited(frame, orientation: orientation)
    }

    /// Lights every output still dark with the background (their modeset) and waits until it is
    /// on screen. The first frame is then a page flip like the others, seen at the vblank it
    /// is aimed at, with the vblank grid known before it. Otherwise the first present is the
    /// modeset, which in the vkms guest reached the screen 0.19–0.44 s after its aim (and the
    /// sound started for that frame at its aim). Every buffer is drawn once. Does nothing with
    /// writeback capture: there the modeset routes the writeback connector with the first
    /// frame, so that every capture is a frame.
    public func lightUp() throws {
        guard writeback == nil else { return }
        let dark = outputs.filter(\.needsModeset)
        guard !dark.isEmpty else { return }
        var request = AtomicRequest()
        for output in dark {
            try drawIntoFreeBuffer(output, in: &request) { try renderer.drawCensored(composition.background, into: $0) }
            // The output's other buffers get the background too, now: a buffer's first draw is
            // the slow one (its pages mapped, the renderer's state for it made). In the vkms
            // guest the first frame's draw took 58 ms, against 7 ms in a buffer drawn before,
            // and it was late on its aim, where its sound started.
            for (i, b) in output.buffers.enumerated() where i != output.queued { try renderer.drawCensored(composition.background, into: b) }
        }
        try commit(request, outputs: dark)
        try waitForFlips(dark)
    }

    /// Draws `frame` into a buffer of the first output that is neither on screen nor queued,
    /// and shows nothing, once per kind of frame (size, pixel format, layout). A renderer's first
    /// draw of a kind makes its state for it (the CPU renderer's scaler, the compositor's
    /// layout): in the vkms guest the first frame of an item took 44 ms to draw, against 7 ms
    /// for the next ones, and reached the screen that much after its aim, where its sound
    /// started. Frames that go on a plane as they are (`nativePlanes`) are not drawn.
    public func warmUp(for frame: VideoFrame, layout: FrameLayout) {
        let kind = WarmKind(frame, layout)
        guard kind != warmKind, !(nativePlanes && frame.surface != nil), let output = outputs.first else { return }
        warmKind = kind
        useScaling(of: layout)
        do {
            try ensureBuffers(output)
            try renderer.draw(frame, as: composing(orientation: layout.orientation), into: output.buffers[freeBuffer(output)])
        } catch {
            // The real draw will say what failed.
        }
    }

    /// Draws `frame` into a free buffer of every output and flips to it.
    public func presentComposited(_ frame: VideoFrame, orientation: Orientation) throws {
        try handleHotplugIfNeeded()
        try drawAndCommit(frame, orientation: orientation, censored: censorReasons())
    }

    /// Draws `frame` (or the background, where `censored` names a reason) into a free buffer of
    /// every output and flips to it.
    func drawAndCommit(_ frame: VideoFrame, orientation: Orientation, censored: [UInt32: String]) throws {
        var request = AtomicRequest()
        var touched: [Output] = []
        let content = content(of: frame)
        for output in outputs {
            try prepareColour(output, for: content)
            try drawIntoFreeBuffer(output, in: &request) { buffer in
                if let reason = censored[output.connectorID] {
                    try renderer.drawCensored(composition.background, into: buffer)
                    lastCensorReason[output.name] = reason
                    counters.censored += 1
                } else {
                    var c = composing(orientation: orientation)
                    c.toneMapping = output.colour.signal == nil ? options.hdr.toneMapping : nil
                    c.subtitles = subtitles?.layer(for: frame, in: c, outputWidth: buffer.width, outputHeight: buffer.height)
                    try renderer.draw(frame, as: c, into: buffer)
                }
            }
            touched.append(output)
            if let n = output.nativeOnScreen ?? output.nativeQueued, n.plane != output.planeID {
                request.set(n.plane, "FB_ID", 0)
                request.set(n.plane, "CRTC_ID", 0)
            }
        }
        try commit(request, outputs: touched)
        counters.composited += 1
    }

    /// Draws into a buffer of `output` that is neither on screen nor queued (`draw`), puts it on
    /// the primary plane in `request` (with the modeset when the output needs one) and marks it
    /// queued. The buffer is `size` (nil: the mode's), shown turned by `rotation` (nil: upright).
    func drawIntoFreeBuffer(_ output: Output, size: (width: Int, height: Int)? = nil, rotation: KMSRotation? = nil,
                            in request: inout AtomicRequest, draw: (ScanoutBuffer) throws -> Void) throws {
        let (w, h) = size ?? (output.mode.width, output.mode.height)
        try ensureBuffers(output)
        let index = freeBuffer(output)
        try fitBuffer(output, index, width: w, height: h)
        try draw(output.buffers[index])
        setPrimary(output, fb: output.framebufferIDs[index], source: (w, h), rotation: rotation, in: &request)
        output.queued = index
        if rotation != nil || output.planeRotation != nil { output.planeRotation = rotation ?? .rotate0 }
    }

    /// Why each output may not show the content now, by connector id: the filter's verdict, asked
    /// once per output for this frame.
    func censorReasons() -> [UInt32: String] {
        guard let filter = outputFilter else { return [:] }
        let now = clock.now()
        var reasons: [UInt32: String] = [:]
        for output in outputs {
            guard let c = connectors.first(where: { $0.id == output.connectorID }) else { continue }
            reasons[output.connectorID] = filter.censorDescription(for: c, at: now)
        }
        return reasons
    }

    /// The last reason each output was censored for, by output name.
    public internal(set) var lastCensorReason: [String: String] = [:]

    // MARK: Commits

    func ensureBuffers(_ output: Output) throws {
        guard output.buffers.isEmpty else { return }
        (output.buffers, output.framebuffers) = try makeRing(output, output.bufferFormat)
    }

    /// Buffers of `format` for `o` at its mode's size, with their framebuffers (not yet the output's).
    func makeRing(_ o: Output, _ format: CanvasFormat) throws -> (buffers: [ScanoutBuffer], framebuffers: [KMSFramebuffer]) {
        var ring: ([ScanoutBuffer], [KMSFramebuffer]) = ([], [])
        for _ in 0..<max(2, options.buffers) {
            let (b, fb) = try makeScanoutBuffer(o, format: format, width: o.mode.width, height: o.mode.height)
            ring.0.append(b)
            ring.1.append(fb)
        }
        return ring
    }

    /// A `width`×`height` buffer of `format` in a layout `o`'s primary plane takes, and its framebuffer.
    func makeScanoutBuffer(_ o: Output, format: CanvasFormat, width: Int, height: Int) throws -> (ScanoutBuffer, KMSFramebuffer) {
        let modifiers = resources.planes.first { $0.id == o.planeID }?.modifiers[format.fourcc] ?? []
        let b = try renderer.makeBuffer(width: width, height: height, format: format, modifiers: modifiers)
        return (b, try KMSFramebuffer(device: device, b.framebuffer))
    }

    func freeBuffer(_ output: Output) -> Int {
        output.buffers.indices.first { $0 != output.onScreen && $0 != output.queued } ?? 0
    }

    func setModeset(_ output: Output, in request: inout AtomicRequest) {
        if output.modeBlob == 0, let blob = try? device.createPropertyBlob(output.mode.modeInfoBytes) { output.modeBlob = blob }
        request.set(output.connectorID, "CRTC_ID", UInt64(output.crtcID))
        request.set(output.crtcID, "MODE_ID", UInt64(output.modeBlob))
        request.set(output.crtcID, "ACTIVE", 1)
    }

    func setPlane(_ plane: UInt32, fb: UInt32, crtc: UInt32, source: (Int, Int), rect: PixelRect, in request: inout AtomicRequest) {
        request.set(plane, "FB_ID", UInt64(fb))
        request.set(plane, "CRTC_ID", UInt64(crtc))
        request.set(plane, "SRC_X", 0)
        request.set(plane, "SRC_Y", 0)
        request.set(plane, "SRC_W", UInt64(source.0) << 16)
        request.set(plane, "SRC_H", UInt64(source.1) << 16)
        request.set(plane, "CRTC_X", UInt64(bitPattern: Int64(rect.x)))
        request.set(plane, "CRTC_Y", UInt64(bitPattern: Int64(rect.y)))
        request.set(plane, "CRTC_W", UInt64(rect.width))
        request.set(plane, "CRTC_H", UInt64(rect.height))
    }

    /// `fb` (of `source`'s size, nil: the mode's) over the whole screen on the output's primary
    /// plane, turned by `rotation`; a plane this display turned before is put back upright when
    /// `rotation` is nil.
    func setPrimary(_ output: Output, fb: UInt32, source: (Int, Int)? = nil, rotation: KMSRotation? = nil, in request: inout AtomicRequest) {
        if output.needsModeset { setModeset(output, in: &request) }
        for a in output.pendingConnector { request.set(a.objectID, a.property, a.value) }
        let w = output.mode.width, h = output.mode.height
        setPlane(output.planeID, fb: fb, crtc: output.crtcID, source: source ?? (w, h), rect: PixelRect(x: 0, y: 0, width: w, height: h), in: &request)
        let turned = output.planeRotation.map { $0 != .rotate0 } ?? false
        if let r = rotation ?? (turned ? .rotate0 : nil) { request.set(output.planeID, "rotation", r.rawValue) }
    }

    func testFlags(_ output: Output) -> AtomicFlags {
        output.needsModeset ? [.testOnly, .allowModeset] : [.testOnly, .nonBlock]
    }
}


extension KMSDisplay {
    /// A screen takes hardware frames as they are: on a plane (native) or through its renderer,
    /// which imports them (GLES) or downloads them (CPU).
    public var acceptsGPUFrames: Bool { true }
    public func countTransfers(in transfers: FrameTransfers?) { renderer.transfers = transfers }
}
