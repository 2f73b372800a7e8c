import ScanoutKMS
import ScanoutMedia
import ScanoutRender
#if canImport(Glibc)
import Glibc
#endif

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
///   vblank timestamps (`lastFlipTimestampNs`).
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
        public init(connectors: [String] = [], mode: String? = nil, buffers: Int = 3, capture: Bool = false) {
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
        public var outputsAdded = 0
        public var outputsRemoved = 0
        public init() {}
    }

    /// One screen being driven.
    final class Output {
        let connectorID: UInt32
        let name: String
        let crtcID: UInt32
        let planeID: UInt32
        let mode: KMSMode
        var modeBlob: UInt32 = 0
        var buffers: [ScanoutBuffer] = []
        var framebufferIDs: [UInt32] = []
        var onScreen: Int?
        var queued: Int?
        var flipPending = false
        var needsModeset = true
        /// A native frame shown or queued: its framebuffer, the plane and what keeps it alive.
        var nativeOnScreen: (fb: UInt32, plane: UInt32, keep: AnyObject)?
        var nativeQueued: (fb: UInt32, plane: UInt32, keep: AnyObject)?
        init(connectorID: UInt32, name: String, crtcID: UInt32, planeID: UInt32, mode: KMSMode) {
            self.connectorID = connectorID; self.name = name; self.crtcID = crtcID; self.planeID = planeID; self.mode = mode
        }
    }

    public let device: KMSDevice
    public var renderer: ScanoutRenderer
    public let options: Options
    /// The time the output filter is asked at: the clock the playback session paces with.
    public let clock: any PlaybackClock
    public private(set) var counters = Counters()
    /// The vblank timestamp (CLOCK_MONOTONIC ns) of the last completed flip.
    public private(set) var lastFlipTimestampNs: UInt64?
    /// Why the last native attempt was refused.
    public private(set) var lastNativeRejection: String?
    /// Called with each writeback capture (the index counts captures from 0).
    public var onCapture: ((Int, RGBImage) -> Void)?
    /// Called when outputs are added or removed (hotplug), with a one-line description.
    public var onOutputsChanged: ((String) -> Void)?
    /// What `restore()` did, once it ran.
    public private(set) var restoreReport: String?

    var outputs: [Output] = []
    private var saved: KMSResources
    private var savedModes: [UInt32: [UInt8]] = [:]
    private var writeback: (connectorID: UInt32, buffer: ScanoutBuffer, fb: UInt32)?
    private var hotplugPending = false
    private var restored = false

    /// Chooses the outputs on `device`; nothing is shown until the first `present`.
    public init(device: KMSDevice, renderer: ScanoutRenderer, options: Options = Options(),
                clock: any PlaybackClock = MonotonicClock()) throws {
        self.device = device
        self.renderer = renderer
        self.options = options
        self.clock = clock
        let res = try device.resources()
        saved = res
        connectors = res.connectors
        for crtc in res.crtcs {
            if let blob = crtc.properties["MODE_ID"], blob != 0, let bytes = try? device.propertyBlob(UInt32(truncatingIfNeeded: blob)) {
                savedModes[crtc.id] = bytes
            }
        }
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

    /// The outputs being driven: connector name and mode.
    public var outputSummary: [(name: String, mode: KMSMode)] { outputs.map { ($0.name, $0.mode) } }

    // MARK: Choosing outputs

    static func chooseOutputs(_ res: KMSResources, options: Options, path: String, taken: [Output]) throws -> [Output] {
        let screens = res.connectors.filter { $0.typeName != "Writeback" }
        var chosen: [KMSConnector]
        if options.connectors.isEmpty {
            chosen = screens.filter { $0.connection == .connected }
            if chosen.isEmpty && taken.isEmpty {
                throw KMSDisplayError.noConnectedConnector(path: path, connectors: screens.map { "\($0.name) (\($0.connection.rawValue))" })
            }
        } else {
            chosen = []
            for name in options.connectors {
                guard let c = screens.first(where: { $0.name == name }) else {
                    if !taken.isEmpty { continue }
                    throw KMSDisplayError.connectorNotFound(name: name, path: path, available: screens.map(\.name))
                }
                guard c.connection == .connected else {
                    if !taken.isEmpty { continue }
                    throw KMSDisplayError.connectorDisconnected(name: name, path: path)
                }
                chosen.append(c)
            }
        }
        var usedCRTCs = Set(taken.map(\.crtcID)), usedPlanes = Set(taken.map(\.planeID))
        var outputs: [Output] = []
        for c in chosen where !taken.contains(where: { $0.connectorID == c.id }) {
            let possible = res.encoders.filter { c.encoderIDs.contains($0.id) }.reduce(UInt32(0)) { $0 | $1.possibleCRTCs }
            let current = UInt32(truncatingIfNeeded: c.properties["CRTC_ID"] ?? 0)
            var order = res.crtcs.indices.filter { possible & (1 << UInt32($0)) != 0 && !usedCRTCs.contains(res.crtcs[$0].id) }
            order.sort { (res.crtcs[$0].id == current ? 0 : 1) < (res.crtcs[$1].id == current ? 0 : 1) }
            guard let crtcIndex = order.first else { throw KMSDisplayError.noCRTC(connector: c.name) }
            guard let plane = res.planes.first(where: {
                $0.type == .primary && $0.canUse(crtcIndex: crtcIndex) && !usedPlanes.contains($0.id) && $0.formats.contains(DRMFourCC.xrgb8888)
            }) else { throw KMSDisplayError.noPrimaryPlane(connector: c.name) }
            let mode = try chooseMode(connector: c, requested: options.mode)
            let crtcID = res.crtcs[crtcIndex].id
            usedCRTCs.insert(crtcID)
            usedPlanes.insert(plane.id)
            outputs.append(Output(connectorID: c.id, name: c.name, crtcID: crtcID, planeID: plane.id, mode: mode))
        }
        return outputs
    }

    private func setUpWriteback(_ res: KMSResources) throws {
        guard let wb = res.connectors.first(where: { $0.typeName == "Writeback" }), let first = outputs.first else {
            throw KMSDisplayError.noWriteback(path: device.path)
        }
        let buffer = try renderer.makeCaptureBuffer(width: first.mode.width, height: first.mode.height)
        let fb = try device.addFramebuffer(buffer.framebuffer)
        writeback = (wb.id, buffer, fb)
    }

    // MARK: Presenting

    /// Put hardware-decoded frames (those carrying a DMA-BUF export) on planes when possible.
    public var nativePlanes = false
    /// Asked once per output and frame (the connector as last read, `clock`'s time) whether
    /// the output shows the frame or the background (censored); every device event is forwarded to
    /// it. This is where a content policy's `OutputGuard` plugs in.
    public var outputFilter: (any OutputFilter)? {
        didSet { outputFilter?.handle(.hotplug, connectors: connectors) }
    }
    /// The connectors as last read (at start and after each hotplug).
    public private(set) var connectors: [KMSConnector] = []

    /// Shows `frame`: on a plane as it is when `nativePlanes` is on and the frame carries a
    /// DMA-BUF export that a plane accepts, otherwise drawn into a free buffer of every output.
    public func present(_ frame: VideoFrame, orientation: Orientation) throws {
        if nativePlanes, let surface = frame.surface, let dmabuf = try? DMABufFrame(surface: surface) {
            try presentNative(dmabuf, keepAlive: surface, orientation: orientation, fallback: { frame })
            return
        }
        try presentComposited(frame, orientation: orientation)
    }

    /// Draws `frame` into a free buffer of every output and flips to it.
    public func presentComposited(_ frame: VideoFrame, orientation: Orientation) throws {
        try handleHotplugIfNeeded()
        try drawAndCommit(frame, orientation: orientation, censored: censorReasons())
    }

    /// Draws `frame` (or the background, where `censored` names a reason) into a free buffer of
    /// every output and flips to it.
    private func drawAndCommit(_ frame: VideoFrame, orientation: Orientation, censored: [UInt32: String]) throws {
        var request = AtomicRequest()
        var touched: [Output] = []
        for output in outputs {
            try ensureBuffers(output)
            let index = freeBuffer(output)
            if let reason = censored[output.connectorID] {
                try renderer.drawCensored(into: output.buffers[index])
                lastCensorReason[output.name] = reason
                counters.censored += 1
            } else {
                try renderer.draw(frame, orientation: orientation, into: output.buffers[index])
            }
            touched.append(output)
            setPrimary(output, fb: output.framebufferIDs[index], in: &request)
            if let n = output.nativeOnScreen ?? output.nativeQueued, n.plane != output.planeID {
                request.set(n.plane, "FB_ID", 0)
                request.set(n.plane, "CRTC_ID", 0)
            }
            output.queued = index
        }
        try commit(request, outputs: touched)
        counters.composited += 1
    }

    /// Shows a DMA-BUF frame directly on a plane of the (single) output when the device accepts
    /// it; otherwise draws it with `fallback` (the renderer's path for that frame) and presents
    /// that. `keepAlive` holds the frame's memory: it is released once another frame has
    /// replaced it on the screen.
    @discardableResult
    public func presentNative(_ frame: DMABufFrame, keepAlive: AnyObject, orientation: Orientation,
                              fallback: () throws -> VideoFrame?) throws -> KMSFramePath {
        try handleHotplugIfNeeded()
        // Judged once per output and frame, whichever path the frame then takes.
        let censored = censorReasons()
        func composite(because reason: String) throws -> KMSFramePath {
            try self.composite(fallback, orientation: orientation, censored: censored, because: reason)
        }
        if let reason = nativeRefusal(frame, orientation: orientation, censored: censored) {
            return try composite(because: reason)
        }
        let output = outputs[0]
        let res = try device.resources()
        guard let crtcIndex = res.crtcIndex(of: output.crtcID) else { return try composite(because: "CRTC gone") }
        let rect = Compositor.destination(sourceWidth: frame.width, sourceHeight: frame.height, sampleAspectRatio: Rational(1, 1),
                                          orientation: .identity, outputWidth: output.mode.width, outputHeight: output.mode.height,
                                          mode: renderer.compositor.scaling)
        let fullScreen = rect == PixelRect(x: 0, y: 0, width: output.mode.width, height: output.mode.height)
        let candidates = res.planes.filter { p in
            p.canUse(crtcIndex: crtcIndex) && p.formats.contains(frame.fourcc) && p.type != .cursor
                && (p.type == .overlay || (fullScreen && p.id == output.planeID))
                && (frame.modifier == nil || p.modifiers[frame.fourcc].map { $0.contains(frame.modifier!) } ?? true)
        }
        guard !candidates.isEmpty else {
            return try composite(because: "no plane takes \(DRMFourCC.name(frame.fourcc))\(fullScreen ? "" : " scaled to \(rect)")")
        }
        let fb: UInt32
        do {
            fb = try device.addFramebuffer(KMSFramebufferDescription(
                width: frame.width, height: frame.height, format: frame.fourcc, modifier: frame.modifier,
                planes: frame.planes.map { KMSFramebufferPlane(memory: .dmaBuf(fd: $0.fd), offset: $0.offset, pitch: $0.pitch) }))
        } catch {
            return try composite(because: "the framebuffer was refused: \(error)")
        }
        var lastError = "no plane"
        for plane in candidates {
            var request = AtomicRequest()
            if output.needsModeset { setModeset(output, in: &request) }
            if plane.id != output.planeID {
                // The video on an overlay; the primary plane off, so the CRTC's black shows around it.
                request.set(output.planeID, "FB_ID", 0)
                request.set(output.planeID, "CRTC_ID", 0)
            }
            if let n = output.nativeOnScreen ?? output.nativeQueued, n.plane != plane.id, n.plane != output.planeID {
                request.set(n.plane, "FB_ID", 0)
                request.set(n.plane, "CRTC_ID", 0)
            }
            setPlane(plane.id, fb: fb, crtc: output.crtcID, source: (frame.width, frame.height), rect: rect, in: &request)
            do {
                try device.atomicCommit(request, flags: testFlags(output))
            } catch {
                lastError = "\(error)"
                continue
            }
            try waitForFlips([output])
            try commit(request, outputs: [output], tested: true)
            output.nativeQueued = (fb, plane.id, keepAlive)
            output.queued = nil
            counters.native += 1
            return .native
        }
        try? device.removeFramebuffer(fb)
        return try composite(because: "TEST_ONLY refused it: \(lastError)")
    }

    /// Why `frame` cannot go on a plane as it is, or nil when it may be tried.
    private func nativeRefusal(_ frame: DMABufFrame, orientation: Orientation, censored: [UInt32: String]) -> String? {
        if outputs.count != 1 { return "\(outputs.count) outputs (a plane shows one)" }
        if let reason = censored[outputs[0].connectorID] { return "censored (\(reason))" }
        if !orientation.isIdentity { return "rotation needs composition" }
        if renderer.compositor.overlay != nil { return "an overlay image needs composition" }
        return nil
    }

    /// Draws the frame a plane did not take, turned as it would have been shown, with the verdicts
    /// already made for this frame.
    private func composite(_ fallback: () throws -> VideoFrame?, orientation: Orientation, censored: [UInt32: String],
                           because reason: String) throws -> KMSFramePath {
        counters.nativeRejected += 1
        lastNativeRejection = reason
        guard let frame = try fallback() else {
            throw KMSDisplayError.bufferFailed("the frame could not go on a plane (\(reason)) and there is no picture to composite")
        }
        try drawAndCommit(frame, orientation: orientation, censored: censored)
        return .composited
    }

    /// Why each output may not show the content now, by connector id: the filter's verdict, asked
    /// once per output for this frame.
    private func censorReasons() -> [UInt32: String] {
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
    public private(set) var lastCensorReason: [String: String] = [:]

    // MARK: Commits

    private func ensureBuffers(_ output: Output) throws {
        guard output.buffers.isEmpty else { return }
        let modifiers = saved.planes.first { $0.id == output.planeID }?.modifiers[DRMFourCC.xrgb8888] ?? []
        for _ in 0..<max(2, options.buffers) {
            let b = try renderer.makeBuffer(width: output.mode.width, height: output.mode.height, modifiers: modifiers)
            output.buffers.append(b)
            output.framebufferIDs.append(try device.addFramebuffer(b.framebuffer))
        }
    }

    private func freeBuffer(_ output: Output) -> Int {
        output.buffers.indices.first { $0 != output.onScreen && $0 != output.queued } ?? 0
    }

    private func setModeset(_ output: Output, in request: inout AtomicRequest) {
        if output.modeBlob == 0, let blob = try? device.createPropertyBlob(output.mode.modeInfoBytes) { output.modeBlob = blob }
        request.set(output.connectorID, "CRTC_ID", UInt64(output.crtcID))
        request.set(output.crtcID, "MODE_ID", UInt64(output.modeBlob))
        request.set(output.crtcID, "ACTIVE", 1)
    }

    private func setPlane(_ plane: UInt32, fb: UInt32, crtc: UInt32, source: (Int, Int), rect: PixelRect, in request: inout AtomicRequest) {
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

    private func setPrimary(_ output: Output, fb: UInt32, in request: inout AtomicRequest) {
        if output.needsModeset { setModeset(output, in: &request) }
        let w = output.mode.width, h = output.mode.height
        setPlane(output.planeID, fb: fb, crtc: output.crtcID, source: (w, h), rect: PixelRect(x: 0, y: 0, width: w, height: h), in: &request)
    }

    private func testFlags(_ output: Output) -> AtomicFlags {
        output.needsModeset ? [.testOnly, .allowModeset] : [.testOnly, .nonBlock]
    }

    /// `TEST_ONLY` first (unless done), then the real commit with a flip event per CRTC, after
    /// the previous flips of these outputs completed; with capture, the writeback too. The output
    /// filter's connector property changes ride along when a `TEST_ONLY` commit (allowing a
    /// modeset) takes them; refused, the frame goes without them. Either way the filter is told.
    private func commit(_ request: AtomicRequest, outputs touched: [Output], tested: Bool = false) throws {
        guard !touched.isEmpty else { return }
        var request = request
        var modeset = touched.contains { $0.needsModeset }
        var wbConnector: UInt32?
        if let wb = writeback {
            if modeset { request.set(wb.connectorID, "CRTC_ID", UInt64(touched[0].crtcID)) }
            request.set(wb.connectorID, "WRITEBACK_FB_ID", UInt64(wb.fb))
            wbConnector = wb.connectorID
        }
        let names = touched.map(\.name)
        let changes = outputFilter?.propertyChanges() ?? []
        var changesRefused: KMSError?
        var withChangesTested = false
        if !changes.isEmpty {
            var withChanges = request
            withChanges.add(changes)
            do {
                try device.atomicCommit(withChanges, flags: [.testOnly, .allowModeset])
                request = withChanges
                modeset = true
                withChangesTested = true
            } catch let e as KMSError {
                changesRefused = e
            }
        }
        if !withChangesTested && (!tested || wbConnector != nil) {
            do {
                try device.atomicCommit(request, flags: modeset ? [.testOnly, .allowModeset] : [.testOnly, .nonBlock])
            } catch let e as KMSError {
                throw KMSDisplayError.commitRejected(path: device.path, outputs: names, error: e)
            }
        }
        try waitForFlips(touched)
        let flags: AtomicFlags = modeset ? [.allowModeset, .pageFlipEvent] : [.nonBlock, .pageFlipEvent]
        let fence: KMSFence?
        do {
            fence = try device.atomicCommit(request, flags: flags, writebackConnector: wbConnector)
        } catch let e as KMSError {
            throw KMSDisplayError.commitRejected(path: device.path, outputs: names, error: e)
        }
        for o in touched {
            o.flipPending = true
            o.needsModeset = false
        }
        if !changes.isEmpty { outputFilter?.propertyChangesCommitted(changes, error: changesRefused) }
        if let fence, let wb = writeback {
            guard try fence.wait(timeoutMs: 5000) else { throw KMSDisplayError.bufferFailed("writeback capture did not complete in 5 s") }
            let image = try renderer.read(wb.buffer)
            onCapture?(counters.captures, image)
            counters.captures += 1
        }
    }

    /// Blocks until no output in `list` has a flip pending, handling events as they come.
    private func waitForFlips(_ list: [Output]) throws {
        while let pending = list.first(where: \.flipPending) {
            if try !device.waitForEvents(timeoutMs: options.flipTimeoutMs) {
                throw KMSDisplayError.flipTimeout(path: device.path, crtcID: pending.crtcID, milliseconds: options.flipTimeoutMs)
            }
            try drainEvents()
        }
    }

    /// Handles every pending event (flip completions, hotplug) without blocking.
    public func drainEvents() throws {
        while let event = try device.nextEvent() {
            switch event {
            case let .flipComplete(crtcID, _, timestampNs):
                guard let o = outputs.first(where: { $0.crtcID == crtcID }) else { continue }
                o.flipPending = false
                counters.flips += 1
                lastFlipTimestampNs = timestampNs
                if let q = o.queued {
                    o.onScreen = q
                    o.queued = nil
                    releaseNative(o, keepQueued: false)
                } else if let n = o.nativeQueued {
                    if let old = o.nativeOnScreen { try? device.removeFramebuffer(old.fb) }
                    o.nativeOnScreen = n
                    o.nativeQueued = nil
                    o.onScreen = nil
                }
            case .hotplug:
                hotplugPending = true
                if let res = try? device.resources() { connectors = res.connectors }
            }
            outputFilter?.handle(event, connectors: connectors)
        }
    }

    /// A composited frame replaced the native one: its framebuffer goes, and its memory with it.
    private func releaseNative(_ o: Output, keepQueued: Bool) {
        if let old = o.nativeOnScreen { try? device.removeFramebuffer(old.fb) }
        o.nativeOnScreen = nil
        if !keepQueued, let q = o.nativeQueued { try? device.removeFramebuffer(q.fb); o.nativeQueued = nil }
    }

    // MARK: Hotplug

    private func handleHotplugIfNeeded() throws {
        try drainEvents()
        guard hotplugPending else { return }
        hotplugPending = false
        let res = try device.resources()
        var changes: [String] = []
        // Outputs whose screen went away: released (their CRTC switched off), playback goes on.
        for o in outputs {
            let c = res.connectors.first { $0.id == o.connectorID }
            guard c == nil || c!.connection != .connected else { continue }
            var request = AtomicRequest()
            request.set(o.planeID, "FB_ID", 0)
            request.set(o.planeID, "CRTC_ID", 0)
            request.set(o.crtcID, "ACTIVE", 0)
            request.set(o.crtcID, "MODE_ID", 0)
            if c != nil { request.set(o.connectorID, "CRTC_ID", 0) }
            try? waitForFlips([o])
            try? device.atomicCommit(request, flags: [.testOnly, .allowModeset])
            try? device.atomicCommit(request, flags: [.allowModeset])
            releaseOutput(o)
            counters.outputsRemoved += 1
            changes.append("\(o.name) removed")
        }
        outputs.removeAll { o in !res.connectors.contains { $0.id == o.connectorID && $0.connection == .connected } }
        // New screens get content from the next frame on.
        let added = (try? Self.chooseOutputs(res, options: options, path: device.path, taken: outputs)) ?? []
        for o in added {
            outputs.append(o)
            counters.outputsAdded += 1
            changes.append("\(o.name) added (\(o.mode))")
        }
        if !changes.isEmpty { onOutputsChanged?(changes.joined(separator: ", ")) }
    }

    private func releaseOutput(_ o: Output) {
        releaseNative(o, keepQueued: false)
        for fb in o.framebufferIDs { try? device.removeFramebuffer(fb) }
        o.framebufferIDs = []
        o.buffers = []
        if o.modeBlob != 0 { try? device.destroyPropertyBlob(o.modeBlob) }
        o.modeBlob = 0
    }

    // MARK: Restore

    /// Puts back what was on the screens before this display started (CRTC modes and activity,
    /// plane framebuffers and positions, connector routing) and releases every buffer. When the
    /// old state cannot be restored (its framebuffer is gone), switches the used CRTCs off
    /// instead; `restoreReport` says which. Runs once.
    public func restore() {
        guard !restored else { return }
        restored = true
        guard outputs.contains(where: { !$0.needsModeset }) else {
            for o in outputs { releaseOutput(o) }
            restoreReport = "nothing to restore (nothing was shown)"
            return
        }
        try? waitForFlips(outputs)
        var request = AtomicRequest()
        var blobs: [UInt32] = []
        for o in outputs {
            guard let crtc = saved.crtcs.first(where: { $0.id == o.crtcID }) else { continue }
            var modeBlob: UInt32 = 0
            if let bytes = savedModes[crtc.id], let b = try? device.createPropertyBlob(bytes) { modeBlob = b; blobs.append(b) }
            request.set(crtc.id, "MODE_ID", UInt64(modeBlob))
            request.set(crtc.id, "ACTIVE", crtc.properties["ACTIVE"] ?? 0)
            for plane in saved.planes where plane.id == o.planeID || (o.nativeOnScreen?.plane == plane.id) || (o.nativeQueued?.plane == plane.id) {
                for name in ["FB_ID", "CRTC_ID", "SRC_X", "SRC_Y", "SRC_W", "SRC_H", "CRTC_X", "CRTC_Y", "CRTC_W", "CRTC_H"] {
                    if let v = plane.properties[name] { request.set(plane.id, name, v) }
                }
            }
            if let c = saved.connectors.first(where: { $0.id == o.connectorID }) {
                request.set(c.id, "CRTC_ID", c.properties["CRTC_ID"] ?? 0)
            }
        }
        if let wb = writeback, let c = saved.connectors.first(where: { $0.id == wb.connectorID }) {
            request.set(c.id, "CRTC_ID", c.properties["CRTC_ID"] ?? 0)
            request.set(c.id, "WRITEBACK_FB_ID", 0)
        }
        // What the filter still wants (HDCP released at the end of an item) goes with the restore.
        let changes = outputFilter?.propertyChanges() ?? []
        request.add(changes)
        do {
            try device.atomicCommit(request, flags: [.testOnly, .allowModeset])
            try device.atomicCommit(request, flags: [.allowModeset])
            restoreReport = "restored the previous state of \(outputs.map(\.name).joined(separator: ", "))"
            if !changes.isEmpty { outputFilter?.propertyChangesCommitted(changes, error: nil) }
        } catch {
            if !changes.isEmpty { outputFilter?.propertyChangesCommitted(changes, error: error as? KMSError ?? .commitRejected(errno: 0, reason: "\(error)")) }
            var off = AtomicRequest()
            for o in outputs {
                off.set(o.planeID, "FB_ID", 0)
                off.set(o.planeID, "CRTC_ID", 0)
                off.set(o.crtcID, "ACTIVE", 0)
                off.set(o.crtcID, "MODE_ID", 0)
                off.set(o.connectorID, "CRTC_ID", 0)
            }
            if let wb = writeback { off.set(wb.connectorID, "CRTC_ID", 0) }
            let done = (try? device.atomicCommit(off, flags: [.allowModeset])) != nil
            restoreReport = "could not restore the previous state (\(error)); "
                + (done ? "switched \(outputs.map(\.name).joined(separator: ", ")) off" : "left the screens as they were")
        }
        for b in blobs { try? device.destroyPropertyBlob(b) }
        for o in outputs { releaseOutput(o) }
        if let wb = writeback { try? device.removeFramebuffer(wb.fb) }
        writeback = nil
    }
}

/// The page-flip events' vblank timestamps pace playback on a KMS screen: the presentation clock
/// aims each frame at the vblank nearest its time.
extension KMSDisplay: VBlankSource {
    public var vblankSource: (any VBlankSource)? { self }

    /// From the first output's mode timing (pixel clock / (htotal × vtotal)), else its refresh.
    public var refreshInterval: UInt64 {
        guard let mode = outputs.first?.mode else { return 16_666_667 }
        if let t = mode.timing, t.clock > 0, t.htotal > 0, t.vtotal > 0 {
            return UInt64(t.htotal) * UInt64(t.vtotal) * 1_000_000 / UInt64(t.clock)
        }
        return 1_000_000_000 / UInt64(max(mode.refresh, 1))
    }

    public var lastVBlank: UInt64? { lastFlipTimestampNs }

    /// Shows `frame` with the item's scaling mode (the compositor's, for this frame on).
    public func present(_ frame: VideoFrame, layout: FrameLayout) throws {
        if renderer.compositor.scaling != layout.scaling { renderer.compositor.scaling = layout.scaling }
        try present(frame, orientation: layout.orientation)
    }
}

extension KMSDisplay {
    /// A screen takes hardware frames as they are: on a plane (native) or through its renderer,
    /// which imports them (GLES) or downloads them (CPU).
    public var acceptsGPUFrames: Bool { true }
    public func countTransfers(in transfers: FrameTransfers?) { renderer.transfers = transfers }
}
