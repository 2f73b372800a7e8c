import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
@testable import ScanoutService
import ScanoutTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("the channels key of the config")
struct ChannelsConfigTests {
    func config(_ text: String) throws -> ServiceConfig {
        var c = ServiceConfig()
        try c.apply(json: Data(text.utf8), runtimeOnly: false)
        return c
    }

    @Test("m3u and sap: true (the RFC 2974 group), or sap's address, port, interface and timeout")
    func accepted() throws {
        let plain = try config(#"{"channels": {"m3u": "/etc/scanout/channels.m3u", "sap": true}}"#).channels
        #expect(plain == ChannelsConfig(m3u: "/etc/scanout/channels.m3u", sap: SAPListenerOptions()))
        #expect(plain.sap?.url == "udp://224.2.127.254:9875")
        let custom = try config(#"{"channels": {"sap": {"address": "239.255.255.255", "port": 9876, "interface": "eth1", "timeout": 3}}}"#).channels
        #expect(custom == ChannelsConfig(sap: SAPListenerOptions(address: "239.255.255.255", port: 9876, interface: "eth1", timeout: 3)))
        #expect(try config(#"{"channels": {"sap": false}}"#).channels.isEmpty)
        let json = try #require(try config(#"{"channels": {"sap": true}}"#).json["channels"] as? [String: Any])
        #expect((json["sap"] as? [String: Any])?["address"] as? String == "224.2.127.254")
    }

    @Test("mistakes are named by their field", arguments: [
        (#"{"channels": {"sap": {"address": "sap.example"}}}"#, "channels.sap.address"),
        (#"{"channels": {"sap": {"port": 0}}}"#, "channels.sap.port"),
        (#"{"channels": {"sap": {"ttl": 1}}}"#, "channels.sap.ttl"),
        (#"{"channels": {"m3u": ""}}"#, "channels.m3u"),
        (#"{"channels": {"list": "x.m3u"}}"#, "channels.list"),
        (#"{"channels": "x.m3u"}"#, "channels"),
    ])
    func refused(text: String, field: String) {
        #expect { _ = try config(text) } throws: { ($0 as? APIError)?.field == field }
    }
}

/// `scanout serve` with a channel list, in a network namespace of its own (loopback only, with a
/// route for 224.0.0.0/4): an M3U file with one local clip, and `Tests/Fixtures/sap_announcer.py`
/// announcing two multicast channels, One (239.1.1.1:5000, group Sport) and Two (239.1.1.2:5000,
/// group News), every 0.3 s, each sent by `ts_sender.py --loop` once the service joins its group.
/// The announcer deletes or silences a channel when a file appears in `control`.
final class ChannelNamespace: Sendable {
    let scratch: Scratch
    let socketPath: String
    let clip: String
    private let run: NamespaceRun

    init() throws {
        let scratch = try Scratch()
        self.scratch = scratch
        socketPath = scratch.path("scanout.sock")
        clip = try Fixtures.path("counter.mp4")
        let live = try Fixtures.path("counter_open_long.ts")
        try FileManager.default.createDirectory(atPath: scratch.path("control"), withIntermediateDirectories: true)
        try """
            #EXTM3U
            #EXTINF:-1 tvg-id="local.counter" tvg-logo="http://logos.example/counter.png" group-title="Files",Counter
            \(clip)
            """.write(toFile: scratch.path("channels.m3u"), atomically: true, encoding: .utf8)
        let config = #"{"channels": {"m3u": "\#(scratch.path("channels.m3u"))", "sap": {"timeout": 2}}, "stateDir": "\#(scratch.path("state"))"}"#
        try config.write(toFile: scratch.path("scanout.json"), atomically: true, encoding: .utf8)
        let fixtures = Fixtures.packageRoot.appendingPathComponent("Tests/Fixtures").path
        func quoted(_ s: [String]) -> String { s.map { "'\($0)'" }.joined(separator: " ") }
        func sender(_ group: String) -> String {
            "python3 \(quoted(["\(fixtures)/ts_sender.py", live, group, "5000", "--seconds", "7.667", "--wait-for-join", "--loop"])) > '\(scratch.path("sender-\(group).log"))' 2>&1 &"
        }
        let script = """
            ip link set lo up && ip route add 224.0.0.0/4 dev lo || exit 97
            python3 \(quoted(["\(fixtures)/sap_announcer.py", "--channel", "One=239.1.1.1:5000:Sport", "--channel", "Two=239.1.1.2:5000:News",
                              "--interval", "0.3", "--control", scratch.path("control")])) > '\(scratch.path("announcer.log"))' 2>&1 &
            \(sender("239.1.1.1"))
            \(sender("239.1.1.2"))
            exec \(quoted([try ScanoutBinary.path(), "serve", "--output", "headless", "--port", "0", "--socket", socketPath, "--config", scratch.path("scanout.json")]))
            """
        run = try NamespaceRun(script: script, scratch: scratch, socketPath: socketPath)
        guard run.wait(seconds: 20, { (try? HTTPTestClient.request(.unix(path: socketPath), "GET", "/state", timeout: 5).status) == 200 }) else {
            run.killNow()
            throw SupportError("scanout serve did not start in the namespace: \(run.stderr)")
        }
    }

    var stderr: String { run.stderr }
    var announcerLog: String { (try? String(contentsOfFile: scratch.path("announcer.log"), encoding: .utf8)) ?? "" }

    func request(_ method: String, _ path: String, body: String? = nil) throws -> HTTPAnswer {
        try HTTPTestClient.request(.unix(path: socketPath), method, path, body: body, timeout: 10)
    }
    func get(_ path: String) throws -> HTTPAnswer { try request("GET", path) }
    func channels() throws -> [[String: Any]] { try get("/channels").json?["channels"] as? [[String: Any]] ?? [] }
    func presented() throws -> Int { try get("/stats").json?["framesPresented"] as? Int ?? 0 }
    /// Makes the announcer delete (`delete`) or stop announcing (`silence`) a channel.
    func control(_ action: String, _ name: String) {
        FileManager.default.createFile(atPath: scratch.path("control/\(action)-\(name)"), contents: nil)
    }

    func events(until done: @escaping ([SSEMessage]) -> Bool) throws -> [SSEMessage] { try run.events(seconds: 5, until: done) }
    func wait(seconds: Double, _ done: () throws -> Bool) rethrows -> Bool { try run.wait(seconds: seconds, done) }

    /// Frames flow: more than `frames` presented within `seconds` from now.
    func plays(frames: Int = 10, seconds: Double = 8) throws -> Bool {
        let start = try presented()
        return try wait(seconds: seconds) { try presented() > start + frames }
    }
}

@Suite("channels from M3U and SAP, in a network namespace", .serialized, .timeLimit(.minutes(2)),
       .enabled(if: NamespacedService.unavailable == nil, "skipped: \(NamespacedService.unavailable ?? "")"))
struct ChannelTests {
    @Test("the SAP sessions join the M3U channel in one list; tune by id, next and previous wrap around")
    func listAndTune() async throws { try await offPool { [self] in try self.listAndTuneBlocking() } }
    func listAndTuneBlocking() throws {
        let s = try ChannelNamespace()
        #expect(try s.wait(seconds: 5) { try s.channels().count == 3 }, "announcer: \(s.announcerLog); serve: \(s.stderr)")
        let list = try s.channels()
        try #require(list.count == 3)
        #expect(list.map { $0["name"] as? String } == ["Counter", "One", "Two"])
        #expect(list.map { $0["origin"] as? String } == ["m3u", "sap", "sap"])
        #expect(list.map { $0["group"] as? String } == ["Files", "Sport", "News"])
        #expect(list.map { $0["url"] as? String } == [s.clip, "udp://239.1.1.1:5000", "udp://239.1.1.2:5000"])
        #expect(list[0]["id"] as? String == "local.counter" && list[0]["logo"] as? String == "http://logos.example/counter.png")
        // serve --channels starts on the list's first channel (ChannelStartTests).
        #expect(list.map { $0["current"] as? Bool } == [true, false, false])
        let ids = list.compactMap { $0["id"] as? String }
        #expect((ids[1] as String).hasPrefix("sap-") && ids[1] != ids[2])

        let tuned = try s.request("POST", "/channel", body: #"{"id": "\#(ids[1])"}"#)
        #expect(tuned.status == 200, "\(tuned.text)")
        #expect((tuned.json?["channel"] as? [String: Any])?["current"] as? Bool == true)
        #expect(try s.plays(), "\(s.stderr)")
        #expect(try s.get("/channels").json?["current"] as? String == ids[1])

        // Next: Two; next again wraps to the M3U channel; previous goes back to Two.
        var order: [String] = []
        for (path, expected) in [("/channel/next", 2), ("/channel/next", 0), ("/channel/previous", 2)] {
            let r = try s.request("POST", path, body: "{}")
            #expect(r.status == 200, "\(path): \(r.text)")
            order.append((r.json?["channel"] as? [String: Any])?["id"] as? String ?? "")
            #expect(order.last == ids[expected], "\(path)")
            #expect(try s.plays(frames: 5), "\(path): \(s.stderr)")
        }
        let state = try s.get("/state").json ?? [:]
        #expect(state["state"] as? String == "playing" && (state["playlist"] as? [[String: Any]])?.first?["source"] as? String == "udp://239.1.1.2:5000")

        let unknown = try s.request("POST", "/channel", body: #"{"id": "nope"}"#)
        #expect(unknown.status == 404 && unknown.json?["field"] as? String == "id", "\(unknown.text)")

        // One channelChanged per tune (the first at start), each before its item's events.
        let events = try s.events { $0.filter { $0.event == "channelChanged" }.count >= 5 }
        let changed = events.filter { $0.event == "channelChanged" }.compactMap(\.json)
        #expect(changed.compactMap { $0["id"] as? String } == [ids[0], ids[1], ids[2], ids[0], ids[2]])
        #expect(changed.dropFirst().first?["source"] as? String == "udp://239.1.1.1:5000" && changed.dropFirst().first?["name"] as? String == "One")
        let added = events.filter { $0.event == "channelsChanged" }.compactMap { $0.json?["added"] as? [String] }.flatMap { $0 }
        #expect(added == [ids[1], ids[2]])
    }

    @Test("a channel that stops being announced leaves the list; the one playing, deleted, stops with channelInvalid")
    func withdrawn() async throws { try await offPool { [self] in try self.withdrawnBlocking() } }
    func withdrawnBlocking() throws {
        let s = try ChannelNamespace()
        #expect(try s.wait(seconds: 5) { try s.channels().count == 3 }, "\(s.stderr)")
        let ids = try s.channels().compactMap { $0["id"] as? String }
        try #require(ids.count == 3)
        #expect(try s.request("POST", "/channel", body: #"{"id": "\#(ids[1])"}"#).status == 200)
        #expect(try s.plays(), "\(s.stderr)")

        // Two is not playing: silenced, it leaves the list after the 2 s timeout, and One plays on.
        s.control("silence", "Two")
        #expect(try s.wait(seconds: 6) { try s.channels().count == 2 }, "\(s.announcerLog)")
        #expect(try s.get("/state").json?["state"] as? String == "playing")
        #expect(try s.plays(frames: 5))

        // One plays: a SAP delete stops it, the service goes down with the reason.
        s.control("delete", "One")
        var state: [String: Any] = [:]
        #expect(try s.wait(seconds: 3) {
            state = try s.get("/state").json ?? [:]
            // The stop comes first, the service going down just after it (the events' order).
            return state["state"] as? String == "stopped" && state["serviceUp"] as? Bool == false
        }, "\(state); \(s.announcerLog)")
        #expect(state["serviceUp"] as? Bool == false && state["reasons"] as? [String] == ["channelInvalid"], "\(state)")
        #expect(try s.channels().map { $0["id"] as? String } == [ids[0]])
        #expect(try s.get("/health").json?["reasons"] as? [String] == ["channelInvalid"])

        let events = try s.events { $0.contains { $0.event == "channelInvalid" } && $0.last?.event == "channelsChanged" }
        let tail = events.drop { $0.event != "channelInvalid" }.filter { $0.event != "position" }
        #expect(tail.map(\.event) == ["channelInvalid", "stateChanged", "stop", "serviceState", "channelsChanged"], "\(tail.map(\.data))")
        let invalid = tail.first?.json ?? [:]
        #expect(invalid["id"] as? String == ids[1])
        #expect((invalid["reason"] as? String)?.contains("deleted by its announcer (SAP delete from 127.0.0.1)") == true, "\(invalid)")
        #expect(tail.dropFirst(3).first?.json?["reasons"] as? [String] == ["channelInvalid"])
        #expect(tail.last?.json?["removed"] as? [String] == [ids[1]])
        // The silenced one left without stopping anything: its own channelsChanged, no channelInvalid.
        let removedTwo = events.filter { $0.event == "channelsChanged" && ($0.json?["removed"] as? [String]) == [ids[2]] }
        #expect(removedTwo.count == 1 && events.filter { $0.event == "channelInvalid" }.count == 1)
    }
}

@Suite("the channel playlist read again on reload")
struct ChannelReloadTests {
    @Test("SIGHUP reads the M3U again: a new channel is added, the one playing is gone, so it stops with channelInvalid")
    func reloadReadsThePlaylistAgain() async throws { try await offPool { try Self.reloadBlocking() } }

    static func reloadBlocking() throws {
        let scratch = try Scratch()
        let clip = try Fixtures.path("counter.mp4"), other = try Fixtures.path("counter_open.ts"), third = try Fixtures.path("bt709.mp4")
        let m3u = scratch.path("channels.m3u"), file = scratch.path("scanout.json")
        func list(_ entries: [(String, String)]) throws {
            try (["#EXTM3U"] + entries.flatMap { ["#EXTINF:-1 tvg-id=\"\($0.0)\",\($0.0)", $0.1] }).joined(separator: "\n")
                .write(toFile: m3u, atomically: true, encoding: .utf8)
        }
        try list([("one", clip), ("two", other)])
        try JSONSerialization.data(withJSONObject: ["channels": ["m3u": m3u], "repeat": "all", "output": "headless"])
            .write(to: URL(fileURLWithPath: file))
        let server = try ServeProcess(arguments: ["--config", file])
        defer { _ = server.terminate() }
        let tuned = try server.request("POST", "/channel", body: #"{"id": "one"}"#)
        #expect(tuned.status == 200, "\(tuned.text)")
        let events = try SSEReader(server.tcp, path: "/events")
        _ = events.read(timeout: 5) { $0.event == "state" }

        try list([("two", other), ("three", third)])
        kill(server.pid, SIGHUP)
        let seen = events.read(timeout: 10) { $0.event == "channelsChanged" }
        let names = seen.map(\.event).filter { ["channelInvalid", "stop", "channelsChanged"].contains($0) }
        #expect(names == ["channelInvalid", "stop", "channelsChanged"], "\(seen.map(\.event)); \(server.stderr)")
        #expect(seen.first { $0.event == "channelInvalid" }?.json?["id"] as? String == "one")
        let changed = try #require(seen.last?.json)
        #expect(changed["added"] as? [String] == ["three"] && changed["removed"] as? [String] == ["one"], "\(changed)")
        let ids = (try server.request("GET", "/channels").json?["channels"] as? [[String: Any]])?.compactMap { $0["id"] as? String }
        #expect(ids == ["two", "three"])
        #expect(try server.request("GET", "/state").json?["state"] as? String == "stopped")
        #expect(server.stderr.contains("channel list reloaded: 2 channels, 1 added, 1 removed"), "\(server.stderr)")
    }
}
