import ScanoutKMS
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutRender

// Native planes: a decoded DMA-BUF frame shown on a plane as it is, after a TEST_ONLY commit
// accepts it, and kept referenced (its framebuffer and the memory behind it) until the flip that
// replaces it completes; otherwise composited with the verdicts and orientation of the frame.

extension KMSDisplay {
    /// Shows a DMA-BUF frame directly on a plane of the (single) output when the device accepts
    /// it; otherwise draws it with `fallback` (the renderer's path for that frame) and presents
    /// that. `keepAlive` holds the frame's memory: it is released once another frame has
    /// replaced it on the screen.
    @discardableResult
    /// An HDR frame (`hdr`) goes on a plane when the screen shows HDR (`prepareColour`) and the
    /// plane converts BT.2020 Y'CbCr (`COLOR_ENCODING`); `fullRange` is its `COLOR_RANGE`.
    public func presentNative(_ frame: DMABufFrame, keepAlive: AnyObject, orientation: Orientation, hdr: HDRContent? = nil,
                              fullRange: Bool = false, fallback: () throws -> VideoFrame?) throws -> KMSFramePath {
        try handleHotplugIfNeeded()
        // Judged once per output and frame, whichever path the frame then takes.
        let censored = censorReasons()
        func composite(because reason: String) throws -> KMSFramePath {
            try self.composite(fallback, orientation: orientation, censored: censored, because: reason)
        }
        if let reason = nativeRefusal(frame, orientation: orientation, censored: censored, hdr: hdr) {
            return try composite(because: reason)
        }
        let output = outputs[0]
        if let reason = try nativeColourRefusal(output, hdr) { return try composite(because: reason) }
        // The resources as last read (at start and on hotplug): no connector or plane re-read per frame.
        let res = resources
        guard let crtcIndex = res.crtcIndex(of: output.crtcID) else { return try composite(because: "CRTC gone") }
        let rect = Composition.destination(sourceWidth: frame.width, sourceHeight: frame.height, sampleAspectRatio: Rational(1, 1),
                                          orientation: .identity, outputWidth: output.mode.width, outputHeight: output.mode.height,
                                          mode: composition.scaling)
        let fullScreen = rect == PixelRect(x: 0, y: 0, width: output.mode.width, height: output.mode.height)
        let candidates = res.planes.filter { p in
            p.canUse(crtcIndex: crtcIndex) && p.formats.contains(frame.fourcc) && p.type != .cursor
                && (p.type == .overlay || (fullScreen && p.id == output.planeID))
                && (frame.modifier == nil || p.modifiers[frame.fourcc].map { $0.contains(frame.modifier!) } ?? true)
                && (hdr == nil || Self.bt2020Encoding(p) != nil)
        }
        guard !candidates.isEmpty else {
            return try composite(because: "no plane takes \(FourCC.name(frame.fourcc))\(hdr == nil ? "" : " as BT.2020 Y'CbCr (COLOR_ENCODING)")"
                                 + "\(fullScreen ? "" : " scaled to \(rect)")")
        }
        let fb: KMSFramebuffer
        do {
            fb = try KMSFramebuffer(device: device, KMSFramebufferDescription(
                width: frame.width, height: frame.height, format: frame.fourcc, modifier: frame.modifier,
                planes: frame.planes.map { KMSFramebufferPlane(memory: .dmaBuf($0.buffer), offset: $0.offset, pitch: $0.pitch) }))
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
            setPlane(plane.id, fb: fb.id, crtc: output.crtcID, source: (frame.width, frame.height), rect: rect, in: &request)
            // A primary plane a turned canvas left turned shows the frame upright.
            let unturn = plane.id == output.planeID && output.planeRotation.map { $0 != .rotate0 } == true
            if unturn { request.set(plane.id, "rotation", KMSRotation.rotate0.rawValue) }
            setPlaneColour(plane, hdr: hdr != nil, fullRange: fullRange, in: &request)
            for a in output.pendingConnector { request.set(a.objectID, a.property, a.value) }
            do {
                try device.atomicCommit(request, flags: testFlags(output))
            } catch {
                lastError = "\(error)"
                continue
            }
            try waitForFlips([output])
            try commit(request, outputs: [output], tested: true)
            output.nativeQueued = (fb, plane.id, keepAlive)
            if unturn { output.planeRotation = .rotate0 }
            output.queued = nil
            counters.native += 1
            return .native
        }
        return try composite(because: "TEST_ONLY refused it: \(lastError)")
    }

    /// Why `frame` cannot go on a plane as it is, or nil when it may be tried.
    func nativeRefusal(_ frame: DMABufFrame, orientation: Orientation, censored: [UInt32: String], hdr: HDRContent? = nil) -> String? {
        if outputs.count != 1 { return "\(outputs.count) outputs (a plane shows one)" }
        if let reason = censored[outputs[0].connectorID] { return "censored (\(reason))" }
        if hdr == nil, outputs[0].colour.signal != nil { return "the screen leaves HDR through a composited frame" }
        if !orientation.isIdentity { return "rotation needs composition" }
        if composition.overlay != nil { return "an overlay image needs composition" }
        if subtitles?.enabled == true { return "subtitles need composition" }
        return nil
    }

    /// Draws the frame a plane did not take, turned as it would have been shown, with the verdicts
    /// already made for this frame.
    func composite(_ fallback: () throws -> VideoFrame?, orientation: Orientation, censored: [UInt32: String],
                           because reason: String) throws -> KMSFramePath {
        counters.nativeRejected += 1
        lastNativeRejection = reason
        guard let frame = try fallback() else {
            throw KMSDisplayError.bufferFailed("the frame could not go on a plane (\(reason)) and there is no picture to composite")
        }
        try drawAndCommit(frame, orientation: orientation, censored: censored)
        return .composited
    }

    /// A composited frame replaced the native one: its framebuffer goes, and its memory with it.
    func releaseNative(_ o: Output, keepQueued: Bool) {
        o.nativeOnScreen = nil
        if !keepQueued { o.nativeQueued = nil }
    }
}
