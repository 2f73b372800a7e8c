import Foundation
import ScanoutDemux
import ScanoutPlayer

// The event stream's messages (`GET /events`): each event, the `gap` of a resumed stream, and
// the Server-Sent Events framing.

extension Wire {
    /// One event as the stream sends it: `seq`, `type`, on a screen of zones the `zone` it comes
    /// from, and the event's fields; every string in it redacted (`String.redacted`).
    struct Event: Encodable, Sendable {
        var numbered: EventHub.Numbered

        init(_ n: EventHub.Numbered) { numbered = n }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: WireKey.self)
            try c.encode(numbered.sequence, forKey: "seq")
            try c.encode(numbered.event.name, forKey: "type")
            if let zone = numbered.zone { try c.encode(zone, forKey: "zone") }
            try encodeFields(of: numbered.event, into: &c)
        }

        // One case per event: a switch, long by nature.
        private func encodeFields(of event: PlayerEvent, into c: inout KeyedEncodingContainer<WireKey>) throws {
            switch event {
            case .stateChanged(let from, let to):
                try c.encode(from.rawValue, forKey: "from"); try c.encode(to.rawValue, forKey: "to")
            case .prepared(let item, let source, let w, let h, let codec, let duration):
                try c.encode(item, forKey: "item"); try c.encode(source.redacted, forKey: "source")
                try c.encode(w, forKey: "width"); try c.encode(h, forKey: "height"); try c.encode(codec.redacted, forKey: "codec")
                try c.encodeNullable(duration, forKey: "duration")
            case .play(let user), .pause(let user):
                try c.encode(user, forKey: "userInitiated")
            case .buffering(let on, let reason):
                try c.encode(on, forKey: "buffering"); try c.encodeNullable(reason?.redacted, forKey: "reason")
            case .discontinuity(let source, let item, let cc, let disc, let lost, let totals):
                try c.encode(source.redacted, forKey: "source"); try c.encodeNullable(item, forKey: "item")
                try c.encode(cc, forKey: "ccErrors"); try c.encode(disc, forKey: "discontinuities")
                try c.encode(lost, forKey: "rtpPacketsLost"); try c.encode(Transport(totals), forKey: "totals")
            case .variantSwitch(let item, let from, let to, let bandwidth, let reason, let pts, let seconds):
                try c.encodeNullable(item, forKey: "item"); try c.encodeNullable(from.map(Variant.init), forKey: "from")
                try c.encode(Variant(to), forKey: "to")
                try c.encodeNullable(bandwidth.isFinite ? bandwidth : nil, forKey: "bandwidth"); try c.encode(reason.redacted, forKey: "reason")
                try c.encodeNullable(pts, forKey: "pts"); try c.encodeNullable(seconds, forKey: "seconds")
            case .stop, .ended:
                break
            case .seekStarted(let target, let exact):
                try c.encode(target, forKey: "target"); try c.encode(exact, forKey: "exact")
            case .seekCompleted(let position, let frame):
                try c.encode(position, forKey: "position"); try c.encodeNullable(frame, forKey: "frame")
            case .durationChanged(let d):
                try c.encodeNullable(d, forKey: "duration")
            case .itemChanged(let index, let source):
                try c.encode(index, forKey: "item"); try c.encode(source.redacted, forKey: "source")
            case .firstFrame(let item, let source, let since, let stages):
                try c.encode(item, forKey: "item"); try c.encode(source.redacted, forKey: "source")
                try c.encodeNullable(since, forKey: "sinceRequest")
                try c.encode(["open": stages.open, "probe": stages.probe, "decoder": stages.decoder, "firstDecode": stages.firstDecode],
                             forKey: "stages")
            case .position(let seconds, let duration, let item):
                try c.encode(seconds, forKey: "position"); try c.encodeNullable(duration, forKey: "duration"); try c.encode(item, forKey: "item")
            case .rateChanged(let r):
                try c.encode(r, forKey: "rate")
            case .warning(let m):
                try c.encode(m.redacted, forKey: "message")
            case .error(let message, let item, let skipped):
                try c.encode(message.redacted, forKey: "message"); try c.encodeNullable(item, forKey: "item"); try c.encode(skipped, forKey: "skipped")
            case .decoderFallback(let from, let to, let reason, let frame):
                try c.encode(from.redacted, forKey: "from"); try c.encode(to.redacted, forKey: "to")
                try c.encode(reason.redacted, forKey: "reason"); try c.encode(frame, forKey: "frame")
            case .audioLost(let device, let reason):
                try c.encode(device.redacted, forKey: "device"); try c.encode(reason.redacted, forKey: "reason")
            case .audioRestored(let device):
                try c.encode(device.redacted, forKey: "device")
            case .outputChanged(let d):
                try c.encode(d.redacted, forKey: "output")
            case .outputCensored(let output, let reason):
                try c.encode(output.redacted, forKey: "output"); try c.encodeNullable(reason?.redacted, forKey: "reason")
            case .hdcpChanged(let output, let state):
                try c.encode(output.redacted, forKey: "output"); try c.encode(state.redacted, forKey: "state")
            case .serviceState(let up, let reasons):
                try c.encode(up, forKey: "up"); try c.encode(reasons.names, forKey: "reasons"); try c.encode(reasons.rawValue, forKey: "reasonBits")
            case .timeshiftWrapped(let from, let to):
                try c.encode(from, forKey: "from"); try c.encode(to, forKey: "to")
                try c.encode("the timeshift buffer wrapped past the position: moved to the buffer's start", forKey: "message")
            case .liveEdge(let position):
                try c.encode(position, forKey: "position")
            case .channelChanged(let id, let name, let source):
                try c.encode(id.redacted, forKey: "id"); try c.encode(name.redacted, forKey: "name"); try c.encode(source.redacted, forKey: "source")
            case .channelsChanged(let count, let added, let removed):
                try c.encode(count, forKey: "count"); try c.encode(added.map(\.redacted), forKey: "added")
                try c.encode(removed.map(\.redacted), forKey: "removed")
            case .channelInvalid(let id, let reason):
                try c.encode(id.redacted, forKey: "id"); try c.encode(reason.redacted, forKey: "reason")
            case .subtitlesChanged(let s):
                try SubtitleStatus(s).encodeFields(into: &c)
            case .downloadProgress(let id, let bytes, let total, let percent, let rate, let eta):
                try c.encode(id.redacted, forKey: "id"); try c.encode(bytes, forKey: "bytes"); try c.encode(total, forKey: "total")
                try c.encode(percent, forKey: "percent"); try c.encode(rate, forKey: "rate"); try c.encodeNullable(eta, forKey: "eta")
            case .pictureAlarm(let kind, let active, let seconds):
                try c.encode(kind.rawValue, forKey: "kind"); try c.encode(active, forKey: "active"); try c.encode(seconds, forKey: "seconds")
            case .downloadState(let id, let state, let reason):
                try c.encode(id.redacted, forKey: "id"); try c.encode(state.redacted, forKey: "state"); try c.encodeNullable(reason?.redacted, forKey: "reason")
            case .syncLocked(let leader, let term):
                try c.encode(leader, forKey: "leader"); try c.encode(term, forKey: "term")
            case .syncLost(let reason):
                try c.encode(reason, forKey: "reason")
            case .leaderChanged(let leader, let term, let leading):
                try c.encodeNullable(leader, forKey: "leader"); try c.encode(term, forKey: "term"); try c.encode(leading, forKey: "leading")
            case .scheduleChanged(let rule, let id, let next, let nextRule):
                try c.encode(rule, forKey: "rule"); try c.encodeNullable(id, forKey: "id")
                try c.encodeNullable(next.map { ISOTime.format($0) }, forKey: "next")
                try c.encodeNullable(nextRule, forKey: "nextRule")
            case .displayPower(let on):
                try c.encode(on ? "on" : "off", forKey: "power")
            }
        }
    }

    /// The first message of a resumed stream whose missed events are no longer kept.
    struct Gap: Encodable, Sendable {
        var type = "gap"
        var from: Int
        var to: Int
        var missed: Int
        var reason: String
    }

    /// One Server-Sent Events message; without an id, the client's last event id stays as it was.
    static func sse(name: String, id: Int?, _ value: some Encodable) -> String {
        "event: \(name)\n\(id.map { "id: \($0)\n" } ?? "")data: \(WireJSON.string(value))\n\n"
    }
}

extension WireKey: ExpressibleByStringLiteral {
    init(stringLiteral value: String) { self.init(stringValue: value) }
}

extension KeyedEncodingContainer {
    /// `value`, or `null` when it has none.
    mutating func encodeNullable<T: Encodable>(_ value: T?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }
}
