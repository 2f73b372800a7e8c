import Foundation
import ScanoutDisplay
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ScanoutRender

// MARK: Items: opened, made current, followed

extension PlayerEngine {
    /// Lets the current item go: its sound, subtitles, reader and any item being prepared.
    func release() {
        wait = nil
        preparer.cancel()
        preloading = false
        upcoming = .none
        audio.detach(session: session, flush: true)
        session.clear()
        current = nil
        subtitles.stop(display: display)
        awaitingFirstFrame = nil
    }

    /// The item after `i` under the repeat mode; `forced` (a user's "next") moves on even with
    /// repeat one.
    func following(_ i: Int, forced: Bool = false) -> Int? {
        switch repeatMode {
        case .one where !forced: return i
        case .all, .one: return (i + 1) % playlist.count
        case .none: return i + 1 < playlist.count ? i + 1 : nil
        }
    }

    func takePrepared(_ i: Int) -> Result<PreparedItem, MediaError> {
        let item: PlaylistItem
        let demuxer: DemuxerOptions
        switch opened(playlist[i]) {
        case .success(let local): (item, demuxer) = local
        case .failure(let e):
            preparer.cancel()
            return .failure(e)
        }
        if !preloading, preparer.index == i, preparer.item == item, let r = preparer.take() { return r }
        preloading = false
        preparer.cancel()
        return PreparedItem.open(item, index: i, demuxer: demuxer, decoder: itemDecoderOptions)
    }

    /// `item` as it is opened, with its demuxer's options: from its local copy when there is
    /// one, with that copy's content key (for this item only).
    func opened(_ item: PlaylistItem) -> Result<(item: PlaylistItem, demuxer: DemuxerOptions), MediaError> {
        guard let local = localInput?(item.source) else { return .success((item, configuration.demuxer)) }
        return local.map { input in
            var copy = item
            copy.source = input.source
            var demuxer = configuration.demuxer
            demuxer.decryptionKey = input.decryptionKey
            return (copy, demuxer)
        }
    }

    /// The item that follows the current one is to be prepared once the current one has settled
    /// (`upcomingSettle`).
    func scheduleUpcoming() {
        upcoming = .wanted
    }

    /// After a frame is shown: starts preparing the next item when it is due, or sets when it
    /// is, counted from the current item's first frame.
    func prepareUpcomingWhenSettled() {
        let now = clock.now()
        switch upcoming {
        case .none:
            return
        case .wanted:
            let quarter = duration.map { Duration.nanoseconds(inSeconds: max($0, 0) / 4 / max(session.rate, 0.01)) } ?? upcomingSettle
            upcoming = .due(now + min(upcomingSettle, quarter))
        case .due(let due):
            guard now >= due else { return }
            upcoming = .none
            prepareUpcoming()
        }
    }

    /// Starts preparing the item that follows the current one, if there is one.
    private func prepareUpcoming() {
        guard let i = index, let n = following(i), case .success(let local) = opened(playlist[n]) else { preparer.cancel(); return }
        if !preloading, preparer.index == n, preparer.item == local.item { return }
        preloading = false
        preparer.start(local.item, index: n, demuxer: local.demuxer, decoder: itemDecoderOptions)
    }

    private func layout(for p: PreparedItem) -> FrameLayout {
        FrameLayout(orientation: p.item.orientation(stream: p.video.orientation), scaling: p.item.scaling ?? configuration.scaling)
    }

    /// `p` as the playlist names it (the item opened may be a local copy of it).
    func listed(_ p: PreparedItem) -> PlaylistItem { playlist.indices.contains(p.index) ? playlist[p.index] : p.item }

    /// Makes `p` the current item.
    func become(_ p: PreparedItem, gapless: Bool) {
        let durationBefore = duration
        current = p
        index = p.index
        session.groupEpoch += 1
        slateShown = false
        if configuration.timeshift.seconds > 0, LiveInputOptions.handles(p.item.source) {
            p.startTimeshift(configuration.timeshift, audioTrack: PlayerAudio.track(of: p.reader, item: p.item, settings: configuration.audio)?.index)
        }
        // Untimed (every frame as fast as it decodes), nothing waits for the network.
        if configuration.timed { p.startReadAhead() }
        session.layout = layout(for: p)
        display.overlay = p.item.overlay ?? configuration.overlay
        startSubtitles(p)
        let named = listed(p)
        onItemChanged?(named)
        if wait?.insideRead == true {
            // The item that stalled is gone (it failed, or another was asked for): its buffering ends.
            wait = nil
            if state == .buffering { set(.playing) }
            emit(.buffering(false))
        }
        watchStalls(p.reader)
        session.continueWith(p.reader, firstFrame: p.firstFrame, originPts: p.originPts, gapless: gapless)
        for e in audio.attach(reader: p.reader, item: p.item, settings: configuration.audio, session: session, gapless: gapless,
                              live: p.timeshift != nil, early: p.takeEarlyAudio()) { emit(e) }
        awaitingFirstFrame = FirstFrameRequest(startedAt: gapless ? nil : (requestStartedAt ?? clock.now()))
        requestStartedAt = nil
        emit(.itemChanged(index: p.index, source: named.source))
        emit(.prepared(item: p.index, source: named.source, width: p.video.width, height: p.video.height,
                       codec: p.video.codecName, duration: p.video.durationSeconds))
        if p.video.durationSeconds != durationBefore || !gapless { emit(.durationChanged(p.video.durationSeconds)) }
    }

    /// The outcome of trying items in turn: the first that opened, or how many failed and why.
    struct Attempt {
        var item: PreparedItem?
        var failures = 0
        var firstError: PlayerError?

        /// What a caller throws when nothing opened: the item's own error for a playlist of one.
        func error(count: Int) -> PlayerError? {
            guard item == nil, failures > 0 else { return nil }
            return count == 1 ? firstError : .noPlayableItem(failures: failures)
        }
    }

    /// Opens item `start`, then the ones `next` names after it, until one opens or every item of
    /// a playlist of `count` failed once. Each failure is counted and reported (`error`, skipped
    /// when another item is tried after it). The one retry loop of `load`, `prepareCurrent` and
    /// `advance`.
    func firstPlayable(from start: Int?, count: Int, next: (Int) -> Int?,
                       open: (Int) -> Result<PreparedItem, MediaError>) -> Attempt {
        var attempt = Attempt()
        var candidate = start
        while let i = candidate, attempt.failures < count {
            switch open(i) {
            case .success(let p):
                attempt.item = p
                return attempt
            case .failure(let e):
                attempt.failures += 1
                itemsFailed += 1
                if attempt.firstError == nil { attempt.firstError = .media(item: i, e) }
                candidate = next(i)
                let skipped = candidate != nil && attempt.failures < count
                emit(.error(message: e.description, item: i, skipped: skipped))
            }
        }
        return attempt
    }

    /// preparing → ready with item `start`, or the first playable item after it (bad ones reported
    /// and skipped); error (slate, retry later) when none can be played.
    func prepareCurrent(_ start: Int, userInitiated: Bool) throws {
        set(.preparing)
        let count = playlist.count
        let attempt = firstPlayable(from: start, count: count, next: { ($0 + 1) % count }, open: takePrepared)
        if let p = attempt.item {
            become(p, gapless: false)
            setReasons(reasons.subtracting([.noSource, .channelInvalid]))
            set(.ready(resumeAt: nil))
            return
        }
        index = start
        enterFailure()
        throw attempt.error(count: count)!
    }

    /// At the end of the current item: the next one (already prepared, so the switch shows no gap),
    /// or `ended`.
    func advance() {
        guard let i = index else { return }
        let count = playlist.count
        let wrap = repeatMode != .none
        let attempt = firstPlayable(from: following(i), count: count,
                                    next: { wrap ? ($0 + 1) % count : ($0 + 1 < count ? $0 + 1 : nil) }, open: takePrepared)
        if let p = attempt.item {
            become(p, gapless: true)
            scheduleUpcoming()
            return
        }
        if attempt.failures >= count || (attempt.failures > 0 && wrap) {
            enterFailure()
            return
        }
        // The last item's sound plays on to its last sample.
        audio.finish()
        set(.ended)
        emit(.ended)
    }
}
