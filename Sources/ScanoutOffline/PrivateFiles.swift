import Foundation

/// The modes of the offline store's files: what it keeps (the database, with the content tokens
/// downloads were asked with; each download's `asset.json`, with its token and its sealed key;
/// its media) is readable by the service's user only: directories 0700, files 0600, whatever the
/// umask. The tokens stay in the store in clear, as the downloads need them again (a resumed
/// download, a refresh): what protects them is these modes.
enum PrivateFiles {
    /// Makes `path` (and its parents) a directory with mode 0700; an existing one is narrowed to
    /// 0700 when it is this user's.
    static func directory(_ path: String) throws(OfflineError) {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw .store("the directory \(path) cannot be made (\(error))")
        }
        narrow(path, to: 0o700)
    }

    /// Sets `path`'s mode to `mode` when it is a file or directory (not a link) of this user's
    /// with other permissions than that.
    static func narrow(_ path: String, to mode: mode_t) {
        var st = stat()
        guard lstat(path, &st) == 0, st.st_uid == getuid(), st.st_mode & 0o777 != mode else { return }
        let kind = st.st_mode & S_IFMT
        guard kind == (mode == 0o700 ? S_IFDIR : S_IFREG) else { return }
        _ = chmod(path, mode)
    }

    /// Makes the file at `path` with mode 0600 when there is none (so that a program that opens
    /// it next, SQLite, finds it private from its first byte), and narrows an existing one.
    static func file(_ path: String) {
        let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        if fd >= 0 { close(fd) }
        narrow(path, to: 0o600)
    }

    /// Writes `data` to `path` atomically (a temporary file renamed over it), mode 0600.
    static func write(_ data: Data, to path: String) throws(OfflineError) {
        let tmp = path + ".tmp"
        let fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw .store("\(tmp) cannot be written (\(String(cString: strerror(errno))))") }
        _ = fchmod(fd, 0o600)
        let written = data.withUnsafeBytes { Foundation.write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd) == 0
        close(fd)
        guard written == data.count, synced, rename(tmp, path) == 0 else {
            unlink(tmp)
            throw .store("\(path) cannot be written (\(String(cString: strerror(errno))))")
        }
    }
}
