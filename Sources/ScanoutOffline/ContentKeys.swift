import Crypto
import Foundation
import GRDB

/// The AES-128 key of an encrypted asset, sealed for this device (AES-GCM with the device key):
/// an HLS playlist's (with what its playlist needs besides the key), or a CENC MP4's (`kid`).
public struct ContentKeyRecord: Codable, Sendable, Equatable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "contentKey"
    public var downloadId: String
    /// AES-GCM's combined nonce, ciphertext and tag.
    public var sealed: Data
    /// The `IV` attribute of the source's `#EXT-X-KEY`, when it gave one.
    public var iv: String?
    /// The source's `#EXT-X-MEDIA-SEQUENCE` (IVs derive from it when there is no `IV`).
    public var mediaSequence: Int
    /// The key id of a CENC-encrypted MP4 (32 hexadecimal digits; `v4`); nil for AES-128 HLS.
    public var kid: String?
}

/// The service's own licence endpoint (`/licence/KID`) asked in the process: the content key
/// `kid` for content token `token`, asked for `content` (the source whose encryption names
/// `kid`), or a refusal that names the HTTP status the endpoint answers.
public typealias LicenceLookup = @Sendable (_ kid: String, _ token: String, _ content: String) async throws -> [UInt8]

/// The device key: 32 random bytes in `stateDir/device.key`, made on first use with mode 0600.
/// Why a key file rather than one derived from `/etc/machine-id`: the machine id is readable by
/// every user and copied with a cloned image, while the key file is readable only by the service
/// user, and a store copied to another device without it cannot be opened.
struct DeviceKey: Sendable {
    let key: SymmetricKey

    init(directory: String) throws(OfflineError) {
        let path = directory + "/device.key"
        if let data = FileManager.default.contents(atPath: path) {
            guard data.count == 32 else { throw .store("\(path) is not a 32-byte key; remove it (kept content keys are then lost)") }
            key = SymmetricKey(data: data)
            return
        }
        let fresh = SymmetricKey(size: .bits256)
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .store("the device key \(path) cannot be made (\(String(cString: strerror(errno))))") }
        defer { close(fd) }
        let written = fresh.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == 32, fsync(fd) == 0 else { throw .store("the device key \(path) cannot be written (\(String(cString: strerror(errno))))") }
        key = fresh
    }

    func sealKey(_ bytes: [UInt8]) throws(OfflineError) -> Data {
        do {
            guard let combined = try AES.GCM.seal(bytes, using: key).combined else { throw OfflineError.store("AES-GCM gave no combined box") }
            return combined
        } catch { throw .store("a content key cannot be sealed (\(error))") }
    }

    func unseal(_ sealed: Data) throws(OfflineError) -> [UInt8] {
        do { return Array(try AES.GCM.open(AES.GCM.SealedBox(combined: sealed), using: key)) } catch {
            throw .store("a content key cannot be opened with this device's key (the store was copied from another device, or device.key changed)")
        }
    }
}

extension OfflineStore {
    public func contentKey(of id: String) throws(OfflineError) -> ContentKeyRecord? {
        try read { try ContentKeyRecord.fetchOne($0, key: id) }
    }

    /// The sources (and media URLs) of the downloads kept with key id `kid` (CENC): the content
    /// the store knows that key to belong to.
    public func content(ofKey kid: String) throws(OfflineError) -> [String] {
        try read { db in
            let rows = try Row.fetchAll(db, sql: """
                SELECT download.source, download.mediaURL FROM download JOIN contentKey ON contentKey.downloadId = download.id
                WHERE lower(contentKey.kid) = lower(?)
                """, arguments: [kid])
            return rows.flatMap { [$0["source"] as String, $0["mediaURL"] as String] }
        }
    }
}

/// Where the playlists that name a clear key are written for the demuxer: a directory of this
/// user's in `/dev/shm` (memory, mode 0700; never the state directory's disk), in it one of this
/// process's (`PID/`, 0700), one file per asset, mode 0600. They go with their asset, when
/// another item starts playing (`release`), when the service stops (`removeThisProcess`, on
/// SIGTERM's path) and, left by a process that was killed, at the next start (`sweep`).
public enum KeyedPlaylists {
    static var directory: String { "/dev/shm/scanout-\(getuid())" }
    static var processDirectory: String { directory + "/\(getpid())" }

    static func path(of id: String) -> String { processDirectory + "/\(id).m3u8" }

    /// Writes the playlist of asset `id` naming `key`; its path.
    static func write(id: String, text: (String) -> String, key: [UInt8]) throws(OfflineError) -> String {
        try privateDirectory(directory)
        try privateDirectory(processDirectory)
        // libavformat's hls demuxer opens a key URI only when its name ends in an extension it
        // allows; base64 decoding stops at the '?', so the key's bytes are exactly the 16 given.
        let line = "#EXT-X-KEY:METHOD=AES-128,URI=\"data:application/octet-stream;base64,\(Data(key).base64EncodedString())?.ts\""
        let path = path(of: id)
        let tmp = path + ".tmp"
        let fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw .store("\(tmp) cannot be written (\(String(cString: strerror(errno))))") }
        let bytes = Array(text(line).utf8)
        let written = bytes.withUnsafeBytes { Foundation.write(fd, $0.baseAddress, $0.count) }
        close(fd)
        guard written == bytes.count, rename(tmp, path) == 0 else { throw .store("\(path) cannot be written") }
        return path
    }

    /// Makes `dir` (mode 0700), and checks that it is a directory of this user's that no one else
    /// can read.
    private static func privateDirectory(_ dir: String) throws(OfflineError) {
        if mkdir(dir, 0o700) != 0 && errno != EEXIST { throw .store("\(dir) cannot be made (\(String(cString: strerror(errno))))") }
        var st = stat()
        guard lstat(dir, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR, st.st_uid == getuid(), st.st_mode & 0o077 == 0 else {
            throw .store("\(dir) is not a private directory of this user (mode 0700); remove it")
        }
    }

    static func remove(id: String) { unlink(path(of: id)) }

    /// Removes this process's playlists but those of `keep` (asset ids).
    static func release(keeping keep: Set<String>) {
        for file in (try? FileManager.default.contentsOfDirectory(atPath: processDirectory)) ?? [] {
            let id = file.hasSuffix(".m3u8") ? String(file.dropLast(5)) : file
            if !keep.contains(id) { unlink(processDirectory + "/" + file) }
        }
    }

    /// Removes every playlist this process wrote, and its directory: called when the service
    /// stops (the keys they name are then in no file).
    public static func removeThisProcess() {
        release(keeping: [])
        rmdir(processDirectory)
    }

    /// Removes what processes that are gone left (a service killed, or stopped by a version that
    /// kept them): their directories, and playlists written straight into the user's directory.
    /// Returns how many files went.
    @discardableResult
    static func sweep() -> Int {
        var removed = 0
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] {
            let path = directory + "/" + entry
            guard let pid = Int32(entry) else {
                if entry.hasSuffix(".m3u8") || entry.hasSuffix(".m3u8.tmp") { unlink(path); removed += 1 }
                continue
            }
            guard pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
            for file in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] {
                unlink(path + "/" + file)
                removed += 1
            }
            rmdir(path)
        }
        return removed
    }
}
