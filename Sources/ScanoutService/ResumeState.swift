import Foundation
import ScanoutDemux
import ScanoutPlayer
import Synchronization

/// Where playback stood: the current item of a playlist, kept in the state directory so that a
/// service killed outright (SIGKILL, a crash, the watchdog) starts again at the same item.
public struct ResumePoint: Equatable, Sendable {
    /// Index of the item in the playlist, from 0.
    public var index: Int
    /// The item's source, as the playlist names it.
    public var source: String
    /// The playlist's identity (`ResumePoint.identity(of:)`).
    public var playlist: String

    public init(index: Int, source: String, playlist: String) {
        self.index = index
        self.source = source
        self.playlist = playlist
    }

    /// The identity of a playlist: FNV-1a (64 bits, hex) of its sources, in order, each followed by
    /// a newline. Scaling, rotation and tokens do not count: the same files are the same playlist.
    public static func identity(of playlist: [PlaylistItem]) -> String {
        fnv1aHex(playlist.map { $0.source + "\n" }.joined())
    }

    /// Where to start `playlist`: this point's index when the playlist is the one it was saved
    /// for, or 0 and why not.
    public func start(in playlist: [PlaylistItem]) -> (index: Int, reason: String?) {
        let id = Self.identity(of: playlist)
        guard id == self.playlist else {
            return (0, "the playlist changed since the position was saved (\(self.playlist), now \(id))")
        }
        guard playlist.indices.contains(index), playlist[index].source == source else {
            return (0, "the saved item \(index) (\(source)) is not in the playlist")
        }
        return (index, nil)
    }

    /// The state file's content: `{"index":2,"playlist":"…","source":"…","version":1}`.
    var fileData: Data {
        get throws { try StateFile.encode(PositionFile(index: index, source: source, playlist: playlist)) }
    }

    init(json data: Data) throws(ResumeStateError) {
        guard let o = try? JSONDecoder().decode(PositionFile.self, from: data) else { throw .corrupt("not a JSON object") }
        guard let index = o.index, index >= 0 else { throw .corrupt("index is missing or negative") }
        guard let source = o.source, let playlist = o.playlist else { throw .corrupt("source or playlist is missing") }
        self.init(index: index, source: source, playlist: playlist)
    }
}

/// `position.json`. A field of the wrong type reads as missing: what is wrong is named then
/// (`ResumePoint.init(json:)`); fields it does not know are left alone.
private struct PositionFile: Codable {
    var index: Int?
    var source: String?
    var playlist: String?
    var version = 1

    init(index: Int, source: String, playlist: String) {
        self.index = index
        self.source = source
        self.playlist = playlist
    }

    init(from decoder: any Swift.Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        index = try? c.decode(Int.self, forKey: .index)
        source = try? c.decode(String.self, forKey: .source)
        playlist = try? c.decode(String.self, forKey: .playlist)
    }
}

/// `channel.json`.
private struct ChannelFile: Codable {
    var id: String?
    var version = 1

    init(id: String) { self.id = id }

    init(from decoder: any Swift.Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try? c.decode(String.self, forKey: .id)
    }
}

/// How the state directory's files are written: JSON with sorted keys, as they always were.
enum StateFile {
    static func encode(_ value: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(value)
    }
}

/// A state file that cannot be read or written: the file and what failed.
public enum ResumeStateError: Error, Equatable, CustomStringConvertible {
    case corrupt(String)
    case unreadable(file: String, errno: Int32)
    case unwritable(file: String, step: String, errno: Int32)

    public var description: String {
        switch self {
        case .corrupt(let why): return "the state file is corrupt (\(why))"
        case .unreadable(let f, let e): return "\(f) cannot be read: \(String(cString: strerror(e)))"
        case .unwritable(let f, let step, let e):
            return "\(f): \(step) failed: \(String(cString: strerror(e)))"
                + (e == ENOSPC ? " (the disk is full: free space in the state directory)" : "")
        }
    }
}

/// The state directory's `position.json`: read once at start, written whenever the current item
/// changes, atomically (a temporary file written, fsynced, renamed over the old one, and the
/// directory fsynced), so that a kill at any moment leaves the old position or the new one.
///
/// Writes run on a serial queue of their own: the player's loop hands the point over and goes on
/// (an fsync can take longer than a frame). A write that fails (a full disk) is reported through
/// `onFailure` and playback goes on; the next change tries again.
public final class ResumeStore: Sendable {
    public let directory: String
    public var file: String { directory + "/position.json" }
    private let queue = DispatchQueue(label: "scanout-resume-state")
    private let lastWritten = Mutex<ResumePoint?>(nil)
    private let failures = Mutex(0)
    private let writeFile: @Sendable (String, Data) throws(ResumeStateError) -> Void
    private let onFailure: @Sendable (ResumeStateError) -> Void

    /// `writeFile` stands in for the atomic write in tests (a disk that is full).
    public init(directory: String, onFailure: @escaping @Sendable (ResumeStateError) -> Void,
                writeFile: @escaping @Sendable (String, Data) throws(ResumeStateError) -> Void = ResumeStore.atomicWrite) {
        self.directory = directory
        self.onFailure = onFailure
        self.writeFile = writeFile
    }

    /// The saved point; nil when there is none yet. Throws when the file exists and cannot be used.
    public func read() throws(ResumeStateError) -> ResumePoint? {
        guard let data = FileManager.default.contents(atPath: file) else {
            if access(file, F_OK) != 0 && errno == ENOENT { return nil }
            throw .unreadable(file: file, errno: errno == 0 ? EIO : errno)
        }
        let point = try ResumePoint(json: data)
        lastWritten.withLock { $0 = point }
        return point
    }

    /// Saves `point` (on the store's queue) unless it is the one saved last.
    public func record(_ point: ResumePoint) {
        queue.async { [self] in
            guard lastWritten.withLock({ $0 }) != point else { return }
            do {
                try writeFile(file, try point.fileData)
                lastWritten.withLock { $0 = point }
            } catch let e as ResumeStateError {
                failures.withLock { $0 += 1 }
                onFailure(e)
            } catch {
                failures.withLock { $0 += 1 }
                onFailure(.unwritable(file: file, step: "encoding", errno: EINVAL))
            }
        }
    }

    /// Waits until every recorded point is written (or failed).
    public func flush() { queue.sync {} }

    /// Writes that failed since the start.
    public var failedWrites: Int { failures.withLock { $0 } }

    /// `data` into `path` through `path.tmp`: write, fsync, rename, fsync of the directory
    /// (`open(2)`, `write(2)`, `fsync(2)`, `rename(2)`).
    public static func atomicWrite(_ path: String, _ data: Data) throws(ResumeStateError) {
        let temp = path + ".tmp"
        let fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .unwritable(file: temp, step: "open", errno: errno) }
        var failure: ResumeStateError?
        data.withUnsafeBytes { raw in
            var off = 0
            while off < raw.count {
                let n = write(fd, raw.baseAddress! + off, raw.count - off)
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = .unwritable(file: temp, step: "write", errno: errno)
                    return
                }
                off += n
            }
        }
        if failure == nil, fsync(fd) != 0 { failure = .unwritable(file: temp, step: "fsync", errno: errno) }
        if close(fd) != 0, failure == nil { failure = .unwritable(file: temp, step: "close", errno: errno) }
        if let failure {
            unlink(temp)
            throw failure
        }
        guard rename(temp, path) == 0 else {
            let e = errno
            unlink(temp)
            throw .unwritable(file: path, step: "rename", errno: e)
        }
        let dir = open((path as NSString).deletingLastPathComponent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dir >= 0 {
            _ = fsync(dir)
            close(dir)
        }
    }
}

extension ServiceConfig {
    /// The state directory to use and, when there is none, why: `stateDir` when set, else
    /// `$STATE_DIRECTORY` (systemd's `StateDirectory=`; the first of a colon-separated list), else
    /// /var/lib/scanout when it exists and is writable.
    public func stateDirectory(environment: [String: String]) -> (path: String?, reason: String) {
        if let stateDir { return (stateDir, "stateDir") }
        if let env = environment["STATE_DIRECTORY"]?.split(separator: ":").first, !env.isEmpty {
            return (String(env), "$STATE_DIRECTORY")
        }
        if access(Self.defaultStateDirectory, W_OK) == 0 { return (Self.defaultStateDirectory, "default") }
        return (nil, "no stateDir, no $STATE_DIRECTORY, and \(Self.defaultStateDirectory) is not a writable directory")
    }

    public static let defaultStateDirectory = "/var/lib/scanout"
}

/// The state directory's `channel.json`: the id of the channel tuned last (`POST /channel`, next,
/// previous), so that `serve --channels` starts on it again. Written as `position.json` is
/// (`ResumeStore.atomicWrite`), on a queue of its own: a tune does not wait for the disk.
public struct TunedChannelFile: Sendable {
    public let file: String
    private static let queue = DispatchQueue(label: "scanout-tuned-channel")

    public init(directory: String) {
        file = directory + "/channel.json"
    }

    /// The saved channel id; nil when none was saved. Throws when the file exists and cannot be used.
    public func read() throws(ResumeStateError) -> String? {
        guard let data = FileManager.default.contents(atPath: file) else {
            if access(file, F_OK) != 0 && errno == ENOENT { return nil }
            throw .unreadable(file: file, errno: errno == 0 ? EIO : errno)
        }
        guard let o = try? JSONDecoder().decode(ChannelFile.self, from: data) else { throw .corrupt("not a JSON object") }
        guard let id = o.id, !id.isEmpty else { throw .corrupt("id is missing") }
        return id
    }

    /// The file's content: `{"id":"…","version":1}`.
    static func fileData(_ id: String) throws -> Data { try StateFile.encode(ChannelFile(id: id)) }

    /// Saves `id` (on the file's queue, in the order of the calls); a write that fails goes to `onFailure`.
    public func record(_ id: String, onFailure: @escaping @Sendable (ResumeStateError) -> Void) {
        let file = file
        Self.queue.async {
            do {
                try ResumeStore.atomicWrite(file, try Self.fileData(id))
            } catch let e as ResumeStateError {
                onFailure(e)
            } catch {
                onFailure(.unwritable(file: file, step: "encoding", errno: EINVAL))
            }
        }
    }
}
