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

/// The control API in this process (HummingbirdTesting) over a real player on a headless display
/// (no pipeline, no policy: the HTTP layer alone),
/// with counter.mp4 loaded and not playing ("ready"), so that any command a refusal let through
/// would show in the state.
final class HeadlessService: @unchecked Sendable {
    // @unchecked Sendable: every property is set once in init and only read afterwards.
    let player: Player
    let api: ControlAPI

    init(_ configure: (inout ServiceConfig) -> Void = { _ in }, keepAlive: Duration = .seconds(15)) async throws {
        var config = ServiceConfig()
        config.unixSocket = nil
        configure(&config)
        player = Player(configuration: config.playerConfiguration) { HeadlessDisplay() }
        let clip = try Fixtures.path("counter.mp4")
        _ = try await player.perform { e in try e.load([PlaylistItem(source: clip)]); return 0 }
        api = ControlAPI(player: player, metrics: PlayerMetrics(), config: config, logLevel: LogLevelControl(.error),
                         logger: Logger(label: "test"), keepAlive: keepAlive)
    }

    deinit { player.shutdown() }

    var app: some ApplicationProtocol {
        Application(router: api.router(), configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0)))
    }

    /// The player's state as `/state` reports it.
    func state(_ client: some TestClientProtocol) async throws -> [String: Any] {
        try await client.execute(uri: "/state", method: .get) { r in
            try #require(try JSONSerialization.jsonObject(with: Data(buffer: r.body)) as? [String: Any])
        }
    }
}

/// The refusal's JSON: status, `field`, `error`.
func refusal(_ r: TestResponse) -> (status: Int, field: String?, error: String) {
    let o = (try? JSONSerialization.jsonObject(with: Data(buffer: r.body))) as? [String: Any]
    return (Int(r.status.code), o?["field"] as? String, o?["error"] as? String ?? "")
}

func headers(_ pairs: [String: String]) -> HTTPFields {
    var h = HTTPFields()
    for (k, v) in pairs { h[HTTPField.Name(k)!] = v }
    return h
}
