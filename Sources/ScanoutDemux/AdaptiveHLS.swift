import CFFmpeg
import ScanoutCore

/// The variant choice of an HLS master playlist read by libavformat's `hls` demuxer: which
/// variant is read, what each segment measured (`SegmentMeter`), and the change of variant at a
/// keyframe, frame-exact.
///
/// How a change happens, and why this way: the `hls` demuxer stops reading a playlist whose
/// streams are all discarded only before its first packet is read (`recheck_discard_flags` closes
/// playlists on the first read only); once reading has begun, a discarded variant goes on being
/// downloaded. So a change opens a second format context on the same master playlist, discards
/// every stream but the new variant's before its first read (the demuxer then drops the other
/// playlists), and seeks it to the keyframe the old variant just reached (the demuxer restarts
/// the new playlist at the segment holding that time). Packets of the new variant before that
/// keyframe are dropped, the old context is closed, and the keyframe at the same presentation
/// time is the first packet handed out: variants whose keyframes align (the same GOP, segment
/// boundaries at keyframes) change with no frame lost or repeated.
///
/// **Abandoning a segment.** While a lower variant exists, the packets of the group of pictures
/// being read are held back while the segment it began in downloads; they go out once the next
/// keyframe comes or that segment was read to its end (the first group after the opening or a
/// seek is not held: the first picture waits for nothing). When the selector decides,
/// mid-segment, that the rest of the segment would come after the buffer ran dry
/// (`VariantSelector.duringSegment`), the change joins the lower variant at the held group's
/// keyframe (the last keyframe before which every packet came whole from the old variant), and
/// the held packets are dropped, never decoded: the old context, and with it the slow download,
/// is closed. A late segment none of whose packets came yet changes at its keyframe instead
/// (`pending`). The cost: up to one group of pictures more between the network and the decoder.
///
/// **The buffer level** in the decisions is `bufferedSeconds` when set (a read-ahead's level);
/// without it, the media handed out ahead of a clock that runs at 1x from the first packet
/// handed out (after the opening, a seek): what a player that starts at once and never pauses
/// would have buffered.
///
/// Used by the thread that owns its `Demuxer`.
final class AdaptiveHLS {
    let meter: SegmentMeter
    let variants: [HLSVariant]
    private var selector: VariantSelector
    private(set) var current: HLSVariant
    /// The last segment's measured throughput, bits a second.
    private(set) var throughput: Double?
    /// Every choice since the start: the start variant first, then each change.
    private(set) var switches: [VariantSwitch]
    /// Segments measured since the start.
    private(set) var segmentsMeasured = 0
    /// Segments abandoned mid-download since the start.
    private(set) var abandonedSegments = 0
    /// Why the last change that was decided did not happen (the new context failed to open).
    private(set) var lastRefusal: String?
    /// The media seconds buffered ahead of playback, from whoever knows (a read-ahead); called on
    /// the reading thread before each decision. Nil: the demuxer's own estimate.
    var bufferedSeconds: (@Sendable () -> Double)?
    /// The buffer level the last decision used, seconds.
    private(set) var lastBuffered: Double?
    /// A change decided, waiting for the next keyframe of the current variant.
    private var pending: (to: HLSVariant, reason: String, bandwidth: Double)?
    /// A change under way: packets of the new variant are dropped until its keyframe at `boundary`.
    private var joining: (to: HLSVariant, reason: String, bandwidth: Double, boundary: Int64, abandoned: Bool)?
    /// The highest presentation timestamp read.
    private var lastPts: Int64?
    /// The group of pictures being read, from its keyframe on: held until it is whole.
    private var held: [Packet] = []
    /// Packets of whole groups, handed out in order.
    private var ready: [Packet] = []
    /// Whether the group being read is held (decided at its keyframe).
    private var holdingGroup = false
    /// `meter.segmentsOpened` when the held group's keyframe was read: the group can be dropped
    /// for a late segment only while that segment is the one its keyframe came from (a segment
    /// begun after it holds none of its packets: the demuxer only needed its first bytes to
    /// see where the previous packet ended).
    private var groupSegment = 0
    /// An abandon decided while a read blocked (`shouldStop`), which stopped that read: carried
    /// out when the read returns.
    private var stopRequest: (to: HLSVariant, bandwidth: Double, reason: String)?
    /// Whether the demuxer's deadline asks `shouldStop` while reads block.
    private var stopInstalled = false
    /// The default buffer level's clock: the first packet handed out and when.
    private var clockStart: (pts: Int64, at: ClockTime)?
    /// The end of what was handed out (the highest presentation timestamp).
    private var handedOutEnd: Int64?

    init(meter: SegmentMeter, variants: [HLSVariant], selector: VariantSelector, start: HLSVariant, estimate: Double) {
        self.meter = meter
        self.variants = variants
        self.selector = selector
        current = start
        switches = [VariantSwitch(from: nil, to: start, bandwidth: estimate, reason: "start: the initial bandwidth estimate", pts: nil)]
        // Opening probes every variant at once; only segments of the variant played are measured.
        _ = meter.takeSamples()
        meter.estimator.reset()
    }

    /// The smoothed throughput estimate, bits a second; nil before enough was measured.
    var estimate: Double? { meter.estimator.estimate }

    /// After a seek: a change decided or under way is dropped (the next segments measured decide
    /// again), what was held is dropped, and keyframes count from where reading starts.
    func restart() {
        if let j = joining {
            // The new variant's context is already the one read.
            switches.append(VariantSwitch(from: current, to: j.to, bandwidth: j.bandwidth, reason: j.reason, pts: nil, abandonedSegment: j.abandoned))
            current = j.to
        }
        pending = nil
        joining = nil
        lastPts = nil
        held = []
        ready = []
        holdingGroup = false
        stopRequest = nil
        clockStart = nil
        handedOutEnd = nil
        _ = meter.takeSamples()
    }

    /// Moves the next packet to hand out into `packet` (empty); false when none is ready.
    func takeReady(into packet: Packet) -> Bool {
        guard !ready.isEmpty else { return false }
        let next = ready.removeFirst()
        withExtendedLifetime(next) { av_packet_move_ref(packet.pointer, next.pointer) }
        handedOut(packet)
        return true
    }

    /// At the end of the input the group held is whole: it is handed out (the first of it into
    /// `packet`, empty). False when nothing was held.
    func endOfInput(into packet: Packet) -> Bool {
        ready += held
        held = []
        return takeReady(into: packet)
    }

    /// Takes `packet`, just read from the active stream, and may change the demuxer's context
    /// (the next read then comes from the new variant). True when `packet` now holds the next
    /// packet to hand out (not necessarily the one read: that may be held); false when nothing
    /// is ready (read on).
    func admit(_ packet: Packet, demuxer: Demuxer) throws -> Bool {
        if let j = joining {
            guard packet.isKeyframe, let pts = packet.pts, pts >= j.boundary else { return false }
            joining = nil
            switches.append(VariantSwitch(from: current, to: j.to, bandwidth: j.bandwidth, reason: j.reason, pts: pts, abandonedSegment: j.abandoned))
            current = j.to
            lastPts = pts
            return keep(packet)
        }
        let tick = demuxer.video.timeBase.doubleValue
        if !stopInstalled {
            stopInstalled = true
            demuxer.deadline.stopReading = { [weak self] in self?.shouldStop(tick: tick) ?? false }
        }
        for sample in meter.takeSamples() {
            segmentsMeasured += 1
            throughput = sample.throughput
            let bandwidth = estimate ?? sample.throughput
            // A live window bounds what can be buffered (the distance to the live edge): there
            // the way up does not wait for the buffer.
            let level = demuxer.hasKnownEnd ? buffered(tick: tick) : nil
            if let (to, reason) = selector.next(current: current, throughput: bandwidth, buffered: level) {
                pending = (to, reason, bandwidth)
            }
        }
        if let p = pending, packet.isKeyframe, let pts = packet.pts, pts > (lastPts ?? .min) {
            pending = nil
            // The group before this keyframe is whole.
            ready += held
            held = []
            do {
                try demuxer.join(p.to, at: pts)
                joining = (p.to, p.reason, p.bandwidth, pts, false)
                packet.unref()
                return takeReady(into: packet)
            } catch {
                lastRefusal = "\(error)"
            }
        }
        if let pts = packet.pts { lastPts = max(lastPts ?? pts, pts) }
        let out = keep(packet)
        // Ready packets are of whole groups: abandoning drops only what is held.
        try checkSegment(demuxer: demuxer, tick: tick)
        return out
    }

    /// Whether packets are held until their group is whole: while a lower variant could take
    /// over a late segment, once the first group since the opening or a seek was handed out (it
    /// goes out as it comes: the first picture waits for no whole group).
    private var holdsBack: Bool {
        selector.options.abandonSegments && selector.ladder.first != current && handedOutEnd != nil
    }

    /// Adds `packet` (of the current variant, admitted) to what is held or ready, and puts the
    /// next packet to hand out into it; false when none is ready.
    private func keep(_ packet: Packet) -> Bool {
        if packet.isKeyframe {
            // The group before a keyframe is whole.
            ready += held
            held = []
            holdingGroup = holdsBack
            groupSegment = meter.segmentsOpened
        }
        if !holdingGroup, ready.isEmpty {
            handedOut(packet)
            return true
        }
        let kept = Packet()
        av_packet_move_ref(kept.pointer, packet.pointer)
        if holdingGroup { held.append(kept) } else { ready.append(kept) }
        if holdingGroup, groupSegment != meter.segmentsOpened || meter.lastEndedSegment >= groupSegment {
            // The group's segment was read to its end (what the demuxer still holds of it, its
            // last packets, came whole): what is held can no longer be dropped for a late
            // segment, so it waits no longer.
            ready += held
            held = []
            holdingGroup = false
        }
        return takeReady(into: packet)
    }

    /// The mid-segment decision: a change after the segment, or the segment abandoned (the held
    /// group dropped, the demuxer reading the lower variant from the group's keyframe).
    private func checkSegment(demuxer: Demuxer, tick: Double) throws {
        if let stop = stopRequest {
            // The read that came back with this packet was stopped: the old context cannot read on.
            stopRequest = nil
            guard try abandon(for: stop.to, bandwidth: stop.bandwidth, reason: stop.reason, demuxer: demuxer) else {
                throw MediaError.readFailed(input: demuxer.input, reason: "abandoning a late segment for \(stop.to): no group of pictures to drop")
            }
            return
        }
        guard joining == nil, let progress = meter.progress else { return }
        let level = buffered(tick: tick)
        switch selector.duringSegment(current: current, progress: progress, estimate: estimate, buffered: level) {
        case nil:
            return
        case .downAfter(let to, let bandwidth, let reason):
            if pending == nil, to != current { pending = (to, reason, bandwidth) }
        case .abandon(let to, let bandwidth, let reason):
            if !canAbandon, pending == nil {
                // Nothing of the late segment held (the first group, or a segment whose first
                // packet is not read yet): the change waits for the next keyframe.
                pending = (selector.carried(by: bandwidth), "throughput below the current variant's bitrate: a segment came late", bandwidth)
            }
            _ = try? abandon(for: to, bandwidth: bandwidth, reason: reason, demuxer: demuxer)
        }
    }

    /// Whether a late segment can be abandoned now: a group of pictures is held whose keyframe
    /// came from the segment being downloaded.
    private var canAbandon: Bool {
        holdingGroup && groupSegment == meter.segmentsOpened && held.first?.isKeyframe == true && held.first?.pts != nil
    }

    /// Abandons the segment being downloaded: joins `to` at the held group's keyframe (the last
    /// keyframe before which everything came whole) and drops the group. False when nothing can
    /// be abandoned; throws when the new context fails to open (`lastRefusal` says why).
    private func abandon(for to: HLSVariant, bandwidth: Double, reason: String, demuxer: Demuxer) throws -> Bool {
        guard canAbandon, let boundary = held.first?.pts else { return false }
        do {
            try demuxer.join(to, at: boundary)
        } catch {
            lastRefusal = "\(error)"
            throw error
        }
        held = []
        // A change decided for the next keyframe gives way.
        pending = nil
        joining = (to, reason, bandwidth, boundary, true)
        lastPts = boundary
        abandonedSegments += 1
        return true
    }

    /// Asked by the demuxer's deadline while a read blocks: true (and the read is stopped) when
    /// the segment being downloaded should be abandoned now, not once its next packet came.
    private func shouldStop(tick: Double) -> Bool {
        guard stopRequest == nil, joining == nil, canAbandon, let progress = meter.progress else { return false }
        let level = buffered(tick: tick)
        guard case .abandon(let to, let bandwidth, let reason)? = selector.duringSegment(current: current, progress: progress, estimate: estimate, buffered: level) else {
            return false
        }
        stopRequest = (to, bandwidth, reason)
        return true
    }

    /// After a read `shouldStop` stopped came back with no packet: the abandon is carried out
    /// (the old context cannot read on).
    func abandonStopped(demuxer: Demuxer) throws {
        guard let stop = stopRequest else { return }
        stopRequest = nil
        guard try abandon(for: stop.to, bandwidth: stop.bandwidth, reason: stop.reason, demuxer: demuxer) else {
            throw MediaError.readFailed(input: demuxer.input, reason: "abandoning a late segment for \(stop.to): no group of pictures to drop")
        }
    }

    /// The media seconds ahead of playback now: `bufferedSeconds`, or the default estimate.
    private func buffered(tick: Double) -> Double {
        let level: Double
        if let bufferedSeconds {
            level = bufferedSeconds()
        } else if let start = clockStart, let end = handedOutEnd {
            let played = (ClockTime.now() - start.at).secondsValue
            level = max(Double(end - start.pts) * tick - played, 0)
        } else {
            level = 0
        }
        lastBuffered = level
        return level
    }

    private func handedOut(_ packet: Packet) {
        guard let pts = packet.pts else { return }
        if clockStart == nil { clockStart = (pts, ClockTime.now()) }
        handedOutEnd = max(handedOutEnd ?? pts, pts + max(packet.duration, 0))
    }
}
