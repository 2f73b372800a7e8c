import CFFmpeg
import ScanoutCore
import ScanoutDemux

/// Where the frames of a still image shown for a time come from: no data, only times. Each
/// packet is stamped with the next due time (every `interval` of the stream's time base, from 0)
/// and the time until the next, the last one cut at the end, for `StillDecoder` to stamp the
/// picture it decoded once with. Seeking moves to the due time at or before the one asked for.
final class StillTimeline: PacketSource {
    /// Stream time base units between two showings of the picture.
    let interval: Int64
    /// The end of the showing, in the stream's time base.
    let end: Int64
    private var next: Int64 = 0

    init(interval: Int64, end: Int64) {
        self.interval = max(interval, 1)
        self.end = max(end, 1)
    }

    func read(into packet: Packet) throws -> Bool {
        guard next < end else { return false }
        packet.unref()
        let p = packet.pointer
        p.pointee.pts = next
        p.pointee.dts = next
        p.pointee.duration = min(interval, end - next)
        p.pointee.flags = AV_PKT_FLAG_KEY
        next += interval
        return true
    }

    func seek(toTimestamp timestamp: Int64, position: Int64?) throws {
        let ts = min(max(timestamp, 0), end - 1)
        next = ts / interval * interval
    }

    var seeksByPresentationTime: Bool { true }
    var transportCounts: TSCounts? { nil }
    /// A picture has no other track.
    func route(track index: Int, to sink: ((Packet) -> Void)?) throws {}
    var sinksPaused = false
}
