#if canImport(Glibc)
import Glibc
#endif

/// Who holds a card: the processes with it open, named from /proc (what `masterHeld` says).
extension DRMDevice {
    /// Other processes with `path` open ("1234 (weston)"), read from /proc; the master is among them.
    static func processesHolding(_ path: String) -> [String] {
        guard let proc = opendir("/proc") else { return [] }
        defer { closedir(proc) }
        let me = getpid()
        var found: [String] = []
        while let e = readdir(proc) {
            let pidName = withUnsafeBytes(of: e.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let pid = Int32(pidName), pid != me, let fds = opendir("/proc/\(pid)/fd") else { continue }
            defer { closedir(fds) }
            var holds = false
            while !holds, let f = readdir(fds) {
                let n = withUnsafeBytes(of: f.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                var buf = [Int8](repeating: 0, count: 256)
                let len = readlink("/proc/\(pid)/fd/\(n)", &buf, 255)
                if len > 0, String(decoding: buf[0..<len].map { UInt8(bitPattern: $0) }, as: UTF8.self) == path { holds = true }
            }
            if holds {
                let comm = readSmallFile("/proc/\(pid)/comm").map { $0.trimmed("\n") } ?? "?"
                found.append("\(pid) (\(comm))")
            }
        }
        return found
    }
}

/// The text of a small file (a /proc or /sys entry), nil when it cannot be read.
func readSmallFile(_ path: String) -> String? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var buf = [UInt8](repeating: 0, count: 4096)
    let n = buf.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
    return n >= 0 ? String(decoding: buf[0..<n], as: UTF8.self) : nil
}

extension String {
    func trimmed(_ set: String) -> String {
        var s = Substring(self)
        while let c = s.last, set.contains(c) { s = s.dropLast() }
        while let c = s.first, set.contains(c) { s = s.dropFirst() }
        return String(s)
    }
}
