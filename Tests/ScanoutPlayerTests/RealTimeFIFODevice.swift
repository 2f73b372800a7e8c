import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ScanoutTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// An ALSA device that plays in real time without a sound card: ALSA's `file` plugin writes
/// into a FIFO that a thread of this object reads at the byte rate of s16 audio of `format`, so
/// the output's blocking writes are paced as a card paces them; every byte read is kept.
///
/// The reader's budget grows with the monotonic clock and is capped at 20 ms of audio, so a
/// pause (no writes) does not let a burst through afterwards.
///
/// `@unchecked Sendable`: `bytes` and `ended` are read and written under `lock`; the FIFO's
/// descriptor belongs to the reading thread alone.
final class RealTimeFIFODevice: @unchecked Sendable {
    let path: String
    /// The ALSA device name for `AudioSettings.device`.
    var device: String { "file:FILE=\(path),FORMAT=raw" }
    private let lock = NSCondition()
    private var bytes: [UInt8] = []
    private var ended = false

    init(directory: String, format: AudioFormat) throws {
        path = "\(directory)/audio.fifo"
        guard mkfifo(path, 0o600) == 0 else { throw SupportError("mkfifo \(path): \(String(cString: strerror(errno)))") }
        let rate = Double(format.sampleRate * format.channels * 2)
        let t = Thread { [self, path] in
            let fd = open(path, O_RDONLY)  // waits for ALSA to open it for writing
            guard fd >= 0 else { lock.withLock { ended = true; lock.broadcast() }; return }
            defer { close(fd) }
            _ = fcntl(fd, 1031 /* F_SETPIPE_SZ, not in Glibc's module */, 4096)
            var budget = 0.0
            var last = ClockTime.now()
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let now = ClockTime.now()
                budget = min(budget + (now - last).secondsValue * rate, 0.02 * rate)
                last = now
                let want = min(buffer.count, Int(budget) & ~3)
                if want < 4 { usleep(2000); continue }
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, want) }
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { break }
                budget -= Double(n)
                lock.withLock { bytes += buffer[0..<n] }
            }
            lock.withLock { ended = true; lock.broadcast() }
        }
        t.start()
    }

    /// The samples read so far.
    var samples: [Int16] {
        lock.withLock { bytes.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) } }
    }

    /// Waits until nothing more came for 0.3 s (or the device was closed; 10 s at most).
    func waitUntilQuiet() {
        let deadline = Date().addingTimeInterval(10)
        var count = -1
        lock.lock()
        while !ended, bytes.count != count, Date() < deadline {
            count = bytes.count
            _ = lock.wait(until: Date().addingTimeInterval(0.3))
        }
        lock.unlock()
    }
}
