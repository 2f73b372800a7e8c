import ScanoutCore
import ScanoutDecode
import ScanoutDisplay

// Showing and dropping frames, and the figures kept about them.

extension PlaybackSession {
    /// Shows `f` now, outside the timeline (a seek's target while paused, a slate).
    public func presentNow(_ f: VideoFrame, layout: FrameLayout? = nil) throws {
        let p0 = clock.now()
        do {
            try display.present(f, layout: layout ?? self.layout ?? FrameLayout(orientation: orientation))
        } catch {
            throw PresentError(display: display.description, underlying: error)
        }
        let seconds = (clock.now() - p0).secondsValue
        stats.presentSeconds += seconds
        stats.framesPresented += 1
        observer?.framePresented(seconds: seconds)
    }

    /// Shows `f`; `target`: when it was due (nil: untimed); `commitAt`: its commit was held
    /// until then.
    func show(_ f: VideoFrame, media: Double, target: ClockTime?, commitAt: ClockTime? = nil) throws {
        let p0 = clock.now()
        try presentNow(f)
        position = media
        lastPresentedPts = f.pts
        let tb = reader?.video.timeBase.doubleValue ?? 0
        lastPresentedLength = f.duration > 0 && tb > 0 ? Double(f.duration) * tb * 1e9 : nil
        lastPresentedTarget = target
        // With vblank timestamps the frame reaches the screen at the first vblank after its
        // commit, which comes the draw's time after the present's call.
        let grid = display.vblankSource.map(VBlankGrid.init)
        let flip = grid.flatMap { $0.vblank(after: max(p0 + $0.commitLead, commitAt ?? .zero)) }
        lastPresentedShown = flip ?? clock.now()
        if let target {
            let shown = flip ?? p0
            stats.pacingDeviations.append(shown > target ? shown - target : target - shown)
            if let w = deviationWindow, stats.pacingDeviations.count >= 2 * w {
                stats.pacingDeviations.removeFirst(stats.pacingDeviations.count - w)
            }
        }
    }

    /// Counts `f` as dropped (the scheduler judged it late).
    func dropped(_ f: VideoFrame, media: Double) -> PlaybackStep {
        stats.framesDropped += 1
        observer?.frameDropped()
        return .dropped(pts: f.pts, media: media)
    }

    /// Counts a move of the timeline to a late frame.
    func count(_ rebase: PresentScheduler.Rebase?) {
        switch rebase {
        case .network:
            stats.networkLateFrames += 1
        case .liveSlip(let seconds):
            stats.liveSlips += 1
            stats.liveSlipSeconds += seconds
        case nil:
            break
        }
    }

    /// Copies the current figures (decoder errors and bytes brought up to date).
    public func currentStats() -> PlaybackStats {
        refreshReaderStats()
        return stats
    }

    func retireReader() {
        guard let reader else { return }
        earlierErrors = add(earlierErrors, reader.decodeStats)
        earlierBytes += reader.bytesRead
        self.reader = nil
        refreshReaderStats()
    }

    func refreshReaderStats() {
        if let transfers { stats.transfers = transfers.counts }
        stats.decodeErrors = reader.map { add(earlierErrors, $0.decodeStats) } ?? earlierErrors
        stats.bytesRead = earlierBytes + (reader?.bytesRead ?? 0)
    }

    private func add(_ a: DecodeStats, _ b: DecodeStats) -> DecodeStats {
        var s = a
        s.rejectedPackets += b.rejectedPackets
        s.concealedFrames += b.concealedFrames
        s.loggedErrors += b.loggedErrors
        s.missingReferenceErrors += b.missingReferenceErrors
        s.framesDecoded += b.framesDecoded
        return s
    }
}
