import ScanoutCore
import ScanoutDemux

/// Runs a hardware decoder and, when it fails mid-stream, replaces it with the software decoder
/// without losing or repeating a frame.
///
/// **When it switches**: `fallbackAfter` consecutive packets rejected by the hardware decoder
/// (a delivered frame resets the count), or any `HardwareFailure` it throws (export, import or
/// download, a refusal in `get_format`). With `allowFallback` false it throws
/// `DecoderSelectionError.failedMidStream` instead.
///
/// **How no frame is lost or repeated**: every packet sent is also kept (a reference, not a
/// copy) from the keyframe *before* the latest keyframe on, so two GOPs at most; the older
/// keyframe is kept because leading pictures of an open GOP (MPEG-TS, HEVC CRA) reference the
/// GOP before theirs. On the switch the software decoder is fed those packets again, one at a
/// time as it asks for input, and every frame it gives whose timestamp is not after the last
/// frame already delivered is dropped. Frames the hardware decoder had decoded but not yet handed
/// out are simply decoded again. Streams whose packets carry no timestamps (raw H.264) keep every
/// packet from the start and drop replayed frames by count instead.
///
/// `stats` after a switch are the software decoder's, less the errors it logged while replaying
/// frames that were already delivered; the hardware decoder's rejections that caused the switch
/// are not stream damage. One thread; not Sendable.
public final class FallbackDecoder: Decoder {
    public let input: String
    public let primaryType: PlayerType
    private let primary: any Decoder
    private let makeSoftware: () throws -> SoftwareDecoder
    private var software: SoftwareDecoder?
    private let fallbackAfter: Int
    private let allowFallback: Bool
    private let observer: (@Sendable (DecoderEvent) -> Void)?

    private var kept: [Packet] = []
    private var keyframes: [Int] = []
    private var trimmed = false
    private var canTrim = true
    private var replayQueue: [Packet] = []
    private var replayNext = 0
    private var replaying = false
    private var replayDropped = 0
    private var drainRequested = false
    private var drainSent = false
    private var pending: HardwareFailure?
    private var consecutiveErrors = 0
    private var lastDeliveredPts: Int64?
    private var errorBaseline = DecodeStats()
    /// Frames handed out since the decoder was opened.
    public private(set) var delivered = 0
    /// The switch, once it happened.
    public private(set) var fallback: DecoderFallback?

    init(input: String, primary: any Decoder, primaryType: PlayerType, fallbackAfter: Int, allowFallback: Bool,
         observer: (@Sendable (DecoderEvent) -> Void)?, makeSoftware: @escaping () throws -> SoftwareDecoder) {
        self.input = input
        self.primary = primary
        self.primaryType = primaryType
        self.fallbackAfter = max(1, fallbackAfter)
        self.allowFallback = allowFallback
        self.observer = observer
        self.makeSoftware = makeSoftware
    }

    public var kind: String { software == nil ? primary.kind : "sw" }

    /// The player type decoding now.
    public var activeType: PlayerType { software == nil ? primaryType : .sw }

    public var lastError: String? { software?.lastError ?? primary.lastError }

    public var stats: DecodeStats {
        guard let software else {
            var s = primary.stats
            s.framesDecoded = delivered
            return s
        }
        var s = software.stats
        s.rejectedPackets = max(0, s.rejectedPackets - errorBaseline.rejectedPackets)
        s.loggedErrors = max(0, s.loggedErrors - errorBaseline.loggedErrors)
        s.concealedFrames = max(0, s.concealedFrames - errorBaseline.concealedFrames)
        s.framesDecoded = delivered
        return s
    }

    public func send(_ packet: Packet?) throws {
        if let software {
            if packet == nil { drainRequested = true }
            // Replayed packets go first; the reader sends only once `receive` asked for input,
            // which it does only when the replay is done, so this queues nothing in practice.
            if replayNext < replayQueue.count {
                if let packet { replayQueue.append(packet.clone()) }
                return
            }
            if packet == nil { drainSent = true }
            try software.send(packet)
            return
        }
        if let packet { keep(packet) } else { drainRequested = true }
        if pending != nil { return }
        let before = primary.stats.rejectedPackets
        do {
            try primary.send(packet)
        } catch let failure as HardwareFailure {
            try fail(failure)
            return
        }
        if primary.stats.rejectedPackets > before { try countError() }
    }

    public func receive(into frame: VideoFrame) throws -> Bool {
        while true {
            if let failure = pending { try switchToSoftware(failure) }
            guard let software else {
                let before = primary.stats.rejectedPackets
                do {
                    if try primary.receive(into: frame) {
                        consecutiveErrors = 0
                        deliver(frame)
                        return true
                    }
                } catch let failure as HardwareFailure {
                    try fail(failure)
                    continue
                }
                if primary.stats.rejectedPackets > before {
                    try countError()
                    if pending != nil { continue }
                }
                return false
            }
            if try software.receive(into: frame) {
                if replaying {
                    if isAlreadyDelivered(frame) {
                        replayDropped += 1
                        continue
                    }
                    endReplay()
                }
                deliver(frame)
                return true
            }
            if replayNext < replayQueue.count {
                let p = replayQueue[replayNext]
                replayNext += 1
                try software.send(p)
                if replayNext == replayQueue.count {
                    replayQueue.removeAll()
                    replayNext = 0
                }
                continue
            }
            if drainRequested && !drainSent {
                drainSent = true
                try software.send(nil)
                continue
            }
            if replaying { endReplay() }
            return false
        }
    }

    /// Forgets everything in flight (after a seek): the kept packets, the replay, the error count.
    public func flush() {
        (software as (any Decoder)? ?? primary).flush()
        kept.removeAll()
        keyframes.removeAll()
        trimmed = false
        replayQueue.removeAll()
        replayNext = 0
        replaying = false
        drainRequested = false
        drainSent = false
        consecutiveErrors = 0
        lastDeliveredPts = nil
    }

    private func keep(_ packet: Packet) {
        if packet.pts == nil && packet.dts == nil { canTrim = false }
        if packet.isKeyframe {
            if canTrim, let previous = keyframes.last, previous > 0 {
                kept.removeFirst(previous)
                trimmed = true
                keyframes = [0]
            }
            keyframes.append(kept.count)
        }
        kept.append(packet.clone())
    }

    private func countError() throws {
        consecutiveErrors += 1
        if consecutiveErrors >= fallbackAfter {
            try fail(.decodeErrors(count: consecutiveErrors, last: primary.lastError ?? "no message"))
        }
    }

    private func fail(_ failure: HardwareFailure) throws {
        guard allowFallback else {
            throw DecoderSelectionError.failedMidStream(type: primaryType, input: input, frame: delivered, reason: failure.description)
        }
        if pending == nil { pending = failure }
    }

    private func switchToSoftware(_ failure: HardwareFailure) throws {
        pending = nil
        let sw = try makeSoftware()
        software = sw
        replayQueue = kept
        replayNext = 0
        kept.removeAll()
        keyframes.removeAll()
        replaying = delivered > 0
        replayDropped = 0
        drainSent = false
        let event = DecoderFallback(from: primaryType, to: .sw, reason: failure.description, frame: delivered)
        fallback = event
        observer?(.decoderFallback(event))
    }

    /// Whether a replayed frame was already handed out by the hardware decoder.
    private func isAlreadyDelivered(_ frame: VideoFrame) -> Bool {
        if let pts = frame.pts, let last = lastDeliveredPts { return pts <= last }
        // No timestamps: the packets were kept from the start, so the first `delivered` frames
        // of the replay are the ones already out.
        if frame.pts == nil, !trimmed { return replayDropped < delivered }
        return false
    }

    private func endReplay() {
        replaying = false
        if let software { errorBaseline = software.stats }
    }

    private func deliver(_ frame: VideoFrame) {
        delivered += 1
        if let pts = frame.pts { lastDeliveredPts = max(lastDeliveredPts ?? pts, pts) }
    }
}
