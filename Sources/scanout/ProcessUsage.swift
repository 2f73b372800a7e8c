#if canImport(Glibc)
import Glibc
#endif

/// CPU seconds used by this process so far, and its peak resident memory in KiB.
func selfUsage() -> (cpu: Double, maxRSSKiB: Int) {
    var u = rusage()
    getrusage(RUSAGE_SELF.rawValue, &u)
    let cpu = Double(u.ru_utime.tv_sec) + Double(u.ru_utime.tv_usec) / 1e6 + Double(u.ru_stime.tv_sec) + Double(u.ru_stime.tv_usec) / 1e6
    return (cpu, Int(u.ru_maxrss))
}
