import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import ScanoutDisplay
import ScanoutKMS
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ScanoutPipeline
import ScanoutPlayer
import ScanoutService
import ScanoutTesting
import ScanoutTestSupport
import Synchronization
import Testing

// The service in-process, for tests: the control API's router driven directly, the player on its
// thread showing frames on the fake KMS device.

/// Screens on the fake KMS device, 320x240 each, one CRTC and primary plane per screen:
/// HDMI-A-1 (external), and eDP-1 (an internal panel) when `panel`. `overlay`: HDMI-A-1's CRTC
/// also has an overlay plane (41) taking NV12, which the kernel refuses when `refusing`. `hdcp`:
/// HDMI-A-1 has the Content Protection properties (Undesired, type 0).
func fakeScreens(panel: Bool = true, overlay: Bool = false, refusing: Bool = false, hdcp: Bool = false) -> FakeKMSDevice {
    let modes = [KMSMode(width: 320, height: 240, refresh: 60, preferred: true)]
    let screens = panel ? [("HDMI-A", 0), ("eDP", 1)] : [("HDMI-A", 0)]
    var planes = screens.map { _, i in
        KMSPlane(id: UInt32(40 + 3 * i), type: .primary, possibleCRTCs: 1 << UInt32(i), formats: [FourCC.xrgb8888],
                 properties: FakeKMSDevice.planeProperties)
    }
    if overlay {
        planes.append(KMSPlane(id: 41, type: .overlay, possibleCRTCs: 0b1, formats: [FourCC.nv12], properties: FakeKMSDevice.planeProperties))
    }
    let device = FakeKMSDevice(
        connectors: screens.map { type, i in
            KMSConnector(id: UInt32(30 + i), typeName: type, typeID: 1, connection: .connected, modes: modes, encoderIDs: [UInt32(20 + i)],
                         properties: FakeKMSDevice.connectorProperties.merging(hdcp && i == 0 ? ["Content Protection": 0, "HDCP Content Type": 0] : [:]) { a, _ in a })
        },
        encoders: screens.map { _, i in KMSEncoder(id: UInt32(20 + i), possibleCRTCs: 1 << UInt32(i)) },
        crtcs: screens.map { _, i in KMSCRTC(id: UInt32(10 + i), properties: FakeKMSDevice.crtcProperties) },
        planes: planes)
    if refusing { device.reject(.plane(41)) }
    return device
}

/// `method uri` with `body` as JSON (none: no body) through the in-process router: the status,
/// and the answer's JSON object (empty when it is not one).
func jsonRequest(_ client: some TestClientProtocol, _ method: HTTPRequest.Method, _ uri: String,
                 _ body: [String: Any]? = nil) async throws -> (status: Int, json: [String: Any]) {
    let data = try body.map { try JSONSerialization.data(withJSONObject: $0) }
    var headers = HTTPFields()
    if data != nil { headers[.contentType] = "application/json" }
    return try await client.execute(uri: uri, method: method, headers: headers, body: data.map { ByteBuffer(bytes: $0) }) { response in
        let json = (try? JSONSerialization.jsonObject(with: Data(buffer: response.body))) as? [String: Any] ?? [:]
        return (Int(response.status.code), json)
    }
}

/// Events as the player publishes them.
final class EventLog: Sendable {
    let events = Mutex<[PlayerEvent]>([])
}

/// A service on the fake screens, its events recorded.
final class InProcessService: Sendable {
    let player: Player
    let api: ControlAPI
    private let recorded = EventLog()

    /// `playlist`: the kiosk config's, loaded (and played) at start.
    /// `capture`: the config's capture directory (the control API refuses content that denies
    /// capture while it is set).
    init(keys: String?, playlist: [PlaylistItem] = [], repeatMode: RepeatMode = .none, faults: FaultPlan = FaultPlan(), capture: String? = nil,
         device: @escaping @Sendable () -> FakeKMSDevice = { fakeScreens() }) async throws {
        var config = ServiceConfig()
        config.keys = keys
        config.capture = capture
        config.playlist = playlist
        config.repeatMode = repeatMode
        config.unixSocket = nil
        config.faults = faults
        let server = ScanoutServer(config: config, logLevel: LogLevelControl(.error), logger: Logger(label: "test")) {
            // The display is made on the player's thread, as `serve` makes it.
            PlaybackPipeline(display: try! KMSDisplay(device: device(), renderer: MemoryScanoutRenderer()))
        }
        (player, api) = try await server.assemble()
        let recorded = self.recorded
        player.events.addListener { n in recorded.events.withLock { $0.append(n.event) } }
    }

    var events: [PlayerEvent] { recorded.events.withLock { $0 } }

    func request(_ client: some TestClientProtocol, _ method: HTTPRequest.Method, _ uri: String,
                 _ body: [String: Any]? = nil) async throws -> (status: Int, json: [String: Any]) {
        try await jsonRequest(client, method, uri, body)
    }

    /// Waits (up to `seconds`) until `done` holds.
    func wait(seconds: Double = 10, until done: () async throws -> Bool) async throws {
        let end = Date().addingTimeInterval(seconds)
        while try await !done(), Date() < end { try await Task.sleep(for: .milliseconds(50)) }
    }

    /// The display's counters, read on the player's thread.
    func kmsCounters() async throws -> KMSDisplay.Counters {
        try await player.perform { engine in (engine.display as? KMSDisplay)?.counters ?? KMSDisplay.Counters() }
    }

    /// The brightest byte each output's picture on screen holds, by output name.
    func brightestOnScreen() async throws -> [String: UInt8] {
        try await player.perform { engine in
            guard let kms = engine.display as? KMSDisplay else { return [:] }
            var out: [String: UInt8] = [:]
            for (name, _) in kms.outputSummary {
                guard let buffer = kms.shownBuffer(named: name) else { continue }
                out[name] = try kms.renderer.read(buffer).bytes.max() ?? 0
            }
            return out
        }
    }
}
