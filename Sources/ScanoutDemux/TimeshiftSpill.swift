import CFFmpeg
import ScanoutCore
#if canImport(Glibc)
import Glibc
#endif

/// The packets of one GOP of a timeshift buffer kept on disk (`TimeshiftOptions.directory`): a
/// temporary file in that directory, unlinked as soon as it is made, so that nothing is left
/// behind however the process ends. Owns its descriptor (closed once, in `deinit`, which frees
/// the space): the buffer drops a GOP by letting go of its file. Not thread-safe; the buffer
/// uses it under its lock.
final class SpillFile {
    private let fd: Int32
    /// Bytes written so far.
    private(set) var length: Int64 = 0

    /// Nil when the file cannot be made (`mkstemp`: no such directory, not writable).
    init?(directory: String) {
        var template = Array("\(directory)/scanout-timeshift-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { return nil }
        _ = template.withUnsafeBufferPointer { unlink($0.baseAddress!) }
        self.fd = fd
    }

    deinit { close(fd) }

    /// Appends the packet's data (`pwrite`); its offset, nil when the write failed (a full disk).
    func append(_ packet: Packet) -> Int64? {
        let size = packet.size
        let offset = length
        if size > 0 {
            guard let data = packet.pointer.pointee.data,
                  Self.whole(size, { pwrite(fd, data + $0, size - $0, off_t(offset) + off_t($0)) }) else { return nil }
        }
        length += Int64(size)
        return offset
    }

    /// Reads `size` bytes at `offset` into `packet`, in a buffer of its own (`av_new_packet`,
    /// `pread`). False when the read failed.
    func read(offset: Int64, size: Int, into packet: Packet) -> Bool {
        packet.unref()
        guard av_new_packet(packet.pointer, Int32(size)) == 0 else { return false }
        guard size > 0 else { return true }
        guard let data = packet.pointer.pointee.data else { return false }
        return Self.whole(size, { pread(fd, data + $0, size - $0, off_t(offset) + off_t($0)) })
    }

    /// Repeats `io` (a `pread` or `pwrite` of the bytes from the count done so far on) until all
    /// `size` bytes moved, again after `EINTR`. False on an error or the file's end.
    private static func whole(_ size: Int, _ io: (Int) -> Int) -> Bool {
        var done = 0
        while done < size {
            let r = io(done)
            if r < 0 && errno == EINTR { continue }
            guard r > 0 else { return false }
            done += r
        }
        return true
    }
}
