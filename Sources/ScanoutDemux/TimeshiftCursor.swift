/// Reads a `TimeshiftBuffer` from a position of its own, as a `FrameReader`'s packet source.
/// Seeks take a keyframe's sequence number as `position` (the index's), or a presentation
/// timestamp. The packets of a kept track go to the sink routed for it, inside `read`, as a
/// demuxer's do (`route(track:to:)`); so a pause, a seek or a wrap moves the sound with the
/// picture. Not thread-safe; one owner at a time.
public final class TimeshiftCursor: PacketSource {
    public let buffer: TimeshiftBuffer
    /// The sequence number of the packet read next.
    public private(set) var next: Int
    /// Set when the packets the cursor was to read next had been dropped and it moved to the
    /// buffer's start; `takeWrapped` clears it.
    private var wrapped = false

    /// A cursor at the buffer's newest end: it reads the packets appended from now on.
    public init(buffer: TimeshiftBuffer) {
        self.buffer = buffer
        next = buffer.endSeq
    }

    /// The sinks of the kept tracks this cursor reads, by stream index.
    private var sinks: [Int: (Packet) -> Void] = [:]
    /// While a seek looks ahead for a keyframe, the kept tracks' packets go to no sink.
    public var sinksPaused = false

    /// The next video packet; the kept tracks' packets before it go to their sinks.
    public func read(into packet: Packet) throws -> Bool {
        while true {
            switch try buffer.read(&next, into: packet, wrapped: &wrapped) {
            case .video: return true
            case .end: return false
            case .kept: if !sinksPaused { sinks[packet.streamIndex]?(packet) }
            }
        }
    }

    /// Hands the packets of track `index` to `sink` on the reading thread, inside `read`, from
    /// the cursor's position on, and has the buffer keep them (`TimeshiftBuffer.keep`); `nil`
    /// stops both. The packet is the cursor's own, refilled by the next read. One cursor routes
    /// a track: the buffer stops keeping it when that cursor lets go of it.
    public func route(track index: Int, to sink: ((Packet) -> Void)?) throws {
        sinks[index] = sink
        buffer.keep(track: index, sink != nil)
    }

    public func seek(toTimestamp timestamp: Int64, position: Int64?) throws {
        next = position.map { Int($0) } ?? buffer.keyframeSeq(atOrBefore: timestamp)
    }

    public var seeksByPresentationTime: Bool { true }
    public var transportCounts: TSCounts? { buffer.transportCounts }

    /// Whether the packets this cursor reads next were dropped (a position the buffer wrapped past).
    public var isBehindBuffer: Bool { next < buffer.firstSeq }

    /// Whether a read met dropped packets since the last call (and moved to the buffer's start).
    public func takeWrapped() -> Bool {
        defer { wrapped = false }
        return wrapped
    }
}
