import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import ScanoutOffline
import ScanoutPlayer
@testable import ScanoutService
import ScanoutTestSupport
import Synchronization
import Testing

/// Proof of play: each play recorded as it starts, every 10 s and at its end, in the offline store
/// (a restart keeps them), with how it ended; `GET /proof-of-play` as JSON and CSV.
@Suite("proof of play", .serialized)
struct ProofOfPlayTests {
    static let stages = PreparationStages(open: 0, probe: 0, decoder: 0, firstDecode: 0)
    static func figures(_ shown: Int, _ dropped: Int = 0) -> PlayerSnapshot {
        var s = PlayerSnapshot()
        s.framesPresented = shown
        s.framesDropped = dropped
        return s
    }

    @Test("a play to its end, paused time left out; one left by a command; one censored; one failed; kept across a restart of the store; the range filter")
    func records() throws {
        let scratch = try Scratch()
        let clock = Mutex(Date(timeIntervalSince1970: 2_000_000_000))
        func at(_ s: Double) { clock.withLock { $0 = Date(timeIntervalSince1970: 2_000_000_000 + s) } }
        let store = try OfflineStore(directory: scratch.path("state"), logger: Logger(label: "test"))
        let proof = ProofOfPlay(store: store, days: 90, logger: Logger(label: "test"), now: { clock.withLock { $0 } })
        proof.observe(.firstFrame(item: 0, source: "a.mp4", sinceRequest: 0.02, stages: Self.stages), zone: nil, snapshot: Self.figures(1))
        at(11)
        proof.observe(.position(seconds: 11, duration: 60, item: 0), zone: nil, snapshot: Self.figures(330))
        // Recorded while it plays (what a SIGKILL would leave).
        let meanwhile = try #require(try store.plays().first)
        #expect(meanwhile.item == 0 && meanwhile.seconds == 11 && meanwhile.framesShown == 330)
        at(20); proof.observe(.stateChanged(from: .playing, to: .paused), zone: nil, snapshot: Self.figures(600))
        at(30); proof.observe(.stateChanged(from: .paused, to: .playing), zone: nil, snapshot: Self.figures(600))
        at(40)
        proof.observe(.firstFrame(item: 1, source: "b.mp4", sinceRequest: nil, stages: Self.stages), zone: nil, snapshot: Self.figures(901, 3))
        at(45)
        proof.observe(.firstFrame(item: 2, source: "c.mp4", sinceRequest: 0.03, stages: Self.stages), zone: nil, snapshot: Self.figures(1051, 3))
        proof.observe(.outputCensored(output: "HDMI-A-1", reason: "no HDCP"), zone: nil, snapshot: Self.figures(1060, 3))
        at(50); proof.observe(.stop, zone: nil, snapshot: Self.figures(1200, 3))
        proof.observe(.firstFrame(item: 3, source: "https://user:secret@cdn.example/d.m3u8", sinceRequest: 0.02, stages: Self.stages),
                      zone: "tile", snapshot: Self.figures(0))
        at(52); proof.observe(.error(message: "decode failed", item: 3, skipped: true), zone: "tile", snapshot: Self.figures(0))

        // The store opened again (a restart) has every play.
        let again = try OfflineStore(directory: scratch.path("state"), logger: Logger(label: "test"))
        let plays = try again.plays()
        #expect(plays.map(\.item) == [0, 1, 2, 3])
        #expect(plays.map(\.outcome) == [.completed, .skipped, .censored, .failed])
        #expect(plays[0].seconds == 30 && plays[0].framesShown == 900 && plays[0].framesDropped == 3)   // 40 s less 10 paused
        #expect(plays[1].seconds == 5 && plays[1].framesShown == 150)
        #expect(plays[2].framesShown == 150 && plays[3].zone == "tile" && !plays[3].source.contains("secret"))
        #expect(Set(plays.map(\.id)).count == 4)
        #expect(try again.plays(from: 2_000_000_040, to: 2_000_000_050).map(\.item) == [1, 2])
        #expect(try again.prunePlays(before: 2_000_000_041) == 2)
    }

    @Test("GET /proof-of-play: a clip played to its end, as JSON and CSV; a bad range or format named")
    func api() async throws {
        let service = try await InProcessService(keys: nil)
        defer { service.player.shutdown() }
        let clip = try Fixtures.path("counter.mp4")
        let since = Int(Date().timeIntervalSince1970) - 1
        try await Application(router: service.api.router()).test(.router) { client in
            #expect(try await service.request(client, .post, "/load", ["source": clip, "autoplay": true]).status == 200)
            try await service.wait { service.player.snapshot.state == .ended }
            let json = try await service.request(client, .get, "/proof-of-play?from=\(since)").json
            let plays = try #require(json["plays"] as? [[String: Any]])
            let play = try #require(plays.last)
            #expect(play["outcome"] as? String == "completed" && play["source"] as? String == clip && play["framesShown"] as? Int == 96)
            #expect(abs((play["seconds"] as? Double ?? 0) - 3.2) < 0.5)
            let csv = try await client.execute(uri: "/proof-of-play?from=\(since)&format=csv", method: .get)
            let text = String(buffer: csv.body)
            #expect(csv.headers[.contentType] == "text/csv; charset=utf-8")
            #expect(text.hasPrefix("id,item,source,zone,start,end,seconds,outcome,framesShown,framesDropped\n") && text.contains(",completed,96,"))
            #expect(try await service.request(client, .get, "/proof-of-play?from=yesterday").json["field"] as? String == "from")
            #expect(try await service.request(client, .get, "/proof-of-play?format=xml").json["field"] as? String == "format")
        }
    }
}
