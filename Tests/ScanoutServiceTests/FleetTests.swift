import Foundation
import Logging
import ScanoutOffline
@testable import ScanoutService
import ScanoutTestSupport
import Testing

/// A box of a fleet through a real mosquitto on loopback: commands in (its own and its group's),
/// answers, retained state and status, events, the will, and proof of play forwarded from the
/// store's queue across a broker outage and a SIGKILL, each record delivered.
@Suite("the fleet through MQTT", .serialized)
struct FleetTests {
    static func json(_ s: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(s.utf8))) as? [String: Any] ?? [:]
    }

    static func serve(_ broker: MosquittoBroker, stateDir: String, id: String, playlist: [String], scratch: Scratch) throws -> ServeProcess {
        let config = scratch.path("scanout-\(UUID().uuidString.prefix(6)).json")
        let body: [String: Any] = [
            "stateDir": stateDir, "repeat": "all", "outputSize": "64x64",
            "playlist": playlist.map { ["source": $0] },
            "mqtt": ["url": broker.url, "clientId": id, "groups": ["lobby"], "statsInterval": 1],
        ]
        try JSONSerialization.data(withJSONObject: body).write(to: URL(fileURLWithPath: config))
        return try ServeProcess(arguments: ["--config", config])
    }

    @Test("commands on the box's topic and its group's, answered on reply; state and status retained; events; a bad command refused by field; the will says offline")
    func commands() throws {
        let broker = try MosquittoBroker()
        let scratch = try Scratch()
        let clip = try Fixtures.path("counter.mp4"), other = try Fixtures.path("bt709.mp4")
        let sub = try broker.subscribe("scanout/box1/#")
        let serve = try Self.serve(broker, stateDir: scratch.path("state"), id: "box1", playlist: [clip], scratch: scratch)
        var seen = sub.wait(seconds: 10) { m in m.contains { $0.topic == "scanout/box1/status" && $0.payload == "online" } && m.contains { $0.payload.contains("\"firstFrame\"") } }
        #expect(seen.contains { $0.topic == "scanout/box1/status" && $0.payload == "online" }, "\(serve.stderr)")
        #expect(seen.contains { $0.topic == "scanout/box1/events" && Self.json($0.payload)["type"] as? String == "firstFrame" })
        #expect(seen.contains { $0.topic == "scanout/box1/state" && Self.json($0.payload)["state"] as? String == "playing" })

        try broker.publish("scanout/box1/cmd", #"{"id": "a1", "method": "POST", "path": "/load", "body": {"source": "\#(other)", "autoplay": true}}"#)
        seen = sub.wait(seconds: 10) { $0.contains { $0.topic == "scanout/box1/reply" } }
        let reply = Self.json(seen.first { $0.topic == "scanout/box1/reply" }?.payload ?? "")
        #expect(reply["id"] as? String == "a1" && reply["status"] as? Int == 200, "\(reply)")
        let state = try serve.request("GET", "/state").json ?? [:]
        #expect((state["playlist"] as? [[String: Any]])?.first?["source"] as? String == other)

        // A group's command (POST by default), then refusals naming the field.
        try broker.publish("scanout/group/lobby/cmd", #"{"id": "g1", "path": "/pause"}"#)
        try broker.publish("scanout/group/other/cmd", #"{"id": "not-ours", "path": "/stop"}"#)
        try broker.publish("scanout/box1/cmd", #"{"id": "b1", "path": "/load", "body": {"sorce": "x"}}"#)
        try broker.publish("scanout/box1/cmd", #"{"id": "b2", "path": "/events", "method": "GET"}"#)
        try broker.publish("scanout/box1/cmd", "not json")
        seen = sub.wait(seconds: 10) { $0.filter { $0.topic == "scanout/box1/reply" }.count >= 5 }
        let replies = seen.filter { $0.topic == "scanout/box1/reply" }.map { Self.json($0.payload) }
        #expect(replies.map { $0["id"] as? String } == ["a1", "g1", "b1", "b2", nil], "\(replies)")
        #expect(replies.map { $0["status"] as? Int } == [200, 200, 400, 400, 400])
        #expect(replies.map { ($0["body"] as? [String: Any])?["field"] as? String } == [nil, nil, "sorce", "path", "command"], "\(replies)")
        #expect(try serve.request("GET", "/state").json?["state"] as? String == "paused")
        let stats = try serve.request("GET", "/stats").json?["mqtt"] as? [String: Any]
        #expect(stats?["connected"] as? Bool == true && stats?["commands"] as? Int == 5 && stats?["stored"] as? Bool == true, "\(stats ?? [:])")

        // Gone without a goodbye: the broker says the will.
        kill(serve.pid, SIGKILL)
        seen = sub.wait(seconds: 10) { $0.last { $0.topic == "scanout/box1/status" }?.payload == "offline" }
        #expect(seen.last { $0.topic == "scanout/box1/status" }?.payload == "offline")
    }

    @Test("proof of play and stats from the store's queue: a broker away, then the box killed and started again; every record delivered, duplicates only by id")
    func proofOfPlaySurvives() throws {
        let broker = try MosquittoBroker()
        let scratch = try Scratch()
        let clip = try Fixtures.path("counter.mp4")   // 3.2 s
        let state = scratch.path("state")
        let sub = try broker.subscribe("scanout/box2/+", id: "receiver-\(UUID().uuidString.prefix(6))")
        var serve = try Self.serve(broker, stateDir: state, id: "box2", playlist: [clip], scratch: scratch)
        _ = sub.wait(seconds: 10) { $0.contains { $0.topic == "scanout/box2/proof-of-play" } }

        // The broker away for 8 s: two or three plays end meanwhile, and wait in the store.
        broker.stop()
        sleep(8)
        let queued = try serve.request("GET", "/stats").json?["mqtt"] as? [String: Any]
        #expect((queued?["queued"] as? Int ?? 0) >= 2 && queued?["connected"] as? Bool == false, "\(queued ?? [:])")
        try broker.start()
        // A second into the next play, the box is killed; started again, it closes that play.
        _ = sub.wait(seconds: 40) { _ in (((try? serve.request("GET", "/stats").json?["mqtt"] as? [String: Any])?["queued"] as? Int) ?? 1) == 0 }
        usleep(1_500_000)
        kill(serve.pid, SIGKILL)
        serve = try Self.serve(broker, stateDir: state, id: "box2", playlist: [clip], scratch: scratch)
        sleep(5)
        _ = serve.terminate()

        // Every play closed, less those still waiting (the one the goodbye closed).
        let store = try OfflineStore(directory: state, logger: Logger(label: "test"))
        let waiting = Set(try store.outbox().compactMap { Self.json(String(decoding: $0.payload, as: UTF8.self))["id"] as? String })
        let records = Set(try store.plays().map(\.id)).subtracting(waiting)
        let seen = sub.wait(seconds: 20) { m in
            Set(m.filter { $0.topic == "scanout/box2/proof-of-play" }.compactMap { Self.json($0.payload)["id"] as? String }).isSuperset(of: records)
        }
        let plays = seen.filter { $0.topic == "scanout/box2/proof-of-play" }.map { Self.json($0.payload) }
        let ids = plays.compactMap { $0["id"] as? String }
        #expect(records.count >= 5, "\(records)")
        #expect(Set(ids) == Set(records), "missing: \(Set(records).subtracting(ids)); extra: \(Set(ids).subtracting(records))")
        #expect(plays.allSatisfy { $0["device"] as? String == "box2" && $0["kind"] as? String == "play" && ($0["play"] as? [String: Any])?["source"] as? String == clip })
        #expect(seen.contains { $0.topic == "scanout/box2/stats" && Self.json($0.payload)["kind"] as? String == "stats" })
    }
}

@Suite("fleet commands as read")
struct FleetCommandTests {
    @Test("method defaults to POST; fields and methods checked; streams refused")
    func parse() throws {
        guard case .success(let c) = FleetCommand.parse(Array(#"{"path": "/seek", "body": {"position": 3}, "id": "x"}"#.utf8)) else {
            Issue.record("refused"); return
        }
        #expect(c.method == .post && c.path == "/seek" && c.id == "x" && String(decoding: c.body, as: UTF8.self) == #"{"position":3}"#)
        for (payload, field) in [(#"{"path": "/seek", "verb": "POST"}"#, "verb"), (#"{"method": "PATCH", "path": "/x"}"#, "method"),
                                 (#"{"body": {}}"#, "path"), (#"{"path": "/events", "method": "GET"}"#, "path"), (#"[1]"#, "command"),
                                 (#"{"path": "/x", "id": 3}"#, "id"), (#"{"path": "/x", "body": 3}"#, "body")] {
            guard case .failure(let r) = FleetCommand.parse(Array(payload.utf8)) else {
                Issue.record("\(payload) was taken"); continue
            }
            #expect(r.field == field, "\(payload): \(r.message)")
        }
    }
}
