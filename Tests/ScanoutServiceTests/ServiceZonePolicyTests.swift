import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import ScanoutDisplay
import ScanoutKMS
import ScanoutPipeline
import ScanoutPlayer
import ScanoutRender
import ScanoutService
import ScanoutTestSupport
import ScanoutTesting
import Testing

/// The KMS display a screen of zones was opened on (`@unchecked Sendable`: set on the
/// compositor's thread before the screen starts, read by the test once the screen is shut down).
private final class OpenedDisplay: @unchecked Sendable {
    var kms: KMSDisplay?
}

@Suite("content policy per zone: a zone's token judged on every output, its rectangle censored alone")
struct ServiceZonePolicyTests {
    @Test("a zone whose token denies external outputs is the background on HDMI-A-1 and shown on the internal panel; the other zone is shown on both")
    func zoneCensoredOnTheExternalOutput() async throws {
        let publisher = try await TokenPublisher()
        let clip = try Fixtures.path("counter.mp4")
        let token = try await publisher.token(externalOutput: "deny")
        var paid = ScreenLayout.Zone(id: "paid", x: .fraction(0.5), width: .fraction(0.5), z: 1)
        paid.playlist = [PlaylistItem(source: clip, token: token)]
        var config = ServiceConfig()
        config.keys = publisher.keyFile
        config.unixSocket = nil
        config.playlist = [PlaylistItem(source: clip)]
        config.repeatMode = .all
        config.layout = ScreenLayout(zones: [ScreenLayout.Zone(id: "main", width: .fraction(0.5)), paid])
        let opened = OpenedDisplay()
        let server = ScanoutServer(config: config, logLevel: LogLevelControl(.error), logger: Logger(label: "test"), makePipeline: {
            PlaybackPipeline(display: HeadlessDisplay())
        }, makeScreenOutput: { _ in
            let kms = try KMSDisplay(device: fakeScreens(), renderer: MemoryScanoutRenderer())
            opened.kms = kms
            return LayoutOutput(screen: ScreenOutput(output: kms, width: 320, height: 240, description: "kms"), pipeline: PlaybackPipeline(display: kms))
        })
        let (_, api) = try await server.assemble()
        let screen = try #require(api.screen)
        try await Application(router: api.router()).test(.router) { client in
            let end = Date().addingTimeInterval(10)
            while Date() < end {
                let zones = try await client.execute(uri: "/stats", method: .get) { r in
                    (try? JSONSerialization.jsonObject(with: Data(buffer: r.body))) as? [String: Any]
                }?["zones"] as? [[String: Any]] ?? []
                let shown = zones.compactMap { ($0["stats"] as? [String: Any])?["framesPresented"] as? Int }
                if shown.count == 2, shown.allSatisfy({ $0 > 10 }) { break }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        screen.shutdown()
        let kms = try #require(opened.kms)
        #expect(kms.counters.censoredZones > 0)
        #expect(kms.lastCensorReason["HDMI-A-1"]?.hasPrefix("zone 1: ") == true)
        let hdmi = try kms.renderer.read(try #require(kms.shownBuffer(named: "HDMI-A-1")))
        let panel = try kms.renderer.read(try #require(kms.shownBuffer(named: "eDP-1")))
        func brightest(_ image: RGBImage, _ xs: Range<Int>) -> Int {
            (0..<image.height).flatMap { y in xs.map { x in Int(image.pixel(x: x, y: y).g) } }.max() ?? 0
        }
        // The counter's white bits in the band: the left zone's on both screens, the right one's
        // on the panel only; HDMI-A-1's right half is the zone's black background.
        #expect(brightest(hdmi, 0..<160) > 128 && brightest(panel, 0..<160) > 128)
        #expect(brightest(panel, 160..<320) > 128)
        #expect(brightest(hdmi, 160..<320) == 0)
    }
}
