#if canImport(Glibc)
import Glibc
#endif
import ScanoutDemux

/// A progress bar on stderr when it is a terminal; nothing otherwise.
final class ProgressBar {
    private let total: Int
    private var done = 0
    private let enabled: Bool

    init(total: Int, quiet: Bool) {
        self.total = max(total, 1)
        enabled = !quiet && isatty(2) != 0
    }

    func step(_ label: String) {
        done += 1
        guard enabled else { return }
        let width = 30
        let filled = done * width / total
        StandardError.write("\r\u{1B}[K[" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled) + "] \(done)/\(total) \(label)")
    }

    func finish() { if enabled { StandardError.write("\r\u{1B}[K") } }
}
