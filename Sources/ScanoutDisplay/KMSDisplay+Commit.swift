import ScanoutCore
import ScanoutKMS

/// Committing a frame: tested first, the output filters' property changes (the screen's and the
/// zones') riding along when they are taken, paced by the previous flips and a held commit, and captured by writeback.
extension KMSDisplay {
    /// `TEST_ONLY` first (unless done), then the real commit with a flip event per CRTC, after
    /// the previous flips of these outputs completed; with capture, the writeback too. The output
    /// filter's connector property changes ride along when a `TEST_ONLY` commit (allowing a
    /// modeset) takes them; refused, the frame goes without them. Either way the filter is told.
    func commit(_ request: AtomicRequest, outputs touched: [Output], tested: Bool = false) throws {
        guard !touched.isEmpty else { return }
        var request = request
        var modeset = touched.contains { $0.needsModeset }
        var wbConnector: UInt32?
        if let wb = writeback {
            if modeset { request.set(wb.connectorID, "CRTC_ID", UInt64(touched[0].crtcID)) }
            request.set(wb.connectorID, "WRITEBACK_FB_ID", UInt64(wb.fb.id))
            wbConnector = wb.connectorID
        }
        let names = touched.map(\.name)
        // The screen's filter's changes and every zone's, merged (KMSFilterChanges).
        var filters: [any OutputFilter] = outputFilter.map { [$0] } ?? []
        filters += zoneFilters.keys.sorted().compactMap { zoneFilters[$0] }
        let asked = filters.map { (filter: ObjectIdentifier($0), changes: $0.propertyChanges()) }
        let changes = filterChanges.merged(asked)
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
        noteDrawTime(modeset: modeset)
        try waitForFlips(touched)
        if let hold = commitHold {
            commitHold = nil
            if clock.now() < hold { clock.sleep(until: hold) }
        }
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
            connectorChangesCommitted(o)
        }
        if asked.contains(where: { !$0.changes.isEmpty }) {
            if changesRefused == nil { filterChanges.committed(asked) }
            for (f, a) in zip(filters, asked) where !a.changes.isEmpty { f.propertyChangesCommitted(a.changes, error: changesRefused) }
        }
        if let fence { try captureWriteback(fence) }
    }

    /// The draw's time, for `commitLead`: from the present's call to here, before any wait. Not a
    /// modeset's (the first present allocates and tests the whole pipeline: 0.7 s in the vkms
    /// guest, which made the next two seconds of frames start that much early and reach the
    /// screen up to 0.4 s before their time), and no more than two refreshes of any one draw: an
    /// outlier moves the estimate by a bounded step. A clock set back (a test's) counts as the
    /// longest draw.
    private func noteDrawTime(modeset: Bool) {
        guard let s = drawStarted else { return }
        let cap = 2 * Double(refreshInterval.nanosecondCount)
        let elapsed = Double((clock.now() - s).nanosecondCount)
        let d = elapsed < 0 ? cap : min(elapsed, cap)
        if !modeset { drawEstimate = drawEstimate.map { $0 * 0.9 + d * 0.1 } ?? d }
        drawStarted = nil
    }

    /// Waits for the writeback connector to finish the frame just committed and hands it on.
    private func captureWriteback(_ fence: KMSFence) throws {
        guard let wb = writeback else { return }
        guard try fence.wait(timeoutMs: 5000) else { throw KMSDisplayError.bufferFailed("writeback capture did not complete in 5 s") }
        let image = try renderer.read(wb.buffer)
        onCapture?(counters.captures, image)
        counters.captures += 1
    }
}
