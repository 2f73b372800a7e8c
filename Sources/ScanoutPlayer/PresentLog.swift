#if canImport(Glibc)
import Glibc
#endif
import ScanoutDisplay
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio

/// A present log that cannot be written.
public struct PresentLogError: Error, CustomStringConvertible, Equatable {
    public var path: String
    public var reason: String
    public var description: String { "cannot write the present log \(path): \(reason)" }
}

/// When each frame reached the screen, one line per frame: `media_seconds monotonic_ns target_ns`
/// (lip-sync measurements: `play --present-log`, `serve --present-log`). On a KMS screen the time
/// is the vblank timestamp of the frame's page-flip event; elsewhere the `CLOCK_MONOTONIC` ns just
/// after the display took the frame. `target_ns`: when the session meant it to be seen (from the
/// audio clock when there is one); 0 for untimed playback. The file holds `ClockTime`s as their
/// nanoseconds; they are converted here, at the file's edge.
///
/// Owns its file (closed once, in `deinit`) and, on KMS, the display's `onFlip` while it lives.
/// Used on the playback loop's thread, where flips are handled too.
public final class PresentLog {
    private let file: UnsafeMutablePointer<FILE>
    private var frames = 0
    /// KMS: media times of frames committed whose flip has not been paired yet, and flip times
    /// not paired yet (each commit ends in exactly one flip of the first output's CRTC).
    private var committed: [(media: Double, target: ClockTime?)] = []
    private var flips: [ClockTime] = []
    private var crtc: UInt32?
    private let kms: KMSDisplay?

    public init(path: String, kms: KMSDisplay? = nil) throws(PresentLogError) {
        guard let f = fopen(path, "w") else { throw PresentLogError(path: path, reason: String(cString: strerror(errno))) }
        file = f
        self.kms = kms
        kms?.onFlip = { [weak self] crtc, time in self?.flipped(crtc: crtc, at: time) }
    }

    deinit {
        kms?.onFlip = nil
        fclose(file)
    }

    /// Notes the frame the session shows now, once per frame (called after each step).
    public func note(_ session: PlaybackSession) {
        let shown = session.currentStats().framesPresented
        guard shown != frames else { return }
        defer { frames = shown }
        guard kms != nil else {
            fputs("\(session.position) \(ClockTime.now().nanoseconds) \(Self.nanoseconds(session.lastPresentedTarget))\n", file)
            fflush(file)
            return
        }
        // One entry per commit keeps commits and flips in step even if a step showed two frames.
        committed += Array(repeating: (session.position, session.lastPresentedTarget), count: max(1, shown - frames))
        pair()
    }

    private func flipped(crtc: UInt32, at time: ClockTime) {
        if self.crtc == nil { self.crtc = crtc }
        guard crtc == self.crtc else { return }
        flips.append(time)
        pair()
    }

    private func pair() {
        let n = min(committed.count, flips.count)
        guard n > 0 else { return }
        for i in 0..<n { fputs("\(committed[i].media) \(flips[i].nanoseconds) \(Self.nanoseconds(committed[i].target))\n", file) }
        fflush(file)
        committed.removeFirst(n)
        flips.removeFirst(n)
    }

    /// A time as the file writes it: its nanoseconds, 0 for none (untimed).
    private static func nanoseconds(_ time: ClockTime?) -> UInt64 { time?.nanoseconds ?? 0 }
}
