import CFFmpeg
import Synchronization
import ScanoutCore
#if canImport(Glibc)
import Glibc
#endif

/// The presentation timestamps of a stream's frames and where its keyframes are, built by
/// demuxing the whole input once (no decoding: a few milliseconds per thousand packets).
///
/// Frame n is the n-th smallest timestamp among the packets the decoder will show: packets
/// flagged for discard (MP4 edit lists) and packets before the first keyframe are left out,
/// as the decoder drops them too.
public struct FrameIndex: Sendable {
    public struct Keyframe: Sendable {
        public var pts: Int64
        public var dts: Int64?
        public var position: Int64?
        package init(pts: Int64, dts: Int64?, position: Int64?) {
            self.pts = pts
            self.dts = dts
            self.position = position
        }
    }

    /// Presentation timestamps in presentation order; index = frame number.
    public let timestamps: [Int64]
    /// Keyframes in decoding order.
    public let keyframes: [Keyframe]
    /// False when timestamps are missing or repeat (raw elementary streams): frames can then only
    /// be found by decoding from the start.
    public let isSeekable: Bool

    public var frameCount: Int { timestamps.count }

    /// Scans `input` with a demuxer of its own.
    public static func build(input: String, options: DemuxerOptions = DemuxerOptions()) throws -> FrameIndex {
        let demuxer = try Demuxer(input: input, options: options)
        let packet = Packet()
        var pts: [Int64] = []
        var keys: [Keyframe] = []
        var seekable = true
        var seenKey = false
        while try demuxer.read(into: packet) {
            if packet.isKeyframe { seenKey = true }
            guard seenKey else { continue }
            if packet.isKeyframe, let p = packet.pts ?? packet.dts {
                keys.append(Keyframe(pts: p, dts: packet.dts, position: packet.position))
            }
            if packet.isDiscarded { continue }
            guard let p = packet.pts else { seekable = false; continue }
            pts.append(p)
        }
        pts.sort()
        for i in pts.indices.dropFirst() where pts[i] == pts[i - 1] { seekable = false; break }
        if keys.isEmpty { seekable = false }
        return FrameIndex(timestamps: pts, keyframes: keys, isSeekable: seekable)
    }

    /// The index of `input`, built once per version of a local file and kept for the
    /// `FrameIndexCache.capacity` inputs used last, so that every seeker, player item and command
    /// of one process on the same file shares one scan. URLs are scanned each time (what a
    /// server sends may change).
    public static func cached(input: String, options: DemuxerOptions = DemuxerOptions()) throws -> FrameIndex {
        guard let key = FrameIndexCache.Key(input: input) else { return try build(input: input, options: options) }
        if let index = FrameIndexCache.shared.index(for: key) { return index }
        let index = try build(input: input, options: options)
        FrameIndexCache.shared.store(index, for: key)
        return index
    }

    /// The frame shown at `seconds` after the first frame: the last frame whose timestamp is not
    /// later than that instant.
    public func frameNumber(at seconds: Double, timeBase: Rational) -> Int? {
        guard let first = timestamps.first, seconds >= 0 else { return nil }
        // An instant that is exactly a frame's start lands on that frame despite float rounding.
        let limit = first + Int64((seconds / timeBase.doubleValue + 1e-6).rounded(.down))
        var lo = 0, hi = timestamps.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if timestamps[mid] <= limit { lo = mid + 1 } else { hi = mid }
        }
        return lo == 0 ? nil : lo - 1
    }

    /// The number of frames whose timestamps are before `pts`.
    package func position(of pts: Int64) -> Int {
        var lo = 0, hi = timestamps.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if timestamps[mid] < pts { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    /// The last keyframe (in decoding order) whose timestamp is not after `pts`, and the one
    /// before it for a retry.
    package func keyframeIndex(for pts: Int64) -> Int? {
        keyframes.lastIndex { $0.pts <= pts }
    }
}

/// The frame indexes of the local files used last (see `FrameIndex.cached`).
final class FrameIndexCache: Sendable {
    /// A version of a local file: a file replaced or rewritten in place gets a new key.
    struct Key: Hashable {
        var path: String
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: Int64

        /// Nil for a URL, or a path that cannot be read (the scan then reports why).
        init?(input: String) {
            guard let name = try? ContentHint.split(input).input else { return nil }
            let path = name.hasPrefix("file:") ? String(name.dropFirst(5)) : name
            if path.contains("://") || path == "-" || path.hasPrefix("pipe:") { return nil }
            var st = stat()
            guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
            self.path = path
            device = UInt64(st.st_dev)
            inode = UInt64(st.st_ino)
            size = Int64(st.st_size)
            modified = Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec)
        }
    }

    static let shared = FrameIndexCache()
    static let capacity = 8
    /// Most recently used last.
    private let entries = Mutex<[(key: Key, index: FrameIndex)]>([])
    /// Scans stored per path (for tests).
    private let scanCounts = Mutex<[String: Int]>([:])

    func scans(of path: String) -> Int { scanCounts.withLock { $0[path, default: 0] } }

    func index(for key: Key) -> FrameIndex? {
        entries.withLock { list in
            guard let i = list.firstIndex(where: { $0.key == key }) else { return nil }
            let entry = list.remove(at: i)
            list.append(entry)
            return entry.index
        }
    }

    func store(_ index: FrameIndex, for key: Key) {
        entries.withLock { list in
            list.removeAll { $0.key.path == key.path }
            list.append((key, index))
            if list.count > Self.capacity { list.removeFirst(list.count - Self.capacity) }
        }
        scanCounts.withLock { $0[key.path, default: 0] += 1 }
    }
}
