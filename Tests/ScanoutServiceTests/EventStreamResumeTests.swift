import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import ScanoutDisplay
import ScanoutPlayer
@testable import ScanoutService
import ScanoutTestSupport
import Testing

@Suite("event stream: retry, keep-alive, ids, Last-Event-ID")
struct EventStreamResumeTests {
    @Test("retry: and the state first, its id the newest event's; a keep-alive comment while nothing happens")
    func opening() async throws {
        let s = try await HeadlessService(keepAlive: .milliseconds(200))
        let newest = s.player.events.subscribe(after: nil).sequence
        #expect(newest > 0, "the load published events before")
        try await s.app.test(.live) { client in
            let port = UInt16(try #require(client.port))
            try await offPool {
                let reader = try SSEReader(.tcp(host: "127.0.0.1", port: port), path: "/events")
                let first = reader.read(timeout: 20) { $0.event == "state" }
                #expect(reader.retry == ControlAPI.retryMilliseconds)
                let state = try #require(first.last)
                #expect(state.event == "state" && Int(state.id ?? "") == newest)
                // Every 200 ms here; up to 20 s allowed, for a full test run on two busy cores.
                for _ in 0..<40 where !reader.comments.contains("keep-alive") { _ = reader.read(timeout: 0.5) { _ in false } }
                #expect(reader.comments.contains("keep-alive"), "\(reader.comments)")
            }
        }
    }

    @Test("a client reconnecting with Last-Event-ID gets the events it missed, same ids, in order, and no state")
    func replay() async throws {
        let s = try await HeadlessService()
        try await s.app.test(.live) { client in
            let port = UInt16(try #require(client.port))
            try await offPool { try Self.replay(port: port) }
            s.player.events.finish()   // as the service does at shutdown: the streams end, the server can stop
        }
    }

    /// One client sees events live; a second connects afterwards naming the first one's opening id.
    static func replay(port: UInt16) throws {
        let endpoint = HTTPEndpoint.tcp(host: "127.0.0.1", port: port)
        let a = try SSEReader(endpoint, path: "/events")
        let seen = Int(try #require(a.read(timeout: 20) { $0.event == "state" }.last?.id)) ?? -1
        // Events while the second client is away.
        #expect(try HTTPTestClient.request(endpoint, "POST", "/seek", body: #"{"position": 1.0, "exact": true}"#, timeout: 30).status == 200)
        #expect(try HTTPTestClient.request(endpoint, "PUT", "/rate", body: #"{"rate": 1.5}"#, timeout: 30).status == 200)
        let live = a.read(timeout: 20) { $0.event == "rateChanged" }.filter { $0.event != "position" }
        let b = try SSEReader(endpoint, path: "/events", headers: ["Last-Event-ID": String(seen)])
        let replayed = b.read(timeout: 20) { $0.event == "rateChanged" }.filter { $0.event != "position" }
        #expect(!live.isEmpty && live.last?.event == "rateChanged")
        #expect(!replayed.contains { $0.event == "state" })
        #expect(replayed.map(\.id) == live.map(\.id) && replayed.map(\.event) == live.map(\.event))
        let ids = replayed.compactMap { Int($0.id ?? "") }
        #expect(ids.first.map { $0 > seen } == true && ids == ids.sorted() && Set(ids).count == ids.count)
    }

    @Test("an id the service never gave (it restarted) is reported as a gap, then the state")
    func unknownID() async throws {
        let s = try await HeadlessService()
        try await s.app.test(.live) { client in
            let port = UInt16(try #require(client.port))
            try await offPool {
                let r = try SSEReader(.tcp(host: "127.0.0.1", port: port), path: "/events", headers: ["Last-Event-ID": "999999"])
                let messages = r.read(timeout: 20) { $0.event == "state" }
                let gap = try #require(messages.first { $0.event == "gap" }?.json)
                #expect(gap["to"] as? Int == 999999 && (gap["reason"] as? String)?.contains("restarted") == true)
                #expect(messages.last?.event == "state")
            }
            s.player.events.finish()
        }
    }

    @Test("the hub's ring: missed events replayed while kept, a gap beyond it named by range")
    func ring() {
        let hub = EventHub(replayCapacity: 4)
        for _ in 0..<10 { hub.publish(.rateChanged(1)) }
        let recent = hub.subscribe(after: 7)
        #expect(recent.sequence == 10 && recent.gap == nil && recent.replay.map(\.sequence) == [8, 9, 10])
        let old = hub.subscribe(after: 2)
        #expect(old.gap == 3...6 && old.replay.map(\.sequence) == [7, 8, 9, 10])
        let current = hub.subscribe(after: 10)
        #expect(current.gap == nil && current.replay.isEmpty)
        let foreign = hub.subscribe(after: 15)
        #expect(foreign.gap == 11...15)
        hub.finish()
    }
}
