import Foundation
import ScanoutCore

/// Bytes of one download: what was on disk at its start plus what came since, and the rate over
/// the last three seconds.
struct Meter {
    private(set) var bytes: Int64 = 0
    private var samples: [(time: ClockTime, bytes: Int64)] = []
    private var lastReport = ClockTime.zero

    mutating func start(bytes: Int64) {
        self.bytes = bytes
        samples = [(ClockTime.now(), bytes)]
    }

    /// Adds `n`; returns what to report when half a second passed since the last report.
    mutating func add(_ n: Int64) -> (bytes: Int64, rate: Double)? {
        bytes += n
        let t = ClockTime.now()
        samples.append((t, bytes))
        samples.removeAll { t - $0.time > .seconds(3) }
        guard t - lastReport >= .milliseconds(500) else { return nil }
        lastReport = t
        return (bytes, rate())
    }

    func rate() -> Double {
        guard let first = samples.first, let last = samples.last, last.time - first.time > .milliseconds(50) else { return 0 }
        return Double(last.bytes - first.bytes) / (last.time - first.time).secondsValue
    }

}
