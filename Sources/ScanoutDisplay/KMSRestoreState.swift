import ScanoutKMS

/// What the screens showed before a display started: every CRTC's `ACTIVE` and mode (the blob's
/// bytes, since the blob itself may die with its creator), the planes' framebuffers and geometry,
/// and the connectors' routing. Read once, at start.
struct KMSRestoreState {
    let resources: KMSResources
    let modes: [UInt32: [UInt8]]

    init(device: any KMSDevice, resources: KMSResources) {
        self.resources = resources
        var modes: [UInt32: [UInt8]] = [:]
        for crtc in resources.crtcs {
            if let blob = crtc.properties["MODE_ID"], blob != 0, let bytes = try? device.propertyBlob(UInt32(truncatingIfNeeded: blob)) {
                modes[crtc.id] = bytes
            }
        }
        self.modes = modes
    }

    /// The request that puts back the CRTCs, planes and connectors `outputs` use (and the writeback
    /// connector's routing), and the mode blobs it created for that (to destroy once committed).
    func request(for outputs: [KMSDisplay.Output], writebackConnector: UInt32?, device: any KMSDevice) -> (AtomicRequest, blobs: [UInt32]) {
        var request = AtomicRequest()
        var blobs: [UInt32] = []
        for o in outputs {
            guard let crtc = resources.crtcs.first(where: { $0.id == o.crtcID }) else { continue }
            var modeBlob: UInt32 = 0
            if let bytes = modes[crtc.id], let b = try? device.createPropertyBlob(bytes) { modeBlob = b; blobs.append(b) }
            request.set(crtc.id, "MODE_ID", UInt64(modeBlob))
            request.set(crtc.id, "ACTIVE", crtc.properties["ACTIVE"] ?? 0)
            for plane in resources.planes where plane.id == o.planeID || (o.nativeOnScreen?.plane == plane.id) || (o.nativeQueued?.plane == plane.id) {
                // The rotation as found, when this display turned the plane.
                let turned = plane.id == o.planeID && o.planeRotation != nil ? ["rotation"] : []
                for name in ["FB_ID", "CRTC_ID", "SRC_X", "SRC_Y", "SRC_W", "SRC_H", "CRTC_X", "CRTC_Y", "CRTC_W", "CRTC_H"] + turned {
                    if let v = plane.properties[name] { request.set(plane.id, name, v) }
                }
            }
            if let c = resources.connectors.first(where: { $0.id == o.connectorID }) {
                request.set(c.id, "CRTC_ID", c.properties["CRTC_ID"] ?? 0)
            }
        }
        if let id = writebackConnector, let c = resources.connectors.first(where: { $0.id == id }) {
            request.set(c.id, "CRTC_ID", c.properties["CRTC_ID"] ?? 0)
            request.set(c.id, "WRITEBACK_FB_ID", 0)
        }
        return (request, blobs)
    }
}

extension KMSDisplay {
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
        var (request, blobs) = restoreState.request(for: outputs, writebackConnector: writeback?.connectorID, device: device)
        // A screen left in HDR would stay so for what is shown next (the blob 0, values as found).
        for o in outputs where o.hdrBlob != 0 || o.colour.signal != nil { request.add(sdrAssignments(o)) }
        for id in colourPlanes { setFoundColour(of: id, in: &request) }
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
            for o in outputs { o.switchOff(in: &off, connector: true) }
            if let wb = writeback { off.set(wb.connectorID, "CRTC_ID", 0) }
            let done = (try? device.atomicCommit(off, flags: [.allowModeset])) != nil
            restoreReport = "could not restore the previous state (\(error)); "
                + (done ? "switched \(outputs.map(\.name).joined(separator: ", ")) off" : "left the screens as they were")
        }
        for b in blobs { try? device.destroyPropertyBlob(b) }
        for o in outputs { releaseOutput(o) }
        writeback = nil   // its framebuffer is removed with it
    }
}
