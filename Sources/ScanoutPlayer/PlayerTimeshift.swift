import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio

/// Where a live item stands in its timeshift buffer, in stream time (seconds: timestamp × time
/// base, the input's own clock).
public struct TimeshiftStatus: Sendable, Equatable {
    /// The buffer's first keyframe.
    public var start: Double
    /// The newest frame received (the live edge).
    public var end: Double
    /// The frame on screen.
    public var position: Double
    /// Seconds the frame on screen is behind the live edge.
    public var behindLive: Double { max(0, end - position) }
    /// Seconds of the stream the buffer holds.
    public var liveDuration: Double { end - start }
}

/// The timeshift of one live item: its buffer, filled by a thread of its own from the item's
/// demuxer, and the cursor its reader takes packets from. The buffer is closed (the thread
/// stops after its current read) when this goes.
final class LiveTimeshift {
    let buffer: TimeshiftBuffer
    let cursor: TimeshiftCursor
    /// Whether playback is behind the live edge (paused there, or sought back) and has not
    /// returned to it since; `liveEdge` is emitted when it does.
    var behind = false

    /// `audioTrack`: the audio track playing, kept in the buffer from its first packet on (its
    /// sink is routed on the cursor by `PlayerAudio`).
    init(reader: FrameReader, options: TimeshiftOptions, audioTrack: Int?) {
        buffer = TimeshiftBuffer(options: options, timeBase: reader.video.timeBase, input: reader.input)
        if let audioTrack { buffer.keep(track: audioTrack) }
        cursor = TimeshiftCursor(buffer: buffer)
        reader.source = cursor
        buffer.startFilling(from: reader.demuxer)
    }

    deinit { buffer.close() }
}

extension PlayerEngine {
    /// The current live item's buffer and position; nil for other items or before a packet came.
    public var timeshiftStatus: TimeshiftStatus? {
        guard let item = current, let ts = item.timeshift, let e = ts.buffer.extent else { return nil }
        return TimeshiftStatus(start: e.start, end: e.end, position: streamTime(of: item))
    }

    /// Moves `seconds` from the frame on screen (negative: back), exactly, within the buffer.
    public func seekTimeshift(relative seconds: Double) throws {
        guard let item = current, item.timeshift != nil else { throw PlayerError.notLive(command: "seek relative") }
        try seekTimeshift(to: streamTime(of: item) + seconds)
    }

    /// Shows the frame at stream time `t` (the one shown at that instant: the last whose
    /// timestamp is not after it) and goes on from it, playing or paused as before. Exact: the
    /// reader decodes from the keyframe at or before it, as every exact seek does (`FrameSeeker`
    /// over the buffer's index). A frame at the live edge emits `liveEdge` too.
    public func seekTimeshift(to t: Double) throws {
        guard let item = current, let ts = item.timeshift else { throw PlayerError.notLive(command: "seek absolute") }
        let e = ts.buffer.extent
        guard let e, t.isFinite, t >= e.start - 1e-6, t <= e.end + 1e-6 else {
            throw PlayerError.timeshiftOutOfRange(seconds: t, start: e?.start, end: e?.end)
        }
        let tb = item.video.timeBase
        let origin = item.originPts ?? 0
        let index = ts.buffer.index()
        try performSeek(item, target: t - Double(origin) * tb.doubleValue, exact: true) {
            guard let first = index.timestamps.first,
                  let n = index.frameNumber(at: max(0, t - Double(first) * tb.doubleValue), timeBase: tb) else {
                throw MediaError.timeOutOfRange(input: item.item.source, seconds: t, durationSeconds: e.duration)
            }
            let frame = try FrameSeeker(reader: item.reader, index: index).frame(n).clone()
            _ = ts.cursor.takeWrapped()
            session.replaceReader(item.reader)
            return (frame, Double((frame.pts ?? origin) - origin) * tb.doubleValue, nil)
        }
        if let last = index.timestamps.last, streamTime(of: item) >= Double(last) * tb.doubleValue - 1e-9 {
            ts.behind = false
            emit(.liveEdge(position: streamTime(of: item)))
        } else {
            ts.behind = true
        }
    }

    /// Back to the live edge: the newest frame received is shown and playback goes on from it
    /// (resumed when paused); `liveEdge` says so.
    public func playLive() throws {
        guard let item = current, let ts = item.timeshift else { throw PlayerError.notLive(command: "play live") }
        guard let e = ts.buffer.extent else { throw PlayerError.timeshiftOutOfRange(seconds: 0, start: nil, end: nil) }
        try seekTimeshift(to: e.end)
        if state == .paused { try play() }
    }

    /// The stream time of the frame on screen.
    func streamTime(of item: PreparedItem) -> Double { streamTime(of: item, media: position) }

    /// The stream time of media time `media` (seconds from the item's first frame).
    func streamTime(of item: PreparedItem, media: Double) -> Double {
        Double(item.originPts ?? 0) * item.video.timeBase.doubleValue + media
    }

    /// Follows the current live item's position in its buffer, once per turn of the loop. When
    /// playback behind the edge caught up with it (a rate above 1), `liveEdge`. When the buffer
    /// dropped the packets the item was to read next (it was paused, or played behind the live
    /// edge for longer than the buffer holds), the position moves to the buffer's start:
    /// `timeshiftWrapped`, then that frame is shown (paused or not).
    func followTimeshift() {
        guard let item = current, let ts = item.timeshift else { return }
        if state == .paused {
            ts.behind = true
        } else if ts.behind, ts.cursor.next >= ts.buffer.endSeq {
            ts.behind = false
            emit(.liveEdge(position: streamTime(of: item)))
        }
        guard ts.cursor.isBehindBuffer || ts.cursor.takeWrapped(), let e = ts.buffer.extent else { return }
        emit(.timeshiftWrapped(from: streamTime(of: item), to: e.start))
        try? seekTimeshift(to: e.start)
    }
}
