import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ScanoutPlayer

/// The JSON form of player state and events, as the API and the event stream send them.
enum WireFormat {
    static func state(_ s: PlayerSnapshot) -> [String: Any] {
        var o: [String: Any] = [
            "state": s.state.rawValue,
            "item": s.index ?? NSNull(),
            "position": s.position,
            "duration": s.duration ?? NSNull(),
            "rate": s.rate,
            "repeat": s.repeatMode.rawValue,
            "output": s.output,
            "serviceUp": s.reasons.isEmpty,
            "reasons": s.reasons.names,
            "bufferingReason": s.bufferingReason ?? NSNull(),
            "live": s.live,
            "liveDuration": s.timeshift?.liveDuration ?? NSNull(),
            "timeshift": s.timeshift.map { t -> [String: Any] in
                ["start": t.start, "end": t.end, "position": t.position, "behindLive": t.behindLive]
            } ?? NSNull(),
            "playlist": s.playlist.map(itemJSON),
            "lastError": s.lastFailure.map { f -> [String: Any] in
                ["item": f.item ?? NSNull(), "source": f.source ?? NSNull(), "message": f.message, "skipped": f.skipped]
            } ?? NSNull(),
        ]
        o["buffer"] = s.buffer.map(bufferJSON) ?? NSNull()
        o["subtitles"] = s.subtitles.map(SubtitleFields.status) ?? NSNull()
        let listed = s.tracks.filter { $0.kind == .audio || $0.kind == .subtitle }
        o["tracks"] = listed.map { trackJSON($0, selected: s.selectedTracks.contains($0.index)) }
        return redactingUserinfo(o)
    }

    static func stats(_ s: PlayerSnapshot) -> [String: Any] {
        [
            "framesDecoded": s.framesDecoded,
            "framesPresented": s.framesPresented,
            "framesDropped": s.framesDropped,
            "liveSlips": s.liveSlips,
            "liveSlipSeconds": s.liveSlipSeconds,
            "bytesRead": s.bytesRead,
            "decodeErrors": s.decodeErrors,
            "itemsFailed": s.itemsFailed,
            "framesCensored": s.framesCensored,
            "pacingP50Ms": s.pacingP50Ms,
            "pacingP99Ms": s.pacingP99Ms,
            "decodeMsPerFrame": s.decodeMsPerFrame,
            "presentMsPerFrame": s.presentMsPerFrame,
            "cpuCopiesPerFrame": s.transfers.cpuCopiesPerFrame(s.framesPresented),
            "transfers": ["downloads": s.transfers.downloads, "uploads": s.transfers.uploads,
                          "gpuCopies": s.transfers.gpuCopies, "imports": s.transfers.imports],
            "transport": s.transport.mapValues(transportJSON),
            "buffer": s.buffer.map(bufferJSON) ?? NSNull(),
            "audio": s.audioOutput.map { a -> [String: Any] in
                ["device": a.device, "sampleRate": a.format.sampleRate, "channels": a.format.channels,
                 "bufferFrames": a.bufferFrames, "periodFrames": a.periodFrames, "framesPlayed": a.framesPlayed,
                 "underruns": a.underruns, "chunksDropped": a.chunksDropped, "loss": a.loss ?? NSNull()]
            } ?? NSNull(),
            "adaptive": s.adaptive.map { a -> [String: Any] in
                ["variant": variantJSON(a.variant), "variants": a.variants.map(variantJSON),
                 "throughput": a.throughput ?? NSNull(), "switches": a.switches, "abandonedSegments": a.abandonedSegments]
            } ?? NSNull(),
        ]
    }

    /// How the current item's source is buffered: the policy (`pause`: read ahead, the clock
    /// waits when it runs dry; `slip`: live; `direct`: a local file), the read-ahead's level,
    /// and the waits so far.
    static func bufferJSON(_ b: BufferStatus) -> [String: Any] {
        var o: [String: Any] = ["policy": b.policy.rawValue, "waits": b.waits, "waitSeconds": b.waitSeconds,
                                "networkLateFrames": b.networkLateFrames]
        if let l = b.level {
            o["seconds"] = l.seconds
            o["bytes"] = l.bytes
            o["packets"] = l.packets
            o["ended"] = l.ended
            o["inputBytesPerSecond"] = l.inputBytesPerSecond ?? NSNull()
        } else {
            for k in ["seconds", "bytes", "packets", "ended", "inputBytesPerSecond"] { o[k] = NSNull() }
        }
        return o
    }

    /// One audio or subtitle track of the current item.
    static func trackJSON(_ t: TrackInfo, selected: Bool) -> [String: Any] {
        var o: [String: Any] = ["index": t.index, "kind": t.kind.rawValue, "codec": t.codecName,
                                "language": t.language ?? NSNull(), "title": t.title ?? NSNull(),
                                "default": t.isDefault, "forced": t.isForced, "selected": selected]
        if t.kind == .audio { o["sampleRate"] = t.sampleRate; o["channels"] = t.channels }
        return o
    }

    /// One HLS variant.
    static func variantJSON(_ v: HLSVariant) -> [String: Any] {
        ["id": v.id, "bitrate": v.bitrate, "width": v.width, "height": v.height]
    }

    /// A live input's transport-stream counts.
    static func transportJSON(_ t: TSCounts) -> [String: Any] {
        ["packets": t.packets, "ccErrors": t.ccErrors, "discontinuities": t.discontinuities,
         "rtpPacketsLost": t.rtpPacketsLost, "resyncs": t.resyncs]
    }

    static func event(_ n: EventHub.Numbered) -> [String: Any] {
        var o: [String: Any] = ["seq": n.sequence, "type": n.event.name]
        switch n.event {
        case .stateChanged(let from, let to):
            o["from"] = from.rawValue; o["to"] = to.rawValue
        case .prepared(let item, let source, let w, let h, let codec, let duration):
            o["item"] = item; o["source"] = source; o["width"] = w; o["height"] = h; o["codec"] = codec
            o["duration"] = duration ?? NSNull()
        case .play(let user), .pause(let user):
            o["userInitiated"] = user
        case .buffering(let on, let reason):
            o["buffering"] = on; o["reason"] = reason ?? NSNull()
        case .discontinuity(let source, let item, let cc, let disc, let lost, let totals):
            o["source"] = source; o["item"] = item ?? NSNull(); o["ccErrors"] = cc; o["discontinuities"] = disc
            o["rtpPacketsLost"] = lost; o["totals"] = transportJSON(totals)
        case .variantSwitch(let item, let from, let to, let bandwidth, let reason, let pts, let seconds):
            o["item"] = item ?? NSNull(); o["from"] = from.map(variantJSON) ?? NSNull(); o["to"] = variantJSON(to)
            o["bandwidth"] = bandwidth.isFinite ? bandwidth : NSNull(); o["reason"] = reason
            o["pts"] = pts ?? NSNull(); o["seconds"] = seconds ?? NSNull()
        case .stop, .ended:
            break
        case .seekStarted(let target, let exact):
            o["target"] = target; o["exact"] = exact
        case .seekCompleted(let position, let frame):
            o["position"] = position; o["frame"] = frame ?? NSNull()
        case .durationChanged(let d):
            o["duration"] = d ?? NSNull()
        case .itemChanged(let index, let source):
            o["item"] = index; o["source"] = source
        case .firstFrame(let item, let source, let since, let stages):
            o["item"] = item; o["source"] = source; o["sinceRequest"] = since ?? NSNull()
            o["stages"] = ["open": stages.open, "probe": stages.probe, "decoder": stages.decoder, "firstDecode": stages.firstDecode]
        case .position(let seconds, let duration, let item):
            o["position"] = seconds; o["duration"] = duration ?? NSNull(); o["item"] = item
        case .rateChanged(let r):
            o["rate"] = r
        case .warning(let m):
            o["message"] = m
        case .error(let message, let item, let skipped):
            o["message"] = message; o["item"] = item ?? NSNull(); o["skipped"] = skipped
        case .decoderFallback(let from, let to, let reason, let frame):
            o["from"] = from; o["to"] = to; o["reason"] = reason; o["frame"] = frame
        case .audioLost(let device, let reason):
            o["device"] = device; o["reason"] = reason
        case .audioRestored(let device):
            o["device"] = device
        case .outputChanged(let d):
            o["output"] = d
        case .outputCensored(let output, let reason):
            o["output"] = output; o["reason"] = reason ?? NSNull()
        case .hdcpChanged(let output, let state):
            o["output"] = output; o["state"] = state
        case .serviceState(let up, let reasons):
            o["up"] = up; o["reasons"] = reasons.names; o["reasonBits"] = reasons.rawValue
        case .timeshiftWrapped(let from, let to):
            o["from"] = from; o["to"] = to
            o["message"] = "the timeshift buffer wrapped past the position: moved to the buffer's start"
        case .liveEdge(let position):
            o["position"] = position
        case .channelChanged(let id, let name, let source):
            o["id"] = id; o["name"] = name; o["source"] = source
        case .channelsChanged(let count, let added, let removed):
            o["count"] = count; o["added"] = added; o["removed"] = removed
        case .channelInvalid(let id, let reason):
            o["id"] = id; o["reason"] = reason
        case .subtitlesChanged(let s):
            o.merge(SubtitleFields.status(s)) { _, new in new }
        case .downloadProgress(let id, let bytes, let total, let percent, let rate, let eta):
            o["id"] = id; o["bytes"] = bytes; o["total"] = total; o["percent"] = percent; o["rate"] = rate; o["eta"] = eta ?? NSNull()
        case .downloadState(let id, let state, let reason):
            o["id"] = id; o["state"] = state; o["reason"] = reason ?? NSNull()
        }
        return redactingUserinfo(o)
    }

    /// One Server-Sent Events message; without an id, the client's last event id stays as it was.
    static func sse(name: String, id: Int?, json: [String: Any]) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: json, options: [.sortedKeys])) ?? Data("{}".utf8)
        return "event: \(name)\n\(id.map { "id: \($0)\n" } ?? "")data: \(String(decoding: data, as: UTF8.self))\n\n"
    }
}
