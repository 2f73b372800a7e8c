import CFFmpeg
import ScanoutCore
#if canImport(Glibc)
import Glibc
#endif

/// How MPEG-TS over UDP and RTP inputs (`udp://`, `rtp://`, multicast included) are received.
///
/// The group is joined and left by libavformat's `udp` protocol; these fields become its options
/// (a query in the URL itself, `udp://239.1.1.1:5000?sources=10.0.0.1`, is read by libavformat too).
public struct LiveInputOptions: Sendable, Equatable {
    /// The interface to receive (and join the group) on: an interface name (`eth0`, resolved to
    /// its IPv4 address) or an address; nil: the one the routing table picks. (`localaddr`)
    public var interface: String?
    /// Source-specific multicast: only these senders' packets are received. (`sources`)
    public var sources: [String] = []
    /// Datagrams buffered between the socket and the demuxer, in 188-byte packets. (`fifo_size`)
    public var fifoPackets: Int?
    /// Go on when that buffer overflows (packets are lost and counted as CC errors) instead of
    /// failing. (`overrun_nonfatal`)
    public var overrunNonfatal = true
    /// Seconds without a packet before the input counts as stalled (`buffering`).
    public var stallSeconds = 1.0
    /// Seconds without a packet before the source counts as gone (service down). Playback goes on
    /// by itself when packets come back.
    public var timeoutSeconds = 5.0
    /// Whether a stalled read throws `MediaError.sourceSilent` each `stallSeconds` (a player that
    /// reports it and keeps waiting), or keeps waiting until `timeoutSeconds` and then throws
    /// `timedOut` (a command line run).
    public var reportStalls = false

    public init(interface: String? = nil, sources: [String] = [], fifoPackets: Int? = nil, overrunNonfatal: Bool = true,
                stallSeconds: Double = 1, timeoutSeconds: Double = 5) {
        self.interface = interface
        self.sources = sources
        self.fifoPackets = fifoPackets
        self.overrunNonfatal = overrunNonfatal
        self.stallSeconds = stallSeconds
        self.timeoutSeconds = timeoutSeconds
    }

    /// The step named by the timeout of a live input that stopped sending.
    static let silenceStep = "waiting for packets"

    /// Whether `input` is received this way: `udp://` or `rtp://`.
    public static func handles(_ input: String) -> Bool {
        input.hasPrefix("udp://") || input.hasPrefix("rtp://")
    }

    /// The `udp` protocol options, in the order they are set.
    func protocolOptions(for input: String) throws -> [(String, String)] {
        var o: [(String, String)] = [("overrun_nonfatal", overrunNonfatal ? "1" : "0")]
        if let fifoPackets { o.append(("fifo_size", String(fifoPackets))) }
        if !sources.isEmpty { o.append(("sources", sources.joined(separator: ","))) }
        if let interface { o.append(("localaddr", try Self.address(ofInterface: interface, for: input))) }
        return o
    }

    /// The IPv4 address of the interface named `name`, or `name` itself when it is an address;
    /// a failure names `input`, the URL being opened.
    static func address(ofInterface name: String, for input: String) throws -> String {
        var probe = in_addr()
        if inet_pton(AF_INET, name, &probe) == 1 { return name }
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else {
            throw MediaError.openFailed(input: input, reason: "cannot list the network interfaces: \(String(cString: strerror(errno)))")
        }
        defer { freeifaddrs(first) }
        var names: Set<String> = []
        for entry in sequence(first: first, next: { $0.pointee.ifa_next }) {
            let ifName = String(cString: entry.pointee.ifa_name)
            names.insert(ifName)
            guard ifName == name, let sa = entry.pointee.ifa_addr, sa.pointee.sa_family == sa_family_t(AF_INET) else { continue }
            var addr = sa.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
            var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            inet_ntop(AF_INET, &addr, &text, socklen_t(text.count))
            return text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        }
        throw MediaError.openFailed(input: input, reason: names.contains(name)
            ? "interface \(name) has no IPv4 address (give an address instead)"
            : "no interface \(name) (interfaces: \(names.sorted().joined(separator: ", ")))")
    }
}

/// Transport-stream counts of one live input, since it was opened.
public struct TSCounts: Sendable, Equatable {
    /// 188-byte packets seen.
    public var packets = 0
    /// Packets whose continuity counter is not the one expected on their PID (packets lost,
    /// reordered or repeated more than once), discontinuity indicators excepted.
    public var ccErrors = 0
    /// Packets whose adaptation field sets the discontinuity indicator (a splice, a new time base).
    public var discontinuities = 0
    /// RTP packets missing from the sequence numbers (RTP inputs only).
    public var rtpPacketsLost = 0
    /// Times the byte stream lost packet alignment and searched for the next sync byte.
    public var resyncs = 0
    public init() {}
}

/// Checks the continuity counters of MPEG-TS packets as they arrive (ISO/IEC 13818-1 §2.4.3.3):
/// per PID, a packet with payload carries the previous counter plus one (mod 16); a packet
/// without payload, the same counter; one repeat of a packet is allowed; a set discontinuity
/// indicator starts counting afresh. The null PID (0x1FFF) is not counted.
public struct TSContinuity: Sendable {
    public private(set) var counts = TSCounts()
    private var last = [Int8](repeating: -1, count: 8192)
    private var repeated = [Bool](repeating: false, count: 8192)
    /// Bytes of a packet cut across two reads.
    private var carry: [UInt8] = []

    public init() {}

    /// Takes the next bytes of the stream (any split; alignment is kept across calls).
    public mutating func feed(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        if carry.isEmpty {
            consume(bytes)
        } else {
            carry.append(contentsOf: bytes)
            let joined = carry
            carry = []
            joined.withUnsafeBytes { consume($0) }
        }
    }

    private mutating func consume(_ b: UnsafeRawBufferPointer) {
        var i = 0
        while i < b.count {
            if b[i] != 0x47 {
                // Out of step: search for the next sync byte.
                counts.resyncs += 1
                while i < b.count, b[i] != 0x47 { i += 1 }
                continue
            }
            guard i + 188 <= b.count else { carry = Array(b[i...]); return }
            packet(UnsafeRawBufferPointer(rebasing: b[i..<i + 188]))
            i += 188
        }
    }

    private mutating func packet(_ p: UnsafeRawBufferPointer) {
        counts.packets += 1
        let pid = (Int(p[1] & 0x1F) << 8) | Int(p[2])
        guard pid != 0x1FFF else { return }
        let control = (p[3] >> 4) & 3
        let cc = Int8(p[3] & 0x0F)
        let hasPayload = control & 1 != 0
        if control & 2 != 0, p[4] > 0, p[5] & 0x80 != 0 {
            counts.discontinuities += 1
            last[pid] = cc
            repeated[pid] = false
            return
        }
        let previous = last[pid]
        last[pid] = cc
        guard previous >= 0 else { return }
        if !hasPayload {
            if cc != previous { counts.ccErrors += 1 }
            return
        }
        if cc == previous, !repeated[pid] {
            repeated[pid] = true
            return
        }
        repeated[pid] = false
        if cc != (previous + 1) & 0x0F { counts.ccErrors += 1 }
    }
}

/// Strips RTP headers (RFC 3550) from datagrams and counts sequence-number gaps.
struct RTPDepacketizer {
    private var expected: UInt16?

    /// The payload of one datagram (nil: not an RTP packet), counting lost packets into `lost`.
    mutating func payload(of d: UnsafeRawBufferPointer, lost: inout Int) -> UnsafeRawBufferPointer? {
        guard d.count >= 12, d[0] >> 6 == 2 else { return nil }
        var start = 12 + 4 * Int(d[0] & 0x0F)
        if d[0] & 0x10 != 0 {
            guard d.count >= start + 4 else { return nil }
            start += 4 + 4 * ((Int(d[start + 2]) << 8) | Int(d[start + 3]))
        }
        var end = d.count
        if d[0] & 0x20 != 0, end > 0 { end -= Int(d[end - 1]) }
        guard start <= end else { return nil }
        let seq = (UInt16(d[2]) << 8) | UInt16(d[3])
        if let e = expected {
            let gap = seq &- e
            if gap != 0, gap < 0x8000 { lost += Int(gap) }
        }
        expected = seq &+ 1
        return UnsafeRawBufferPointer(rebasing: d[start..<end])
    }
}

/// A UDP or RTP input fed to the MPEG-TS demuxer through an `AVIOContext` of its own, which sees
/// every transport packet on its way: continuity counters are counted exactly, RTP headers are
/// taken off, and a read that waits longer than `stallSeconds` returns `EAGAIN` (the demuxer keeps
/// its state and reading resumes where it stopped).
///
/// Owns the `UDPSocket` (closed when the input goes: the socket leaves the group) and the
/// `AVIOContext` handed to the demuxer with its buffer (freed once, in `deinit`, after the
/// demuxer that reads it). Used by the thread that owns the demuxer; libavformat calls back into
/// it from inside that thread's reads.
final class LiveInput {
    let url: String
    let options: LiveInputOptions
    /// The context the demuxer reads (`AVFormatContext.pb`).
    private(set) var pb: UnsafeMutablePointer<AVIOContext>!
    private var socket: UDPSocket?
    private let isRTP: Bool
    private var rtp = RTPDepacketizer()
    private(set) var continuity = TSContinuity()
    private var rtpLost = 0
    private var datagram = [UInt8](repeating: 0, count: 65536)
    /// When the last packet was received (or the input opened).
    private(set) var lastData: ClockTime
    /// Start of the read in progress, nil when none.
    private var readStart: ClockTime?
    /// Stalls turn into `EAGAIN` only once the demuxer has opened (its header needs whole reads).
    var watchStalls = false
    private let outer: Deadline

    var counts: TSCounts {
        var c = continuity.counts
        c.rtpPacketsLost = rtpLost
        return c
    }

    /// Seconds since the last packet.
    var silentSeconds: Double { (ClockTime.now() - lastData).secondsValue }

    /// Opens the socket (joining the group). `deadline` bounds the open and is polled with the
    /// stall check inside reads.
    init(url: String, options: LiveInputOptions, deadline: Deadline) throws {
        self.url = url
        self.options = options
        outer = deadline
        isRTP = url.hasPrefix("rtp://")
        // RTP rides on UDP: the same socket, headers taken off here (RTCP, on the next port, is not read).
        let udpURL = isRTP ? "udp://" + url.dropFirst("rtp://".count) : url
        lastData = ClockTime.now()

        socket = try UDPSocket(url: udpURL, input: url, options: try options.protocolOptions(for: url)) { [unowned self] in interrupted }
        let size: Int32 = 65536
        guard let buffer = av_malloc(Int(size)),
              let ctx = avio_alloc_context(buffer.assumingMemoryBound(to: UInt8.self), size, 0,
                                           Unmanaged.passUnretained(self).toOpaque(), { opaque, buf, size in
                                               guard let opaque, let buf else { return SCANOUT_AVERROR_EXIT }
                                               return Unmanaged<LiveInput>.fromOpaque(opaque).takeUnretainedValue().read(into: buf, size: size)
                                           }, nil, nil) else {
            fatalError("avio_alloc_context: out of memory")
        }
        pb = ctx
    }

    deinit {
        if pb != nil {
            av_freep(&pb.pointee.buffer)
            avio_context_free(&pb)
        }
    }

    /// Polled by the socket's blocking read: the demuxer's own deadline, or a wait past `stallSeconds`.
    private var interrupted: Bool {
        if outer.expired { return true }
        guard watchStalls, let readStart else { return false }
        return ClockTime.now() - readStart >= .nanoseconds(inSeconds: options.stallSeconds)
    }

    /// Payload of the last datagram not handed to the demuxer yet (a read smaller than it).
    private var pending = 0..<0

    /// The `AVIOContext` read callback: the transport packets of one datagram (RTP header
    /// removed), counted as they pass.
    private func read(into buf: UnsafeMutablePointer<UInt8>, size: Int32) -> Int32 {
        guard let socket else { return SCANOUT_AVERROR_EOF }
        while pending.isEmpty {
            readStart = ClockTime.now()
            let n = datagram.withUnsafeMutableBytes { socket.receive(into: $0) }
            readStart = nil
            if n < 0 {
                return n == SCANOUT_AVERROR_EXIT && !outer.fired ? SCANOUT_AVERROR_EAGAIN : n
            }
            guard n > 0 else { continue }
            lastData = ClockTime.now()
            pending = datagram.withUnsafeBytes { all -> Range<Int> in
                let bytes = UnsafeRawBufferPointer(rebasing: all[0..<Int(n)])
                guard isRTP else { return 0..<Int(n) }
                guard let p = rtp.payload(of: bytes, lost: &rtpLost) else { return 0..<0 }
                let start = all.baseAddress!.distance(to: p.baseAddress!)
                return start..<start + p.count
            }
            datagram.withUnsafeBytes { continuity.feed(UnsafeRawBufferPointer(rebasing: $0[pending])) }
        }
        let count = min(pending.count, Int(size))
        datagram.withUnsafeBytes { all in
            buf.update(from: all.baseAddress!.assumingMemoryBound(to: UInt8.self) + pending.lowerBound, count: count)
        }
        pending = pending.lowerBound + count..<pending.upperBound
        return Int32(count)
    }

    /// After a stall (`EAGAIN`), lets the demuxer read on: libavformat marks its context ended
    /// after any error.
    func resume() {
        pb.pointee.eof_reached = 0
        pb.pointee.error = 0
    }
}

extension Demuxer {
    /// Transport-stream counts of a UDP/RTP input since it was opened; nil for other inputs.
    public var transportCounts: TSCounts? { live?.counts }

    /// For a UDP/RTP input, opens the socket and gives `ctx` the `AVIOContext` that reads it;
    /// nil for other inputs. Frees `ctx` when it throws (as `avformat_open_input` does).
    static func attachLiveInput(_ ctx: UnsafeMutablePointer<AVFormatContext>, input: String, options: LiveInputOptions,
                                deadline: Deadline) throws -> LiveInput? {
        guard LiveInputOptions.handles(input) else { return nil }
        do {
            let live = try LiveInput(url: input, options: options, deadline: deadline)
            ctx.pointee.pb = live.pb
            return live
        } catch {
            avformat_free_context(ctx)
            throw error
        }
    }

    /// A read of a UDP/RTP input waited `stallSeconds` without a packet: reported (`sourceSilent`)
    /// when the owner asked for it, a timeout once the source has been silent `timeoutSeconds`,
    /// otherwise the wait goes on.
    func liveStalled(_ live: LiveInput) throws {
        live.resume()
        let silent = live.silentSeconds
        if live.options.reportStalls {
            throw MediaError.sourceSilent(input: input, seconds: silent, timeout: live.options.timeoutSeconds)
        }
        if silent >= live.options.timeoutSeconds {
            throw MediaError.timedOut(input: input, seconds: live.options.timeoutSeconds, during: LiveInputOptions.silenceStep)
        }
    }
}
