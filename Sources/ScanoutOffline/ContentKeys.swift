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
/// `kid` for content token `token`, or a refusal that names the HTTP status the endpoint answers.
public typealias LicenceLookup = @Sendable (_ kid: String, _ token: String) async throws -> [UInt8]

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
}

/// Where the playlists that name a clear key are written for the demuxer: a directory of this
/// user's in `/dev/shm` (memory, mode 0700; never the state directory's disk), one file per
/// asset, mode 0600, removed with the asset.
enum KeyedPlaylists {
    static var directory: String { "/dev/shm/scanout-\(getuid())" }

    static func path(of id: String) -> String { directory + "/\(id).m3u8" }

    /// Writes the playlist of asset `id` naming `key`; its path.
    static func write(id: String, text: (String) -> String, key: [UInt8]) throws(OfflineError) -> String {
        let dir = directory
        if mkdir(dir, 0o700) != 0 && errno != EEXIST { throw .store("\(dir) cannot be made (\(String(cString: strerror(errno))))") }
        var st = stat()
        guard lstat(dir, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR, st.st_uid == getuid(), st.st_mode & 0o077 == 0 else {
            throw .store("\(dir) is not a private directory of this user (mode 0700); remove it")
        }
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

    static func remove(id: String) { unlink(path(of: id)) }
}
