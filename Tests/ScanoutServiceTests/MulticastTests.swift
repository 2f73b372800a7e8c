import Foundation
import ScanoutTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `scanout serve` receiving MPEG-TS multicast inside a network namespace of its own (loopback
/// only, with a route for 239.0.0.0/8), from a sender in the same namespace that replays
/// counter_open_long.ts (230 frames, 30 fps) in real time: `Tests/Fixtures/ts_sender.py`.
/// The service is reached through its Unix socket, which lives in the file system both share.
final class NamespacedService: Sendable {
    let scratch: Scratch
    let socketPath: String
    let source: String
    private let run: NamespaceRun

    /// Why these tests cannot run here, nil when they can: they need root (a network namespace
    /// and its routes) and `unshare`, `ip` and `python3`.
    static let unavailable: String? = {
        if getuid() != 0 { return "needs root to create a network namespace (unshare -n)" }
        for tool in ["unshare", "ip", "python3"] where (try? Proc.which(tool)) == nil { return "\(tool) is not installed" }
        return nil
    }()

    /// `sender`: ts_sender.py's options beyond file, address and pacing; `viaLoad`: the service
    /// starts with no playlist and the input comes through `POST /load`.
    init(rtp: Bool = false, sender: [String] = [], serve: [String] = [], viaLoad: Bool = false) throws {
        scratch = try Scratch()
        socketPath = scratch.path("scanout.sock")
        let port = rtp ? 5002 : 5000
        source = "\(rtp ? "rtp" : "udp")://239.1.1.1:\(port)"
        let clip = try Fixtures.path("counter_open_long.ts")
        let senderScript = Fixtures.packageRoot.appendingPathComponent("Tests/Fixtures/ts_sender.py").path
        func quoted(_ s: [String]) -> String { s.map { "'\($0)'" }.joined(separator: " ") }
        let script = """
            ip link set lo up && ip route add 239.0.0.0/8 dev lo || exit 97
            python3 \(quoted([senderScript, clip, "239.1.1.1", String(port), "--seconds", "7.667", "--wait-for-join"] + (rtp ? ["--rtp"] : []) + sender)) > '\(scratch.path("sender.log"))' 2>&1 &
            exec \(quoted([try ScanoutBinary.path(), "serve", "--output", "headless", "--port", "0", "--socket", socketPath] + serve + (viaLoad ? [] : [source])))
            """
        run = try NamespaceRun(script: script, scratch: scratch, socketPath: socketPath)
        // The sender starts once the service joined the group; the service listens once the
        // first item is prepared.
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if (try? state()) != nil {
                if viaLoad {
                    let r = try HTTPTestClient.request(.unix(path: socketPath), "POST", "/load", body: "{\"source\": \"\(source)\", \"autoplay\": true}", timeout: 15)
                    guard r.status == 200 else { throw SupportError("POST /load: \(r.status) \(r.text)") }
                }
                return
            }
            if !run.isRunning { break }
            usleep(50_000)
        }
        run.killNow()
        throw SupportError("scanout serve did not start in the namespace: \(stderr)")
    }

    var stderr: String { run.stderr }
    var senderLog: String { (try? String(contentsOfFile: scratch.path("sender.log"), encoding: .utf8)) ?? "" }
    var senderDone: Bool { senderLog.contains("sent ") }

    /// Every event since the start (the event stream's replay from id 0), up to the first for
    /// which `done` holds, or those that came within `seconds`.
    func events(seconds: Double = 3, until done: @escaping ([SSEMessage]) -> Bool) throws -> [SSEMessage] {
        try run.events(seconds: seconds, until: done)
    }

    func get(_ path: String) throws -> HTTPAnswer { try HTTPTestClient.request(.unix(path: socketPath), "GET", path, timeout: 5) }
    func state() throws -> [String: Any] { try get("/state").json ?? [:] }
    func stats() throws -> [String: Any] { try get("/stats").json ?? [:] }
    /// This input's transport counts from `/stats`.
    func transport() throws -> [String: Int] { ((try stats()["transport"] as? [String: Any])?[source] as? [String: Int]) ?? [:] }

    /// Polls every 100 ms until `done` holds or `seconds` pass; true when it held.
    func wait(seconds: Double, _ done: () throws -> Bool) rethrows -> Bool { try run.wait(seconds: seconds, done) }
}

@Suite("MPEG-TS over UDP and RTP multicast, in a network namespace", .serialized, .timeLimit(.minutes(2)),
       .enabled(if: NamespacedService.unavailable == nil, "skipped: \(NamespacedService.unavailable ?? "")"))
struct MulticastTests {
    @Test("UDP: the group is joined, the clip's frames are shown, and 5 dropped video packets are exactly 5 CC errors")
    func udpCountsDroppedPackets() async throws { try await offPool { [self] in try self.udpCountsDroppedPacketsBlocking() } }
    func udpCountsDroppedPacketsBlocking() throws {
        let s = try NamespacedService(sender: ["--drop-video", "5"])
        #expect(s.wait(seconds: 20) { s.senderDone })
        // The last packets reach the demuxer as soon as they are read; the counts settle at once.
        _ = try s.wait(seconds: 3) { try s.transport()["ccErrors"] == 5 }
        let t = try s.transport()
        #expect(t["ccErrors"] == 5, "\(t); sender: \(s.senderLog); serve: \(s.stderr)")
        #expect(t["discontinuities"] == 0)
        #expect(s.senderLog.contains("dropped 5 of video PID"))
        // 230 frames sent, in real time: wait until the ones received are decoded. A live
        // stream's last few stay in the demuxer and the decoder's reorder queue until more data
        // comes, and each lost packet can cost its picture (and those that refer to it).
        var decoded = -1
        _ = try s.wait(seconds: 3) {
            let now = try s.stats()["framesDecoded"] as? Int ?? 0
            defer { decoded = now }
            return now == decoded
        }
        let stats = try s.stats()
        #expect(decoded >= 200 && decoded <= 230, "\(stats)")
        let metrics = try s.get("/metrics").text
        #expect(metrics.contains("scanout_ts_cc_errors_total{source=\"\(s.source)\"} 5"), "\(metrics)")
        #expect(metrics.contains("scanout_ts_discontinuities_total{source=\"\(s.source)\"} 0"))
        // The discontinuity events add up to the same count.
        func ccReported(_ ms: [SSEMessage]) -> Int {
            ms.filter { $0.event == "discontinuity" }.compactMap { $0.json?["ccErrors"] as? Int }.reduce(0, +)
        }
        let events = try s.events { ccReported($0) >= 5 }
        #expect(ccReported(events) == 5, "\(events.map(\.event))")
        let last = try #require(events.last { $0.event == "discontinuity" }?.json)
        #expect(last["source"] as? String == s.source)
        #expect((last["totals"] as? [String: Any])?["ccErrors"] as? Int == 5)
    }

    @Test("RTP through POST /load: headers are taken off, every frame arrives, no CC error and no RTP packet lost")
    func rtp() async throws { try await offPool { [self] in try self.rtpBlocking() } }
    func rtpBlocking() throws {
        let s = try NamespacedService(rtp: true, viaLoad: true)
        #expect(s.wait(seconds: 20) { s.senderDone })
        _ = try s.wait(seconds: 3) { (try s.stats()["framesDecoded"] as? Int ?? 0) >= 225 }
        let stats = try s.stats()
        let decoded = stats["framesDecoded"] as? Int ?? 0
        #expect(decoded >= 225 && decoded <= 230, "\(stats); serve: \(s.stderr)")
        let t = try s.transport()
        #expect(t["ccErrors"] == 0 && t["rtpPacketsLost"] == 0 && t["discontinuities"] == 0, "\(t)")
        #expect((t["packets"] ?? 0) > 1000)
    }

    @Test("a sender that pauses 3 s: buffering with a reason, down past the 2 s timeout, then playing again by itself")
    func recoversAfterPause() async throws { try await offPool { [self] in try self.recoversAfterPauseBlocking() } }
    func recoversAfterPauseBlocking() throws {
        let s = try NamespacedService(sender: ["--pause-at", "2.5", "--pause-for", "3"], serve: ["--live-timeout", "2"])
        var sawBuffering: String?
        var sawDown = false
        var presentedWhenDown = 0
        #expect(try s.wait(seconds: 10) {
            let st = try s.state()
            if st["state"] as? String == "buffering" { sawBuffering = st["bufferingReason"] as? String ?? "" }
            if (st["reasons"] as? [String])?.contains("sourceTimeout") == true, !sawDown {
                sawDown = true
                presentedWhenDown = try s.stats()["framesPresented"] as? Int ?? 0
            }
            return sawDown
        }, "\(s.stderr)")
        #expect(sawBuffering?.contains("no packets for") == true, "\(sawBuffering ?? "never buffering")")
        #expect(try s.state()["serviceUp"] as? Bool == false)
        // Packets come back: playing and up again with no command, and frames flow.
        var last: [String: Any] = [:]
        #expect(try s.wait(seconds: 6) {
            last = try s.state()
            return last["state"] as? String == "playing" && last["serviceUp"] as? Bool == true
        }, "\(last)")
        #expect(try s.wait(seconds: 4) { (try s.stats()["framesPresented"] as? Int ?? 0) > presentedWhenDown + 30 })
        #expect(try s.transport()["ccErrors"] == 0)
        // The events say the same: buffering with a reason, an error that names the timeout,
        // down with sourceTimeout, then buffering off and up again.
        func down(_ m: SSEMessage) -> Bool { m.event == "serviceState" && (m.json?["reasons"] as? [String]) == ["sourceTimeout"] }
        let events = try s.events { ms in
            ms.contains(where: down) && ms.last?.event == "serviceState" && ms.last?.json?["up"] as? Bool == true
        }
        let buffering = events.filter { $0.event == "buffering" }.compactMap(\.json)
        let silent = buffering.filter { ($0["reason"] as? String)?.contains("no packets for") == true }
        #expect(silent.count == 1 && silent.first?["buffering"] as? Bool == true, "\(buffering)")
        #expect(buffering.contains { $0["buffering"] as? Bool == false })
        let error = events.first { $0.event == "error" }?.json?["message"] as? String ?? ""
        #expect(error.contains("timeout: no packets for") && !error.contains("Immediate exit"), "\(error)")
        #expect(events.contains(where: down), "\(events.map { "\($0.event) \($0.data)" })")
    }
}
