import ScanoutCore

/// Where a frame reader (ScanoutDecode's `FrameReader`) takes its packets from: a `Demuxer`, or a `TimeshiftCursor`.
public protocol PacketSource: AnyObject {
    /// The next packet of the video stream; false at the end.
    func read(into packet: Packet) throws -> Bool
    /// Repositions so that the next packet read is the keyframe at or before `timestamp`, or the
    /// one at `position` (a byte offset for a demuxer, a sequence number for a cursor).
    func seek(toTimestamp timestamp: Int64, position: Int64?) throws
    /// Whether `seek` takes presentation (not decoding) timestamps.
    var seeksByPresentationTime: Bool { get }
    /// A live input's transport-stream counts so far; nil for other inputs.
    var transportCounts: TSCounts? { get }
    /// Hands the packets of track `index` (audio, subtitles) to `sink` inside `read`; nil stops.
    func route(track index: Int, to sink: ((Packet) -> Void)?) throws
    /// While true, `read` hands no packet to a sink (a seek looking ahead for a keyframe).
    var sinksPaused: Bool { get set }
}

extension Demuxer: PacketSource {}
