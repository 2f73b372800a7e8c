import Foundation
import ScanoutLoopback
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// An MPEG-TS file sent as a live channel: to 127.0.0.1:`port` over UDP, seven TS packets a
/// datagram, each at the time its PCR says, looping; the first pass starts `offset` (0..<1) of
/// the way in, so that two channels of one file are not in step.
///
/// `@unchecked Sendable`: the stored properties are set in `init` and only read afterwards, the
/// stop flag is atomic, and the socket is used by the sending thread alone until `stop()` has
/// joined it.
final class ZapChannel: @unchecked Sendable {
    let file: String
    let port: UInt16
    /// Seconds of one pass through the file.
    let period: Double
    private let data: [UInt8]
    /// Send time of each datagram, seconds from the first datagram of the file.
    private let schedule: [Double]
    private let first: Int
    private let socketFD: Int32
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private var startedAt = 0.0

    static let packetsPerDatagram = 7

    /// Times (as in `schedule`) of the datagrams that start a keyframe, ascending.
    private let keyframeTimes: [Double]

    /// `keyframePositions`: the byte offsets of the keyframes in the file (`FrameIndex`).
    init(file: String, offset: Double, keyframePositions: [Int64]) throws {
        self.file = file
        data = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
        let packets = data.count / 188
        guard packets > 0, data[0] == 0x47 else { throw BenchError("\(file): not an MPEG-TS file (no 0x47 sync byte at 0)") }
        let (times, period) = try Self.datagramTimes(data, packets: packets, file: file)
        schedule = times
        self.period = period
        first = min(times.count - 1, max(0, Int(Double(times.count) * offset)))
        let datagramBytes = Int64(Self.packetsPerDatagram * 188)
        keyframeTimes = keyframePositions.map { times[min(times.count - 1, Int($0 / datagramBytes))] }.sorted()
        port = try unusedLoopbackPort(Int32(SOCK_DGRAM.rawValue))
        socketFD = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard socketFD >= 0 else { throw BenchError("socket(): errno \(errno)") }
    }

    deinit {
        stop()
        close(socketFD)
    }

    /// Starts sending on a thread of its own.
    func start() {
        startedAt = monotonicSeconds()
        Thread.detachNewThread { [self] in
            send()
            finished.signal()
        }
    }

    func stop() {
        guard !stopping.exchange(true, ordering: .relaxed), startedAt > 0 else { return }
        finished.wait()
    }

    /// Seconds from now until the file starts again (its timestamps jump back there).
    func secondsToWrap() -> Double { period - position() }

    /// Where the sending stands now, in seconds from the start of the file.
    private func position() -> Double {
        (monotonicSeconds() - startedAt + schedule[first] - schedule[0]).truncatingRemainder(dividingBy: period)
    }

    /// Seconds from now until the next keyframe is sent (its first datagram).
    func secondsToKeyframe() -> Double {
        let now = position()
        let next = keyframeTimes.first { $0 >= now } ?? (keyframeTimes[0] + period)
        return next - now
    }

    /// Sleeps until the next keyframe is `seconds` away (at most the keyframe interval);
    /// returns when it is sent (monotonic seconds).
    func wait(untilKeyframeIn seconds: Double) -> Double {
        var keyframeAt = monotonicSeconds() + secondsToKeyframe()
        for _ in 0..<100 where keyframeAt - monotonicSeconds() < seconds {
            sleepUntil(monotonic: keyframeAt + 0.001)
            keyframeAt = monotonicSeconds() + secondsToKeyframe()
        }
        sleepUntil(monotonic: keyframeAt - seconds)
        return keyframeAt
    }

    var url: String { "udp://127.0.0.1:\(port)" }

    private func send() {
        var to = sockaddr_in()
        to.sin_family = sa_family_t(AF_INET)
        to.sin_port = port.bigEndian
        to.sin_addr.s_addr = inet_addr("127.0.0.1")
        let size = Self.packetsPerDatagram * 188
        var pass = 0
        var k = first
        while !stopping.load(ordering: .relaxed) {
            let due = startedAt + Double(pass) * period + schedule[k] - schedule[first]
            sleepUntil(monotonic: due)
            let start = k * size
            let end = min(data.count / 188 * 188, start + size)
            _ = data[start..<end].withUnsafeBytes { bytes in
                withUnsafePointer(to: &to) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        sendto(socketFD, bytes.baseAddress, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
            }
            k += 1
            if k == schedule.count {
                k = 0
                pass += 1
            }
        }
    }

    /// The send time of each datagram from the PCRs of the first PID that carries them
    /// (interpolated between two, extrapolated past the last), and the length of one pass.
    static func datagramTimes(_ data: [UInt8], packets: Int, file: String) throws -> ([Double], Double) {
        var pcrs: [(packet: Int, seconds: Double)] = []
        var pcrPID: Int?
        for i in 0..<packets {
            let p = i * 188
            guard data[p] == 0x47 else { throw BenchError("\(file): lost TS sync at packet \(i)") }
            let pid = (Int(data[p + 1] & 0x1F) << 8) | Int(data[p + 2])
            let adaptation = (data[p + 3] >> 4) & 0x2 != 0
            guard adaptation, data[p + 4] >= 7, data[p + 5] & 0x10 != 0, pcrPID == nil || pcrPID == pid else { continue }
            pcrPID = pid
            let base = (Int64(data[p + 6]) << 25) | (Int64(data[p + 7]) << 17) | (Int64(data[p + 8]) << 9)
                | (Int64(data[p + 9]) << 1) | (Int64(data[p + 10]) >> 7)
            pcrs.append((i, Double(base) / 90_000))
        }
        guard pcrs.count >= 2, let a = pcrs.first, let b = pcrs.last, b.seconds > a.seconds else {
            throw BenchError("\(file): fewer than two PCRs, so it cannot be sent in real time")
        }
        let secondsPerPacket = (b.seconds - a.seconds) / Double(b.packet - a.packet)
        var times: [Double] = []
        var j = 0
        for d in 0..<(packets + packetsPerDatagram - 1) / packetsPerDatagram {
            let i = d * packetsPerDatagram
            while j + 1 < pcrs.count && pcrs[j + 1].packet <= i { j += 1 }
            let lo = pcrs[j]
            let t: Double
            if i >= lo.packet, j + 1 < pcrs.count {
                let hi = pcrs[j + 1]
                t = lo.seconds + (hi.seconds - lo.seconds) * Double(i - lo.packet) / Double(hi.packet - lo.packet)
            } else {
                t = lo.seconds + secondsPerPacket * Double(i - lo.packet)
            }
            times.append(t - (a.seconds - secondsPerPacket * Double(a.packet)))
        }
        return (times, secondsPerPacket * Double(packets))
    }
}

/// Sleeps until `monotonic` (CLOCK_MONOTONIC seconds); returns at once when it has passed.
func sleepUntil(monotonic: Double) {
    var ts = timespec(tv_sec: Int(monotonic), tv_nsec: Int((monotonic - Double(Int(monotonic))) * 1e9))
    while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
}
