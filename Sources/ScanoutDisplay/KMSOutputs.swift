import ScanoutKMS
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutRender

// Output planning: which connectors get an output, with which CRTC, primary plane and mode; the
// writeback connector for capture; outputs added and released on hotplug.

extension KMSDisplay {
    /// One screen being driven.
    final class Output {
        let connectorID: UInt32
        let name: String
        let crtcID: UInt32
        let planeID: UInt32
        let mode: KMSMode
        var modeBlob: UInt32 = 0
        var buffers: [ScanoutBuffer] = []
        /// One registered framebuffer per buffer, removed with the output.
        var framebuffers: [KMSFramebuffer] = []
        var framebufferIDs: [UInt32] { framebuffers.map(\.id) }
        var onScreen: Int?
        var queued: Int?
        var flipPending = false
        var needsModeset = true
        /// A native frame shown or queued: its framebuffer, the plane and what keeps it alive.
        var nativeOnScreen: (fb: KMSFramebuffer, plane: UInt32, keep: AnyObject)?
        var nativeQueued: (fb: KMSFramebuffer, plane: UInt32, keep: AnyObject)?
        /// The primary plane's `rotation` as this display last set it; nil: never set (left as found).
        var planeRotation: KMSRotation?
        /// How a turned canvas is shown on this output, once decided (`planeRotation(for:on:)`).
        var turnChoice: (turn: Orientation, path: KMSTurnPath)?
        /// HDR (`KMSDisplay+HDR`): what the output shows (decided for `colourContent`), the
        /// connector values the next commit carries, the metadata blob
        /// set (and the one to destroy once replaced), buffers of the previous format kept until
        /// their last flip is done, and the HDR the driver refused for a content, with why.
        var colour: OutputColour = .sdr
        var colourContent: HDRContent?
        var pendingConnector: [AtomicRequest.Assignment] = []
        var hdrBlob: UInt32 = 0
        var staleBlob: UInt32 = 0
        var retired: [AnyObject] = []
        var retiredCommitted = false
        var refusedHDR: (content: HDRContent, reason: String)?
        /// The format of its buffers, as its colour asks.
        var bufferFormat: CanvasFormat { colour.signal.map { .xrgb2101010($0.range) } ?? .xrgb8888 }
        init(connectorID: UInt32, name: String, crtcID: UInt32, planeID: UInt32, mode: KMSMode) {
            self.connectorID = connectorID; self.name = name; self.crtcID = crtcID; self.planeID = planeID; self.mode = mode
        }

        /// Primary plane and CRTC off (and the connector unrouted, when it still exists).
        func switchOff(in request: inout AtomicRequest, connector: Bool) {
            request.set(planeID, "FB_ID", 0)
            request.set(planeID, "CRTC_ID", 0)
            request.set(crtcID, "ACTIVE", 0)
            request.set(crtcID, "MODE_ID", 0)
            if connector { request.set(connectorID, "CRTC_ID", 0) }
        }
    }

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
                $0.type == .primary && $0.canUse(crtcIndex: crtcIndex) && !usedPlanes.contains($0.id) && $0.formats.contains(FourCC.xrgb8888)
            }) else { throw KMSDisplayError.noPrimaryPlane(connector: c.name) }
            let mode = try chooseMode(connector: c, requested: options.mode)
            let crtcID = res.crtcs[crtcIndex].id
            usedCRTCs.insert(crtcID)
            usedPlanes.insert(plane.id)
            outputs.append(Output(connectorID: c.id, name: c.name, crtcID: crtcID, planeID: plane.id, mode: mode))
        }
        return outputs
    }

    func setUpWriteback(_ res: KMSResources) throws {
        guard let wb = res.connectors.first(where: { $0.typeName == "Writeback" }), let first = outputs.first else {
            throw KMSDisplayError.noWriteback(path: device.path)
        }
        let buffer = try renderer.makeCaptureBuffer(width: first.mode.width, height: first.mode.height)
        writeback = (wb.id, buffer, try KMSFramebuffer(device: device, buffer.framebuffer))
    }

    func handleHotplugIfNeeded() throws {
        try drainEvents()
        guard hotplugPending else { return }
        hotplugPending = false
        let res = try device.resources()
        resources = res
        var changes: [String] = []
        // Outputs whose screen went away: released (their CRTC switched off), playback goes on.
        for o in outputs {
            let c = res.connectors.first { $0.id == o.connectorID }
            guard c == nil || c!.connection != .connected else { continue }
            var request = AtomicRequest()
            o.switchOff(in: &request, connector: c != nil)
            if c != nil && o.hdrBlob != 0 { request.add(sdrAssignments(o)) }
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

    func releaseOutput(_ o: Output) {
        releaseNative(o, keepQueued: false)
        o.framebuffers = []
        o.buffers = []
        o.retired = []
        for b in [o.hdrBlob, o.staleBlob] where b != 0 { try? device.destroyPropertyBlob(b) }
        o.hdrBlob = 0
        o.staleBlob = 0
        if o.modeBlob != 0 { try? device.destroyPropertyBlob(o.modeBlob) }
        o.modeBlob = 0
    }
}
