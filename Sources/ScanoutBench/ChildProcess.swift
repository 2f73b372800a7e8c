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
    guard let child = SpawnedChild(arguments, stdoutCaptured: false) else { return nil }
    var captured: [UInt8] = []
    var buf = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = read(child.output, &buf, buf.count)
        if n <= 0 { break }
        captured.append(contentsOf: buf[0..<n])
    }
    return child.wait(output: captured)
}

/// Runs `arguments` (searched on PATH) with stdout and stderr captured together, and interrupts
/// it (SIGINT, as Ctrl-C does) `seconds` after it printed a line holding `marker`; kills it
/// (SIGKILL) when the marker has not come within `startTimeout` seconds, or when it is still
/// running `grace` seconds after the interrupt. Its `stderr` holds both outputs. Returns nil
/// when the program cannot be started.
func runChild(_ arguments: [String], interruptAfter seconds: Double, from marker: String, startTimeout: Double,
              grace: Double) -> ChildResult? {
    guard let child = SpawnedChild(arguments, stdoutCaptured: true) else { return nil }
    let pattern = Array(marker.utf8)
    var captured: [UInt8] = []
    var buf = [UInt8](repeating: 0, count: 65536)
    var seen = false, interrupted = false, killed = false
    // What happens next, and when: the interrupt once the marker is seen, else the kill.
    var interruptAt = Double.infinity, killAt = child.start + startTimeout
    while true {
        let deadline = killed ? Double.infinity : min(interruptAt, killAt)
        let waitMs = deadline.isFinite ? Int32(max(0, min((deadline - monotonicSeconds()) * 1000, 60_000))) : -1
        var pfd = pollfd(fd: child.output, events: Int16(POLLIN), revents: 0)
        let r = poll(&pfd, 1, waitMs)
        if r < 0 && errno != EINTR { break }
        if r > 0 {
            let n = read(child.output, &buf, buf.count)
            if n <= 0 { break }
            let before = captured.count
            captured.append(contentsOf: buf[0..<n])
            if !seen, contains(captured, pattern, from: max(0, before - pattern.count)) {
                seen = true
                interruptAt = monotonicSeconds() + seconds
                killAt = .infinity
            }
        }
        let now = monotonicSeconds()
        if !interrupted, now >= interruptAt {
            kill(child.pid, SIGINT)
            interrupted = true
            interruptAt = .infinity
            killAt = now + grace
        } else if !killed, now >= killAt {
            kill(child.pid, SIGKILL)
            killed = true
        }
    }
    return child.wait(output: captured)
}

/// Whether `pattern` occurs in `bytes` at or after `start`.
private func contains(_ bytes: [UInt8], _ pattern: [UInt8], from start: Int) -> Bool {
    let last = bytes.count - pattern.count
    guard !pattern.isEmpty, start <= last else { return false }
    for i in start...last where bytes[i] == pattern[0] && Array(bytes[i..<(i + pattern.count)]) == pattern {
        return true
    }
    return false
}

/// A started child process whose output (stderr, and stdout with it when asked) comes through
/// the read end of a pipe, `output`, which `wait` closes.
private struct SpawnedChild {
    let pid: pid_t
    let output: Int32
    let start: Double

    init?(_ arguments: [String], stdoutCaptured: Bool) {
        var pipeFDs: [Int32] = [0, 0]
        guard pipe(&pipeFDs) == 0 else { return nil }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        if stdoutCaptured {
            posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 1)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        }
        posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 2)
        posix_spawn_file_actions_addclose(&actions, pipeFDs[0])
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        start = monotonicSeconds()
        let rc = posix_spawnp(&pid, arguments[0], &actions, nil, &argv, environ)
        close(pipeFDs[1])
        guard rc == 0 else {
            close(pipeFDs[0])
            return nil
        }
        self.pid = pid
        output = pipeFDs[0]
    }

    /// Closes the pipe, waits for the process to end and gives its figures with `output`.
    func wait(output captured: [UInt8]) -> ChildResult {
        close(output)
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
        let wall = monotonicSeconds() - start
        let cpu = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
        let exit = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return ChildResult(status: exit, wallSeconds: wall, cpuSeconds: cpu, maxRSSKiB: Int(usage.ru_maxrss), stderr: String(decoding: captured, as: UTF8.self))
    }
}

/// The monotonic clock (`ClockTime.now()`) in seconds: the bench's timings and schedules are
/// `Double` seconds, as its reports print them.
func monotonicSeconds() -> Double { ClockTime.now().sinceOrigin.secondsValue }

