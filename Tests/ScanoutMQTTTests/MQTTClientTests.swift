import Foundation
import ScanoutMQTT
import ScanoutTestSupport
import Synchronization
import Testing

/// What the callbacks heard, in order.
final class Heard: Sendable {
    let log = Mutex<[String]>([])
    let messages = Mutex<[MQTTMessage]>([])
    let acks = Mutex<[Int32]>([])

    var callbacks: MQTTCallbacks {
        var c = MQTTCallbacks()
        c.connected = { [self] in log.withLock { $0.append("connected") } }
        c.disconnected = { [self] why in log.withLock { $0.append("disconnected: \(why)") } }
        c.message = { [self] m in messages.withLock { $0.append(m) } }
        c.acknowledged = { [self] mid in acks.withLock { $0.append(mid) } }
        c.error = { [self] text in log.withLock { $0.append("error: \(text)") } }
        return c
    }

    func wait(seconds: Double = 10, _ condition: (Heard) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition(self) { return true }
            usleep(10_000)
        }
        return condition(self)
    }

    var connections: Int { log.withLock { $0.filter { $0 == "connected" }.count } }
}

@Suite("libmosquitto's client against a real mosquitto on loopback")
struct MQTTClientTests {
    @Test("messages both ways with the broker's own clients; a QoS 1 publish is acknowledged by its id")
    func bothWays() throws {
        let broker = try MosquittoBroker()
        let heard = Heard()
        let client = try MQTTClient(settings: MQTTSettings(host: "127.0.0.1", port: Int(broker.port), clientId: "t-\(UUID().uuidString.prefix(8))"),
                                    callbacks: heard.callbacks)
        defer { client.close() }
        try client.start()
        #expect(heard.wait { $0.connections == 1 } && client.isConnected)
        try client.subscribe("in/#", qos: 1)
        let sub = try broker.subscribe("out/#")
        // The subscription is in place once a message sent after it arrives.
        #expect(heard.wait { h in
            try? broker.publish("in/a", "{\"n\":1}")
            return !h.messages.withLock { $0.isEmpty }
        })
        let got = heard.messages.withLock { $0.first }
        #expect(got?.topic == "in/a" && got?.payload == Array("{\"n\":1}".utf8) && got?.qos == 1)

        let mid = try client.publish("out/x", Array("hello".utf8), qos: 1)
        #expect(heard.wait { $0.acks.withLock { $0.contains(mid) } })
        let seen = sub.wait(seconds: 5) { !$0.isEmpty }
        #expect(seen.map(\.topic) == ["out/x"] && seen.map(\.payload) == ["hello"])
    }

    @Test("a broker that is not there yet, then lost and back: the client connects, and connects again, by itself")
    func reconnects() throws {
        let broker = try MosquittoBroker()
        broker.stop()
        let heard = Heard()
        let client = try MQTTClient(settings: MQTTSettings(host: "127.0.0.1", port: Int(broker.port), clientId: "r-\(UUID().uuidString.prefix(8))"),
                                    callbacks: heard.callbacks)
        defer { client.close() }
        try client.start()
        usleep(500_000)
        #expect(!client.isConnected)
        #expect(throws: MQTTError.notConnected) { try client.publish("x", [1], qos: 1) }
        try broker.start()
        #expect(heard.wait(seconds: 15) { $0.connections == 1 }, "\(heard.log.withLock { $0 })")
        broker.stop()
        #expect(heard.wait { _ in !client.isConnected })
        try broker.start()
        #expect(heard.wait(seconds: 40) { $0.connections == 2 }, "\(heard.log.withLock { $0 })")
        #expect(heard.log.withLock { $0 }.contains { $0.hasPrefix("disconnected: the connection was lost") })
    }

    @Test("TLS: a broker whose certificate the CA signed is connected to; with another CA, the handshake fails, is said, and start does not throw")
    func tls() throws {
        let broker = try MosquittoBroker(tls: true)
        let ca = try #require(broker.caFile)
        let heard = Heard()
        let client = try MQTTClient(settings: MQTTSettings(host: "127.0.0.1", port: Int(broker.port), clientId: "tls-\(UUID().uuidString.prefix(8))",
                                                           tls: MQTTSettings.TLS(caFile: ca)), callbacks: heard.callbacks)
        defer { client.close() }
        try client.start()
        #expect(heard.wait { $0.connections == 1 })
        let mid = try client.publish("t/x", [1], qos: 1)
        #expect(heard.wait { $0.acks.withLock { $0.contains(mid) } })

        let wrong = Heard()
        let other = (ca as NSString).deletingLastPathComponent + "/other-ca.pem"
        let refused = try MQTTClient(settings: MQTTSettings(host: "127.0.0.1", port: Int(broker.port), clientId: "bad-\(UUID().uuidString.prefix(8))",
                                                            tls: MQTTSettings.TLS(caFile: other)), callbacks: wrong.callbacks)
        defer { refused.close() }
        try refused.start()
        #expect(wrong.wait(seconds: 10) { $0.log.withLock { $0 }.contains { $0.contains("certificate verify failed") } }, "\(wrong.log.withLock { $0 })")
        #expect(!refused.isConnected && wrong.connections == 0)
    }

    @Test("settings libmosquitto cannot use are refused with the field named")
    func refusals() throws {
        let tls = MQTTSettings.TLS(caFile: "/nonexistent/ca.pem")
        #expect(throws: MQTTError.setting("tls.caFile", "/nonexistent/ca.pem cannot be read (No such file or directory)")) {
            _ = try MQTTClient(settings: MQTTSettings(host: "127.0.0.1", port: 1883, clientId: "x", tls: tls), callbacks: MQTTCallbacks())
        }
        #expect(MQTTSettings.endpoint(of: "mqtt://broker.lan")! == ("broker.lan", 1883, false))
        #expect(MQTTSettings.endpoint(of: "mqtts://broker.lan:9000")! == ("broker.lan", 9000, true))
        #expect(MQTTSettings.endpoint(of: "http://broker.lan") == nil)
        #expect(MQTTSettings.endpoint(of: "mqtt://") == nil)
        #expect(MQTTSettings.endpoint(of: "mqtt://b:70000") == nil)
    }
}
