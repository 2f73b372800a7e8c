import ScanoutDisplay
import ScanoutKMS
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ScanoutPolicy
import ScanoutRender

/// Where pictures go, as `play` and `serve` are told: the output kind, and for KMS the card,
/// connectors, mode and writeback capture; the renderer, and the headless output's platforms and
/// layout size.
public struct OutputSettings: Sendable {
    public enum Kind: String, Sendable, CaseIterable {
        /// A KMS screen when one is connected, else headless.
        case auto
        case kms
        case headless
    }

    public var kind: Kind
    public var card: String?
    public var connectors: [String]
    public var mode: String?
    public var renderer: KMSDisplay.RendererChoice
    /// The EGL platforms the headless GL renderer may use, in order.
    public var eglPlatforms: [HeadlessPlatform]
    /// Scaling and background for `play`'s whole run (the service lays out per item).
    public var composition: Composition
    /// KMS: a writeback connector captures every frame shown.
    public var capture: Bool
    /// Headless: the output size pictures are laid out on.
    public var headlessWidth: Int?
    public var headlessHeight: Int?
    /// Headless: the refresh rate its vblanks come at (`HeadlessVBlanks`); nil: none.
    public var headlessRefresh: Double?
    /// Where the DRM cards are.
    public var directory: String
    /// KMS: HDR content signalled to screens that take it, tone mapped elsewhere.
    public var hdr = HDRSettings()

    public init(kind: Kind = .auto, card: String? = nil, connectors: [String] = [], mode: String? = nil,
                renderer: KMSDisplay.RendererChoice = .auto, eglPlatforms: [HeadlessPlatform] = HeadlessPlatform.allCases,
                composition: Composition = Composition(), capture: Bool = false, headlessWidth: Int? = nil, headlessHeight: Int? = nil,
                headlessRefresh: Double? = nil, directory: String = "/dev/dri") {
        self.headlessRefresh = headlessRefresh
        self.kind = kind
        self.card = card
        self.connectors = connectors
        self.mode = mode
        self.renderer = renderer
        self.eglPlatforms = eglPlatforms
        self.composition = composition
        self.capture = capture
        self.headlessWidth = headlessWidth
        self.headlessHeight = headlessHeight
        self.directory = directory
    }

    /// KMS asked for by name (`kms`, a card, a connector, capture): failing to open it is an
    /// error, not a reason to play headless.
    public var explicitKMS: Bool { kind == .kms || card != nil || !connectors.isEmpty || capture }
}

/// What the outputs report while frames are shown, on the display's thread.
public enum OutputReport: Sendable, Equatable {
    /// `output` stopped showing the content (or its reason changed).
    case censored(output: String, reason: String)
    /// `output` shows the content again.
    case shown(output: String)
    /// One frame of `output` was drawn censored.
    case frameCensored(output: String)
    /// The HDCP link of `output`, as the guard sees it, changed.
    case hdcpChanged(output: String, state: HDCPLinkState)
    /// Something the policy asked of the device failed (releasing HDCP).
    case failed(String)
    /// A writeback capture could not be written (the first failure only).
    case captureFailed(String)
    /// How `output` shows the content's colour changed (HDR signalled, or tone mapped and why).
    case colourChanged(output: String, colour: String)
}

/// The playback pipeline behind `play`, `render` and `serve`, assembled once: the display and its
/// renderer (KMS or headless, each choice reported through `note`), the decoder options that go
/// with it (native planes on a screen, GPU frames, the screen's own buffers for hardware
/// decoding), and the content policy on every KMS output (an `OutputGuard` judging each output,
/// each frame). Items are authorised beforehand by a `ContentAuthorizer`.
///
/// Not `Sendable`: it owns the display, and lives on the thread that shows frames.
public final class PlaybackPipeline {
    public let display: any Display
    /// The display when it is a KMS screen.
    public let kms: KMSDisplay?
    /// The headless output's renderer and why it was chosen; nil on a screen.
    public let headlessRenderer: HeadlessDisplay.RendererDecision?
    /// The guard of the KMS outputs, once a policy was applied.
    public private(set) var outputGuard: OutputGuard?
    /// Output reports (censored outputs and frames, HDCP), as they happen.
    public var onReport: ((OutputReport) -> Void)?
    private var hdcp: [String: HDCPLinkState] = [:]

    /// A pipeline around a display already open (a test's fake KMS device, say). On a KMS display,
    /// hardware frames go on planes when a plane takes them.
    public init(display: any Display, headlessRenderer: HeadlessDisplay.RendererDecision? = nil) {
        self.display = display
        self.headlessRenderer = headlessRenderer
        kms = display as? KMSDisplay
        kms?.nativePlanes = true
        kms?.onColourChanged = { [weak self] output, colour in self?.onReport?(.colourChanged(output: output, colour: colour.description)) }
    }

    /// Opens the output `settings` asks for. `auto` plays headless when no card has a connected
    /// screen, or when KMS cannot be opened; KMS asked for by name fails instead, with the reason.
    /// `note` gets one line for each choice made ("output: ...", "renderer: ...").
    public static func open(_ settings: OutputSettings, note: (String) -> Void) throws -> PlaybackPipeline {
        let choice = OutputSelector.choose(requested: settings.kind.rawValue, directory: settings.directory)
        if settings.kind == .headless || (choice.kind == .headless && !settings.explicitKMS) {
            note("output: headless (\(choice.reason))")
            return try headless(settings, note: note)
        }
        do {
            let kms = try KMSDisplay.open(devicePath: settings.card ?? choice.devicePath, renderer: settings.renderer,
                                          composition: settings.composition,
                                          options: KMSDisplay.Options(connectors: settings.connectors, mode: settings.mode, capture: settings.capture,
                                                                      hdr: settings.hdr),
                                          directory: settings.directory, note: note)
            // The screen is lit (the modeset) before anything plays: the first frame is an
            // ordinary flip, on time, and so is the sound lined up with it.
            try kms.lightUp()
            note("output: \(kms.description)")
            return PlaybackPipeline(display: kms)
        } catch let e as KMSDisplayError where !settings.explicitKMS {
            note("output: headless (KMS unavailable: \(e))")
            return try headless(settings, note: note)
        }
    }

    private static func headless(_ settings: OutputSettings, note: (String) -> Void) throws -> PlaybackPipeline {
        var egl = EGLDisplayContext.Options()
        egl.headlessPlatforms = settings.eglPlatforms
        var composition = settings.composition
        composition.toneMapping = settings.hdr.toneMapping
        let decision = try HeadlessDisplay.makeRenderer(settings.renderer, composition: composition, eglOptions: egl)
        note(decision.line)
        let display = HeadlessDisplay(renderer: decision.renderer, outputWidth: settings.headlessWidth, outputHeight: settings.headlessHeight,
                                      refresh: settings.headlessRefresh)
        return PlaybackPipeline(display: display, headlessRenderer: decision)
    }

    // MARK: Decoding

    /// Whether the decoder may hand its frames to a plane as they are: on a KMS screen, yes
    /// (a TEST_ONLY commit decides frame by frame, and refused frames are composited).
    public var nativePlane: Capability {
        kms == nil ? .unavailable("no KMS display (headless output)") : .available
    }

    /// `base` for decoding into this pipeline's display: native planes as the output allows,
    /// hardware frames kept in GPU memory where the display takes them so (one copy counter for
    /// decoder and display), and on a screen the screen's own GBM buffers for the VA-API
    /// stand-in to export into.
    public func decoding(_ base: DecoderOptions) -> DecoderOptions {
        var o = base
        o.environment.nativePlane = nativePlane
        o = display.decoding(o)
        if display.acceptsGPUFrames, let gbm = kms?.renderer.gbmDevice { o.surfaceAllocator = GBMSurfaceAllocator(device: gbm) }
        return o
    }

    // MARK: Capture

    /// The first capture that could not be written (a full disk, say), nil while none failed.
    public private(set) var captureError: (any Error)?

    /// Writes every frame the writeback connector captures into `directory` (created if needed)
    /// as capture-NNNNNN.png, numbered from 1 as the display commits them. Needs a KMS output
    /// opened with `capture`. The first failure is kept in `captureError` and reported once.
    public func capture(to directory: String) throws {
        guard let kms else { throw KMSDisplayError.noWriteback(path: "the headless output") }
        try makeDirectory(directory)
        let png = PNGEncoder()
        kms.onCapture = { [weak self] index, image in
            guard let self, self.captureError == nil else { return }
            do {
                try png.write(image, to: directory + "/capture-" + pad6(index) + ".png")
            } catch {
                self.captureError = error
                self.onReport?(.captureFailed("\(error)"))
            }
        }
    }

    // MARK: Content policy

    /// The policy of the item about to be shown, on every KMS output from its next frame on.
    /// Headless, there is no output to restrict (capture is refused when the item is authorised).
    public func apply(policy: ContentPolicy) {
        guard let kms else { return }
        guard let g = outputGuard else { return attachGuard(to: kms, policy: policy) }
        g.play(policy: policy)
    }

    /// The one place the guard meets the display: asked per output and frame, it shows or censors
    /// (the display draws the background), hears the device's events (hotplug, which is also how
    /// the kernel reports a Content Protection change), and hands the display the HDCP property
    /// values it wants, which go in the display's own commits.
    private func attachGuard(to kms: KMSDisplay, policy: ContentPolicy) {
        let g = OutputGuard(policy: policy) { [weak self] event in
            switch event {
            case let .outputRestricted(output, reason): self?.onReport?(.censored(output: output, reason: reason.description))
            case let .outputUnrestricted(output): self?.onReport?(.shown(output: output))
            }
        }
        outputGuard = g
        kms.outputFilter = ReportingFilter(g) { [weak self] output, verdict in self?.judged(output, verdict: verdict, by: g) }
    }

    private func judged(_ output: String, verdict: OutputVerdict, by g: OutputGuard) {
        if !verdict.shows { onReport?(.frameCensored(output: output)) }
        guard let state = g.status(of: output)?.hdcp, hdcp[output] != state else { return }
        let first = hdcp[output] == nil
        hdcp[output] = state
        // An output that never needed HDCP says nothing; every change after the first does.
        if !(first && state == .notRequired) { onReport?(.hdcpChanged(output: output, state: state)) }
    }

    /// Ends playback on the outputs: HDCP released, the screen as it was before. Returns the
    /// display's restore report, if any.
    public func close() -> String? {
        outputGuard?.stop()
        guard let kms else { return nil }
        // The release of HDCP (stop) goes in the restore's commit.
        kms.restore()
        if let failure = outputGuard?.releaseFailure { onReport?(.failed("\(failure)")) }
        return kms.restoreReport
    }
}

/// The guard as the display's filter, telling the pipeline each verdict as it is given (per-frame
/// censored counts, HDCP state changes); everything else is the guard's.
private final class ReportingFilter: OutputFilter {
    private let inner: OutputGuard
    private let judged: (String, OutputVerdict) -> Void

    init(_ inner: OutputGuard, judged: @escaping (String, OutputVerdict) -> Void) {
        self.inner = inner
        self.judged = judged
    }

    func verdict(for connector: KMSConnector, at now: ClockTime) -> OutputVerdict {
        let v = inner.verdict(for: connector, at: now)
        judged(connector.name, v)
        return v
    }

    func handle(_ event: KMSEvent, connectors: [KMSConnector]) { inner.handle(event, connectors: connectors) }
    func propertyChanges() -> [AtomicRequest.Assignment] { inner.propertyChanges() }
    func propertyChangesCommitted(_ changes: [AtomicRequest.Assignment], error: KMSError?) {
        inner.propertyChangesCommitted(changes, error: error)
    }
}
