import CFFmpeg
import Foundation
import ScanoutCore

/// How much of a live input is kept for timeshift.
public struct TimeshiftOptions: Sendable, Equatable {
    /// Seconds of stream time kept (0: no timeshift).
    public var seconds: Double = 30
    /// Bytes of compressed packets kept, whatever their duration (in memory, or on disk).
    public var maxBytes: Int = 256 << 20
    /// Where the packets are kept: nil in memory; a directory: on disk there, one unlinked
    /// temporary file per GOP (`SpillFile`), only the packets' timing in memory.
    public var directory: String?
    public init(seconds: Double = 30, maxBytes: Int = 256 << 20, directory: String? = nil) {
        self.seconds = seconds
        self.maxBytes = maxBytes
        self.directory = directory
    }
}

/// The newest packets of a live input's video stream, and of the tracks kept beside it (the audio
/// track playing: `keep(track:)`), in the order the container interleaves them, for timeshift:
/// filled by a thread of its own from the demuxer (`startFilling`), read by any number of
/// `TimeshiftCursor`s.
///
/// Bounded by stream time (`TimeshiftOptions.seconds`, from the first packet's presentation time
/// to the newest one) and by bytes: when either is passed, whole GOPs are dropped from the start,
/// so that what is left always starts at a keyframe (the newest GOP is kept whatever its size).
/// The packets of a kept track count in the bytes and go with the GOP they were read in; only the
/// video's timestamps and keyframes measure time, index and seek. Each packet kept has a sequence number (one
/// more than the one before); a cursor holds the number of the packet it reads next, which stays
/// meaningful after the packets before it are dropped.
///
/// Packets are shared with the readers by reference (`av_packet_ref`): a packet costs its data
/// once, however many cursors read it.
///
/// `@unchecked Sendable`: every stored property that changes is read and written under
/// `condition`; the packets in `entries` are only referenced (never changed) once stored, and
/// FFmpeg's buffer references are atomic.
public final class TimeshiftBuffer: @unchecked Sendable {
    /// Where a packet's data is: a reference to it in memory, or its place in its GOP's file.
    enum Stored {
        case memory(Packet)
        case disk(SpillFile, offset: Int64)
    }

    struct Entry {
        let seq: Int
        let stored: Stored
        let pts: Int64?
        let dts: Int64?
        /// A video keyframe (a kept track's packets are never keyframes here).
        let isKeyframe: Bool
        /// A video packet; false: a kept track's (`keep(track:)`).
        let isVideo: Bool
        let size: Int
        /// What a packet read back from disk gets again besides its data.
        let flags: Int32
        let duration: Int64
        let streamIndex: Int32
        package let position: Int64
    }

    public let options: TimeshiftOptions
    /// Units of every timestamp kept (the video stream's).
    public let timeBase: Rational
    /// The input the packets come from (for error messages).
    public let input: String

    private let condition = NSCondition()
    /// Entries from `head` on are kept; the ones before it are dropped (compacted now and then).
    private var entries: [Entry] = []
    private var head = 0
    private var nextSeq = 0
    private var bytes = 0
    private var newestPts: Int64?
    private var gopsDropped = 0
    private var closed = false
    private var finished = false
    private var failure: MediaError?
    /// The latest silence the filling thread met, numbered so that a waiting reader sees each one once.
    private var silence: MediaError?
    private var silences = 0
    private var counts: TSCounts?
    /// The tracks kept beside the video (stream indices); the filling thread routes them.
    private var keptIndices: Set<Int> = []
    /// The file the current GOP's packets go to, with a directory.
    private var spill: SpillFile?
    /// Packets kept in memory because the directory refused them (no file, a failed write).
    private var spillFailures = 0

    public init(options: TimeshiftOptions, timeBase: Rational, input: String) {
        self.options = options
        self.timeBase = timeBase
        self.input = input
    }

    // MARK: Filling

    /// Keeps a reference to `packet`, then drops whole GOPs from the start while a bound is
    /// passed. (Packets before the first keyframe are kept for the reader that was decoding
    /// them, and are the first to go; seeks and the extent start at the first keyframe.)
    public func append(_ packet: Packet, transportCounts: TSCounts? = nil) {
        condition.lock()
        defer { condition.unlock() }
        counts = transportCounts ?? counts
        add(packet, isVideo: true)
        if let p = packet.pts { newestPts = max(newestPts ?? p, p) }
        evict()
        condition.broadcast()
    }

    /// Keeps a reference to `packet` of a kept track (`keep(track:)`; others are ignored), in
    /// its place among the video's packets. It counts in the bytes, not in the time kept.
    public func append(keptTrack packet: Packet) {
        condition.lock()
        defer { condition.unlock() }
        guard keptIndices.contains(packet.streamIndex) else { return }
        add(packet, isVideo: false)
        evict()
        condition.broadcast()
    }

    /// Stores the packet as the next entry (under `condition`).
    private func add(_ packet: Packet, isVideo: Bool) {
        let key = isVideo && packet.isKeyframe
        entries.append(Entry(seq: nextSeq, stored: store(packet, startsGOP: key), pts: packet.pts, dts: packet.dts,
                             isKeyframe: key, isVideo: isVideo, size: packet.size, flags: packet.pointer.pointee.flags,
                             duration: packet.duration, streamIndex: packet.pointer.pointee.stream_index,
                             position: packet.pointer.pointee.pos))
        nextSeq += 1
        bytes += packet.size
    }

    /// Keeps the packets of track `index` (an audio track) from now on, or stops keeping them.
    /// The filling thread routes the track from its next read on.
    public func keep(track index: Int, _ keeping: Bool = true) {
        condition.withLock {
            if keeping { keptIndices.insert(index) } else { keptIndices.remove(index) }
        }
    }

    /// The tracks kept beside the video.
    public var keptTracks: Set<Int> { condition.withLock { keptIndices } }

    /// A reference to `packet` in memory, or its data written to the current GOP's file (a new
    /// file at each keyframe, so that dropping a GOP frees its file). In memory when the disk fails.
    private func store(_ packet: Packet, startsGOP: Bool) -> Stored {
        guard let directory = options.directory else { return .memory(packet.clone()) }
        if startsGOP || spill == nil { spill = SpillFile(directory: directory) }
        guard let file = spill, let offset = file.append(packet) else {
            spillFailures += 1
            return .memory(packet.clone())
        }
        return .disk(file, offset: offset)
    }

    /// The source said nothing for a while (`MediaError.sourceSilent`): a reader waiting for a
    /// packet gets the error, as it would from the demuxer.
    public func sourceSilent(_ error: MediaError) {
        condition.lock()
        silence = error
        silences += 1
        condition.broadcast()
        condition.unlock()
    }

    /// The source ended (`error` nil) or failed: readers get the packets kept, then the end or the error.
    public func finish(_ error: MediaError?) {
        condition.lock()
        finished = true
        failure = error
        condition.broadcast()
        condition.unlock()
    }

    /// Stops the filling thread after its current read, and ends every read.
    public func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }

    public var isClosed: Bool { condition.withLock { closed } }

    /// Drops whole GOPs from the start while the time or byte bound is passed.
    private func evict() {
        while head < entries.count, isOverBound {
            guard let nextKey = entries[(head + 1)...].firstIndex(where: \.isKeyframe) else { break }
            for e in entries[head..<nextKey] { bytes -= e.size }
            head = nextKey
            gopsDropped += 1
        }
        if head > 1024, head * 2 > entries.count {
            entries.removeFirst(head)
            head = 0
        }
    }

    private var isOverBound: Bool {
        if bytes > options.maxBytes { return true }
        guard let video = entries[head...].first(where: \.isVideo), let first = video.pts ?? video.dts,
              let newest = newestPts else { return false }
        return Double(newest - first) * timeBase.doubleValue > options.seconds
    }

    // MARK: Reading

    /// What `read` stored: a video packet, a kept track's, or nothing (the end).
    enum Read { case video, kept, end }

    /// Stores the packet numbered `seq` in `packet` and moves `seq` on, waiting for it when it
    /// is not there yet. A `seq` whose packet was dropped moves to the first packet kept, and
    /// `wrapped` says so. Throws the source's silence (each one once per wait) or failure.
    func read(_ seq: inout Int, into packet: Packet, wrapped: inout Bool) throws -> Read {
        condition.lock()
        defer { condition.unlock() }
        let silencesBefore = silences
        while true {
            let first = head < entries.count ? entries[head].seq : nextSeq
            if seq < first {
                seq = first
                wrapped = true
            }
            if seq < nextSeq {
                let e = entries[head + (seq - first)]
                switch e.stored {
                case .memory(let p):
                    packet.unref()
                    av_packet_ref(packet.pointer, p.pointer)
                case .disk(let file, let offset):
                    guard file.read(offset: offset, size: e.size, into: packet) else {
                        throw MediaError.readFailed(input: input, reason: "the timeshift buffer's file in \(options.directory ?? "?") could not be read back: \(String(cString: strerror(errno)))")
                    }
                    packet.pointer.pointee.pts = e.pts ?? SCANOUT_AV_NOPTS_VALUE
                    packet.pointer.pointee.dts = e.dts ?? SCANOUT_AV_NOPTS_VALUE
                    packet.pointer.pointee.flags = e.flags
                    packet.pointer.pointee.duration = e.duration
                    packet.pointer.pointee.stream_index = e.streamIndex
                    packet.pointer.pointee.pos = e.position
                }
                seq += 1
                return e.isVideo ? .video : .kept
            }
            if closed { return .end }
            if finished {
                if let failure { throw failure }
                return .end
            }
            if silences != silencesBefore, let silence { throw silence }
            condition.wait()
        }
    }

    /// The sequence number of the last keyframe whose presentation timestamp is not after `pts`
    /// (the first one kept when none is).
    func keyframeSeq(atOrBefore pts: Int64) -> Int {
        condition.withLock {
            let kept = entries[head...]
            let key = kept.last { $0.isKeyframe && ($0.pts ?? .max) <= pts } ?? kept.first(where: \.isKeyframe)
            return key?.seq ?? nextSeq
        }
    }

    /// The sequence number of the first packet kept (the next one to come when none is).
    public var firstSeq: Int { condition.withLock { head < entries.count ? entries[head].seq : nextSeq } }
    /// The sequence number the next packet appended will have.
    public var endSeq: Int { condition.withLock { nextSeq } }

    // MARK: What is kept

    /// What the buffer holds, in stream time (seconds: timestamp × time base).
    public struct Extent: Sendable, Equatable {
        /// The first keyframe's presentation time.
        public var start: Double
        /// The newest frame's presentation time.
        public var end: Double
        public var packets: Int
        public var bytes: Int
        /// GOPs dropped from the start since the buffer was made.
        public var gopsDropped: Int
        /// Packets kept in memory although a directory was given (it refused them).
        public var spillFailures: Int
        public var duration: Double { end - start }
    }

    /// Nil while nothing is kept.
    public var extent: Extent? {
        condition.withLock {
            guard let first = firstKeyframe?.pts, let newest = newestPts else { return nil }
            let tb = timeBase.doubleValue
            return Extent(start: Double(first) * tb, end: Double(newest) * tb, packets: entries.count - head,
                          bytes: bytes, gopsDropped: gopsDropped, spillFailures: spillFailures)
        }
    }

    /// The frames kept, as a `FrameIndex` for `FrameSeeker`: the presentation timestamps from the
    /// first keyframe's on (the leading pictures of an open GOP before it name references that
    /// were dropped), and every keyframe with its sequence number as its `position`.
    public func index() -> FrameIndex {
        condition.withLock {
            let kept = entries[head...]
            guard let start = firstKeyframe?.pts else { return FrameIndex(timestamps: [], keyframes: [], isSeekable: false) }
            let pts = kept.filter(\.isVideo).compactMap(\.pts).filter { $0 >= start }.sorted()
            let keys = kept.filter(\.isKeyframe).compactMap { e in
                e.pts.map { FrameIndex.Keyframe(pts: $0, dts: e.dts, position: Int64(e.seq)) }
            }
            return FrameIndex(timestamps: pts, keyframes: keys, isSeekable: !keys.isEmpty)
        }
    }

    /// The first keyframe kept (under `condition`).
    private var firstKeyframe: Entry? { entries[head...].first(where: \.isKeyframe) }

    /// The transport-stream counts the filling thread saw last.
    public var transportCounts: TSCounts? { condition.withLock { counts } }
}
