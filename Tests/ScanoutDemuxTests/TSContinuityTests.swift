@testable import ScanoutCore
@testable import ScanoutDemux
import Testing

/// A transport packet of `pid` with continuity counter `cc`; `payload` false: adaptation field
/// only; `discontinuity`: the adaptation field's discontinuity indicator set.
private func tsPacket(pid: Int, cc: Int, payload: Bool = true, discontinuity: Bool = false) -> [UInt8] {
    var p = [UInt8](repeating: 0xFF, count: 188)
    p[0] = 0x47
    p[1] = UInt8(pid >> 8)
    p[2] = UInt8(pid & 0xFF)
    let adaptation = discontinuity || !payload
    p[3] = UInt8((adaptation ? 0x20 : 0) | (payload ? 0x10 : 0) | (cc & 0x0F))
    if adaptation {
        p[4] = payload ? 1 : 183
        p[5] = discontinuity ? 0x80 : 0
    }
    return p
}

private func counts(_ packets: [[UInt8]], chunk: Int? = nil) -> TSCounts {
    var c = TSContinuity()
    let bytes = packets.flatMap { $0 }
    let step = chunk ?? bytes.count
    for start in stride(from: 0, to: bytes.count, by: step) {
        bytes[start..<min(start + step, bytes.count)].withUnsafeBytes { c.feed($0) }
    }
    return c.counts
}

@Suite struct TSContinuityTests {
    @Test("a whole stream of two PIDs, counters wrapping past 15: no error")
    func clean() {
        let s = (0..<40).flatMap { i in [tsPacket(pid: 0x100, cc: i), tsPacket(pid: 0x101, cc: i)] }
        let c = counts(s)
        #expect(c.packets == 80 && c.ccErrors == 0 && c.discontinuities == 0 && c.resyncs == 0)
    }

    @Test("each lost packet is one error on its PID; a run of lost packets is one")
    func lostPackets() {
        let kept = (0..<40).filter { ![5, 17, 18, 19, 30].contains($0) }.map { tsPacket(pid: 0x100, cc: $0) }
        #expect(counts(kept).ccErrors == 3)
    }

    @Test("the same counts whatever the reads' sizes (packets split across reads)")
    func splitReads() {
        let kept = (0..<60).filter { $0 % 7 != 3 }.map { tsPacket(pid: 0x100, cc: $0) }
        let whole = counts(kept)
        // Nine dropped (3, 10, ..., 59); the last one is followed by nothing, so it cannot show.
        #expect(whole.ccErrors == 8)
        for chunk in [1, 100, 187, 188, 189, 1316] { #expect(counts(kept, chunk: chunk) == whole, "chunk \(chunk)") }
    }

    @Test("one repeat is allowed, a second is an error; no payload keeps the counter")
    func repeatsAndAdaptationOnly() {
        let once = [0, 1, 1, 2].map { tsPacket(pid: 0x100, cc: $0) }
        #expect(counts(once).ccErrors == 0)
        let twice = [0, 1, 1, 1, 2].map { tsPacket(pid: 0x100, cc: $0) }
        #expect(counts(twice).ccErrors == 1)
        let adaptation = [tsPacket(pid: 0x100, cc: 4), tsPacket(pid: 0x100, cc: 4, payload: false), tsPacket(pid: 0x100, cc: 5)]
        #expect(counts(adaptation).ccErrors == 0)
    }

    @Test("a discontinuity indicator is counted and restarts the counter; null packets are not checked")
    func discontinuityAndNull() {
        let s = [tsPacket(pid: 0x100, cc: 3), tsPacket(pid: 0x100, cc: 9, discontinuity: true), tsPacket(pid: 0x100, cc: 10),
                 tsPacket(pid: 0x1FFF, cc: 0), tsPacket(pid: 0x1FFF, cc: 0), tsPacket(pid: 0x1FFF, cc: 7)]
        let c = counts(s)
        #expect(c.discontinuities == 1 && c.ccErrors == 0)
    }

    @Test("garbage between packets is skipped to the next sync byte")
    func resync() {
        let s = [tsPacket(pid: 0x100, cc: 0), [0x00, 0x12, 0x34], tsPacket(pid: 0x100, cc: 1)]
        let c = counts(s)
        #expect(c.resyncs == 1 && c.packets == 2 && c.ccErrors == 0)
    }

    @Test("RTP: header (with CSRCs and an extension) taken off, sequence gaps counted across the wrap")
    func rtpHeaders() {
        var d = RTPDepacketizer()
        var lost = 0
        func datagram(seq: UInt16, csrc: Int = 0, ext: Bool = false) -> [UInt8] {
            var h: [UInt8] = [0x80 | (ext ? 0x10 : 0) | UInt8(csrc), 33, UInt8(seq >> 8), UInt8(seq & 0xFF), 0, 0, 0, 0, 0, 0, 0, 1]
            h += [UInt8](repeating: 9, count: 4 * csrc)
            if ext { h += [0xBE, 0xDE, 0, 1, 1, 2, 3, 4] }
            return h + tsPacket(pid: 0x100, cc: 0)
        }
        for (seq, csrc, ext) in [(UInt16(65534), 0, false), (65535, 2, false), (2, 0, true), (3, 1, true)] {
            let bytes = datagram(seq: seq, csrc: csrc, ext: ext)
            let payload = bytes.withUnsafeBytes { d.payload(of: $0, lost: &lost).map { Array($0) } }
            #expect(payload == tsPacket(pid: 0x100, cc: 0))
        }
        #expect(lost == 2)
        #expect([UInt8](repeating: 0x47, count: 20).withUnsafeBytes { d.payload(of: $0, lost: &lost) } == nil)
    }
}

@Suite struct LiveInputOptionsTests {
    @Test("the interface is a name resolved to its IPv4 address, or an address; an unknown name is refused with the URL named")
    func interface() throws {
        #expect(try LiveInputOptions.address(ofInterface: "lo", for: "udp://239.1.1.1:5000") == "127.0.0.1")
        #expect(try LiveInputOptions.address(ofInterface: "10.1.2.3", for: "udp://239.1.1.1:5000") == "10.1.2.3")
        #expect(throws: MediaError.self) { try LiveInputOptions.address(ofInterface: "nosuch0", for: "udp://239.1.1.1:5000") }
        let options = try LiveInputOptions(interface: "lo", sources: ["10.0.0.7", "10.0.0.8"], fifoPackets: 7000).protocolOptions(for: "udp://x")
        #expect(options.map { "\($0.0)=\($0.1)" } == ["overrun_nonfatal=1", "fifo_size=7000", "sources=10.0.0.7,10.0.0.8", "localaddr=127.0.0.1"])
    }
}
