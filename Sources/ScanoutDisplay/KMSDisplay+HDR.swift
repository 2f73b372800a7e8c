import ScanoutKMS
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutRender

// HDR output: per output and content, HDR signalled to the screen (10-bit buffers, the
// connector's HDR_OUTPUT_METADATA, Colorspace and max bpc in the frame's own commit) or the
// content tone mapped to SDR, with the reason. A change is checked by a TEST_ONLY commit before
// anything is drawn for it (without a modeset first, then with one for drivers that need it; a
// refused max bpc is lowered to 10), and undone when SDR content follows: the metadata blob 0,
// Colorspace and max bpc as found, 8-bit buffers again.

extension HDRContent {
    /// What `frame` says of its colour; `previous` fills in metadata the frame does not carry
    /// (HEVC repeats its SEI only now and then) while the dynamic range stays the same.
    public init(_ frame: VideoFrame, previous: HDRContent? = nil) {
        let range = frame.colorTransfer.dynamicRange
        let kept = previous?.range == range ? previous : nil
        self.init(range: range, mastering: frame.masteringDisplay ?? kept?.mastering, lightLevel: frame.contentLightLevel ?? kept?.lightLevel)
    }
}

extension KMSDisplay {
    /// What the output named `name` shows now.
    public func colour(named name: String) -> OutputColour? { outputs.first { $0.name == name }?.colour }

    /// The content of `frame`, sticky metadata included (`HDRContent.init(_:previous:)`).
    func content(of frame: VideoFrame) -> HDRContent {
        let c = HDRContent(frame, previous: lastContent)
        lastContent = c
        return c
    }

    /// Decides (and checks) what `output` shows `content` as, when the content changed since the
    /// last decision; the connector changes wait in `pendingConnector` for the frame's commit.
    func prepareColour(_ output: Output, for content: HDRContent?) throws {
        let content = content?.range == .sdr ? nil : content
        guard content != output.colourContent else { return }
        output.colourContent = content
        var want = decideColour(output, content)
        if case let .hdr(signal) = want, let content {
            want = enterHDR(output, signal, content)
        }
        if want.signal == nil && output.colour.signal != nil { try leaveHDR(output) }
        if want != output.colour {
            output.colour = want
            onColourChanged?(output.name, want)
        }
    }

    func decideColour(_ o: Output, _ content: HDRContent?) -> OutputColour {
        guard let content else { return .sdr }
        if let r = o.refusedHDR, r.content == content { return .toneMapped(reason: r.reason) }
        guard let c = connectors.first(where: { $0.id == o.connectorID }) else { return .toneMapped(reason: "\(o.name) is gone") }
        let screen = HDRPlan.Screen(connector: c, capability: capability(of: c),
                                    planeFormats: resources.planes.first { $0.id == o.planeID }?.formats ?? [],
                                    rendererRefusal: renderer.deepRefusal)
        return HDRPlan.decide(content, on: screen, settings: options.hdr)
    }

    /// The screen's HDR capability: the configured one, else its EDID's (read once per EDID blob).
    func capability(of c: KMSConnector) -> DisplayHDRCapability? {
        if let configured = options.hdr.screens[c.name] { return configured }
        guard let blob = c.properties["EDID"], blob != 0 else { return nil }
        if let known = edidCapabilities[blob] { return known }
        let cap = (try? device.propertyBlob(UInt32(truncatingIfNeeded: blob))).flatMap { DisplayHDRCapability.parse(edid: $0) }
        edidCapabilities[blob] = cap
        return cap
    }

    /// Switches `o` to `signal` when a TEST_ONLY commit takes it; else the content is tone mapped,
    /// and the refusal is kept for this content (not asked again each frame).
    func enterHDR(_ o: Output, _ signal: HDRSignal, _ content: HDRContent) -> OutputColour {
        if o.colour == .hdr(signal) { return o.colour }
        var signal = signal
        let format = CanvasFormat.xrgb2101010(signal.range)
        do {
            // The buffers first: a blob made before a refused buffer would be left behind.
            let ring = try o.bufferFormat == format ? nil : makeRing(o, format)
            let blob = try device.createPropertyBlob(signal.metadata.bytes)
            var bpcs = [signal.maxBPC]
            if let b = signal.maxBPC, b > 10 { bpcs.append(10) }
            var lastError: KMSError?
            for bpc in bpcs {
                signal.maxBPC = bpc
                let changes = hdrAssignments(o, blob: blob, signal: signal)
                do {
                    let modeset = try testConnectorChange(o, changes, framebuffer: ring?.framebuffers[0].id)
                    commitColourChange(o, changes: changes, blob: blob, ring: ring, modeset: modeset)
                    o.refusedHDR = nil
                    return .hdr(signal)
                } catch let e as KMSError {
                    lastError = e
                }
            }
            try? device.destroyPropertyBlob(blob)
            let reason = "the driver refused HDR on \(o.name): \(lastError.map { "\($0)" } ?? "")"
            o.refusedHDR = (content, reason)
            return .toneMapped(reason: reason)
        } catch {
            let reason = "no 10-bit buffers for \(o.name): \(error)"
            o.refusedHDR = (content, reason)
            return .toneMapped(reason: reason)
        }
    }

    /// Back to SDR: no metadata, Colorspace and max bpc as found at start, 8-bit buffers.
    func leaveHDR(_ o: Output) throws {
        let changes = sdrAssignments(o)
        let ring = try makeRing(o, .xrgb8888)
        let modeset: Bool
        do {
            modeset = try testConnectorChange(o, changes, framebuffer: ring.framebuffers[0].id)
        } catch let e as KMSError {
            throw KMSDisplayError.commitRejected(path: device.path, outputs: [o.name], error: e)
        }
        commitColourChange(o, changes: changes, blob: 0, ring: ring, modeset: modeset)
    }

    /// The connector's values for `signal`.
    func hdrAssignments(_ o: Output, blob: UInt32, signal: HDRSignal) -> [AtomicRequest.Assignment] {
        var a = [AtomicRequest.Assignment(objectID: o.connectorID, property: HDRConnectorProperty.metadata, value: UInt64(blob))]
        if let v = signal.colorspace { a.append(.init(objectID: o.connectorID, property: HDRConnectorProperty.colorspace, value: v)) }
        if let v = signal.maxBPC { a.append(.init(objectID: o.connectorID, property: HDRConnectorProperty.maxBPC, value: v)) }
        return a
    }

    /// The connector's SDR values: no metadata blob, and Colorspace and max bpc as found at start.
    func sdrAssignments(_ o: Output) -> [AtomicRequest.Assignment] {
        let found = restoreState.resources.connectors.first { $0.id == o.connectorID }?.properties ?? [:]
        let now = connectors.first { $0.id == o.connectorID }?.properties ?? found
        var a: [AtomicRequest.Assignment] = []
        if now[HDRConnectorProperty.metadata] != nil {
            a.append(.init(objectID: o.connectorID, property: HDRConnectorProperty.metadata, value: 0))
        }
        for name in [HDRConnectorProperty.colorspace, HDRConnectorProperty.maxBPC] where now[name] != nil {
            a.append(.init(objectID: o.connectorID, property: name, value: found[name] ?? now[name]!))
        }
        return a
    }

    /// A TEST_ONLY commit of `changes` with `framebuffer` (nil: the one shown) on the primary
    /// plane: without a modeset when the output is lit, then with one. Returns whether a modeset
    /// is needed; throws the last refusal.
    func testConnectorChange(_ o: Output, _ changes: [AtomicRequest.Assignment], framebuffer: UInt32?) throws -> Bool {
        var request = AtomicRequest()
        if o.needsModeset { setModeset(o, in: &request) }
        let fb = framebuffer ?? (o.onScreen ?? o.queued).map { o.framebufferIDs[$0] }
        if let fb { setPlane(o.planeID, fb: fb, crtc: o.crtcID, source: (o.mode.width, o.mode.height),
                             rect: PixelRect(x: 0, y: 0, width: o.mode.width, height: o.mode.height), in: &request) }
        for c in changes { request.set(c.objectID, c.property, c.value) }
        if !o.needsModeset, (try? device.atomicCommit(request, flags: [.testOnly, .nonBlock])) != nil { return false }
        if !o.needsModeset { setModeset(o, in: &request) }
        try device.atomicCommit(request, flags: [.testOnly, .allowModeset])
        return true
    }

    /// Takes a checked change: its values go with the next commit (a modeset when the test needed
    /// one), the new buffers replace the old ones (kept until their last flip is done).
    func commitColourChange(_ o: Output, changes: [AtomicRequest.Assignment], blob: UInt32,
                            ring: (buffers: [ScanoutBuffer], framebuffers: [KMSFramebuffer])?, modeset: Bool) {
        o.pendingConnector = changes
        if o.staleBlob != 0 { try? device.destroyPropertyBlob(o.staleBlob) }
        o.staleBlob = o.hdrBlob
        o.hdrBlob = blob
        if modeset { o.needsModeset = true }
        guard let ring else { return }
        o.retired += o.buffers.map { $0 as AnyObject } + o.framebuffers.map { $0 as AnyObject }
        o.retiredCommitted = false
        o.buffers = ring.buffers
        o.framebuffers = ring.framebuffers
        o.onScreen = nil
        o.queued = nil
    }

    /// After a commit that carried `o`'s connector changes: the metadata blob they replaced is
    /// destroyed, and the buffers they retired go once the flip is done.
    func connectorChangesCommitted(_ o: Output) {
        guard !o.pendingConnector.isEmpty else { return }
        o.pendingConnector = []
        if o.staleBlob != 0 { try? device.destroyPropertyBlob(o.staleBlob) }
        o.staleBlob = 0
        o.retiredCommitted = !o.retired.isEmpty
    }
}
