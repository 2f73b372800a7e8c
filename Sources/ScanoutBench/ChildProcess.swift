import ScanoutCore
#if canImport(Glibc)
import Glibc
#endif

/// A finished child process: exit status, wall time, CPU time and peak memory (`wait4`).
struct ChildResult {
    var status: Int32
    var wallSeconds: Double
    var cpuSeconds: Double
    var maxRSSKiB: Int
    var stderr: String
}

/// Runs `arguments` (searched on PATH) with stdin and stdout on /dev/null, capturing stderr.
/// Returns nil when the program cannot be started.
func runChild(_ arguments: [String]) -> ChildResult? {
    var pipeFDs: [Int32] = [0, 0]
    guard pipe(&pipeFDs) == 0 else { return nil }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 2)
    posix_spawn_file_actions_addclose(&actions, pipeFDs[0])
    var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var pid: pid_t = 0
    let start = monotonicSeconds()
    let rc = posix_spawnp(&pid, arguments[0], &actions, nil, &argv, environ)
    close(pipeFDs[1])
    guard rc == 0 else {
        close(pipeFDs[0])
        return nil
    }
    var captured: [UInt8] = []
    var buf = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = read(pipeFDs[0], &buf, buf.count)
        if n <= 0 { break }
        captured.append(contentsOf: buf[0..<n])
    }
    close(pipeFDs[0])
    var status: Int32 = 0
    var usage = rusage()
    while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
    let wall = monotonicSeconds() - start
    let cpu = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    let exit = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    return ChildResult(status: exit, wallSeconds: wall, cpuSeconds: cpu, maxRSSKiB: Int(usage.ru_maxrss), stderr: String(decoding: captured, as: UTF8.self))
}

/// The monotonic clock (`ClockTime.now()`) in seconds: the bench's timings and schedules are
/// `Double` seconds, as its reports print them.
func monotonicSeconds() -> Double { ClockTime.now().sinceOrigin.secondsValue }

