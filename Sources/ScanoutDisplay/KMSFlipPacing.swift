import ScanoutKMS
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutRender

// Flip pacing: each output commits a new frame only after its previous flip's event arrived
// (so a non-blocking commit never meets EBUSY), and the events' vblank timestamps pace playback.

extension KMSDisplay {
    /// Blocks until no output in `list` has a flip pending, handling events as they come.
    func waitForFlips(_ list: [Output]) throws {
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
            case let .flipComplete(crtcID, _, timestamp):
                guard let o = outputs.first(where: { $0.crtcID == crtcID }) else { continue }
                o.flipPending = false
                counters.flips += 1
                lastFlipTimestamp = timestamp
                onFlip?(crtcID, timestamp)
                if o.retiredCommitted { o.retired = []; o.retiredCommitted = false }
                if let q = o.queued {
                    o.onScreen = q
                    o.queued = nil
                    releaseNative(o, keepQueued: false)
                } else if let n = o.nativeQueued {
                    o.nativeOnScreen = n   // the one it replaces is removed with its last reference
                    o.nativeQueued = nil
                    o.onScreen = nil
                }
            case .hotplug:
                hotplugPending = true
                if let res = try? device.resources() { resources = res }
            }
            outputFilter?.handle(event, connectors: connectors)
            for f in zoneFilters.values { f.handle(event, connectors: connectors) }
        }
    }
}

/// The page-flip events' vblank timestamps pace playback on a KMS screen: the presentation clock
/// aims each frame at the vblank nearest its time.
extension KMSDisplay: VBlankSource {
    public var vblankSource: (any VBlankSource)? { self }

    /// From the first output's mode timing (pixel clock / (htotal × vtotal)), else its refresh.
    public var refreshInterval: Duration {
        guard let mode = outputs.first?.mode else { return .nanoseconds(16_666_667) }
        if let t = mode.timing, t.clock > 0, t.htotal > 0, t.vtotal > 0 {
            return .nanoseconds(UInt64(t.htotal) * UInt64(t.vtotal) * 1_000_000 / UInt64(t.clock))
        }
        return .nanoseconds(1_000_000_000 / UInt64(max(mode.refresh, 1)))
    }

    public var lastVBlank: ClockTime? { lastFlipTimestamp }

    public var commitLead: Duration { .nanoseconds(Int64(max(drawEstimate ?? 0, 0))) }

    /// Frames are scaled by `layout`'s mode from now on.
    func useScaling(of layout: FrameLayout) {
        composition.scaling = layout.scaling
    }

    /// The display's composition for a frame turned by `orientation`.
    func composing(orientation: Orientation) -> Composition {
        var c = composition
        c.orientation = orientation
        return c
    }

    public var holdsCommits: Bool { true }
    public func holdNextCommit(until time: ClockTime) { commitHold = time }

    /// Shows `frame` with the item's scaling mode (the display's, for this frame on).
    public func present(_ frame: VideoFrame, layout: FrameLayout) throws {
        useScaling(of: layout)
        try present(frame, orientation: layout.orientation)
    }
}
