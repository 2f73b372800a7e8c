import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import ScanoutDisplay
import ScanoutPipeline
import ScanoutPlayer
import ScanoutRender
@testable import ScanoutService
import ScanoutTestSupport
import Synchronization
import Testing

/// A service whose config has a `layout`: its screen composed by the CPU compositor into memory
/// (`output`), every event of the screen recorded with its zone.
private final class LayoutService: Sendable {
    let player: Player
    let api: ControlAPI
    let output: HeadlessCanvasOutputBox
    let recorded = ZonedEvents()

    init(layout: ScreenLayout, playlist: [PlaylistItem] = [], repeatMode: RepeatMode = .all) async throws {
        var config = ServiceConfig()
        config.layout = layout
        config.playlist = playlist
        config.repeatMode = repeatMode
        config.unixSocket = nil
        let box = HeadlessCanvasOutputBox()
        output = box
        let server = ScanoutServer(config: config, logLevel: LogLevelControl(.error), logger: Logger(label: "test"), makePipeline: {
            PlaybackPipeline(display: HeadlessDisplay())
        }, makeScreenOutput: { layout in
            let out = try LayoutOutput.open(OutputSettings(kind: .headless), layout: layout, gl: false) { _ in }
            box.output = out.headless
            return out
        })
        (player, api) = try await server.assemble()
        let recorded = self.recorded
        player.events.addListener { n in recorded.list.withLock { $0.append((n.zone, n.event)) } }
    }

    func events(of zone: String) -> [PlayerEvent] { recorded.list.withLock { $0.filter { $0.zone == zone }.map(\.event) } }

    func request(_ client: some TestClientProtocol, _ method: HTTPRequest.Method, _ uri: String,
                 _ body: [String: Any]? = nil) async throws -> (status: Int, json: [String: Any]) {
        try await jsonRequest(client, method, uri, body)
    }

    /// Each zone's entry of `GET /zones`, by id.
    func zones(_ client: some TestClientProtocol) async throws -> [String: [String: Any]] {
        let list = try await request(client, .get, "/zones").json["zones"] as? [[String: Any]] ?? []
        return Dictionary(uniqueKeysWithValues: list.map { ($0["id"] as? String ?? "", $0) })
    }

    func wait(seconds: Double = 10, until done: () async throws -> Bool) async throws {
        let end = Date().addingTimeInterval(seconds)
        while try await !done(), Date() < end { try await Task.sleep(for: .milliseconds(50)) }
    }

    func shutdown() { api.screen?.shutdown() }
}

/// Events as the screen's hub publishes them, with their zone.
private final class ZonedEvents: Sendable {
    let list = Mutex<[(zone: String?, event: PlayerEvent)]>([])
}

/// The screen's output, kept for the test to read (`@unchecked Sendable`: set once on the
/// assembling thread before any read; the CPU output's snapshot may be taken from any thread).
private final class HeadlessCanvasOutputBox: @unchecked Sendable {
    var output: HeadlessCanvasOutput?
}

private func state(_ zone: [String: Any]?) -> String? { (zone?["state"] as? [String: Any])?["state"] as? String }
private func presented(_ stats: [String: Any], zone: String) -> Int {
    let zones = stats["zones"] as? [[String: Any]] ?? []
    return (zones.first { $0["id"] as? String == zone }?["stats"] as? [String: Any])?["framesPresented"] as? Int ?? -1
}

@Suite("service: a screen of zones (config layout, /layout, /zones)", .serialized)
struct ServiceLayoutTests {
    static func pip(_ clip: String) -> ScreenLayout {
        var pip = ScreenLayout.Zone(id: "pip", x: .pixels(400), y: .pixels(300), width: .pixels(200), height: .pixels(150), z: 1)
        pip.playlist = [PlaylistItem(source: clip)]
        return ScreenLayout(width: 640, height: 480, zones: [ScreenLayout.Zone(id: "main"), pip])
    }

    @Test("the main zone plays the config's playlist and takes the top-level commands; the other zone its own, under /zones/{id}; events and /stats carry the zone")
    func zonesPlayAndAreCommanded() async throws {
        let clip = try Fixtures.path("counter.mp4")
        let service = try await LayoutService(layout: Self.pip(clip), playlist: [PlaylistItem(source: clip)])
        defer { service.shutdown() }
        try await Application(router: service.api.router()).test(.router) { client in
            try await service.wait { try await service.zones(client).values.allSatisfy { state($0) == "playing" } }
            var zones = try await service.zones(client)
            #expect(state(zones["main"]) == "playing" && state(zones["pip"]) == "playing")
            #expect(zones["main"]?["main"] as? Bool == true && zones["pip"]?["main"] as? Bool == false)
            let rect = zones["pip"]?["rect"] as? [String: Int]
            #expect(rect == ["x": 400, "y": 300, "width": 200, "height": 150])

            // The top level acts on the main zone only.
            #expect(try await service.request(client, .post, "/pause").status == 200)
            zones = try await service.zones(client)
            #expect(state(zones["main"]) == "paused" && state(zones["pip"]) == "playing")
            #expect(try await service.request(client, .post, "/zones/pip/pause").status == 200)
            #expect(state(try await service.zones(client)["pip"]) == "paused")
            let resumed = try await service.request(client, .post, "/zones/pip/play")
            #expect(resumed.status == 200 && resumed.json["state"] as? String == "playing")
            let missing = try await service.request(client, .post, "/zones/nope/play")
            #expect(missing.status == 404 && missing.json["field"] as? String == "id")
            #expect((try await service.request(client, .get, "/zones/pip/playlist").json["items"] as? [Any])?.count == 1)

            try await service.wait { presented(try await service.request(client, .get, "/stats").json, zone: "pip") > 5 }
            let stats = try await service.request(client, .get, "/stats").json
            #expect(presented(stats, zone: "pip") > 5 && presented(stats, zone: "main") > 0)
            #expect(((stats["screen"] as? [String: Any])?["composed"] as? Int ?? 0) > 0)
            #expect((stats["screen"] as? [String: Any])?["width"] as? Int == 640)
        }
        // The pip zone's events reach the one stream, tagged; the main zone's too.
        #expect(service.events(of: "pip").contains { if case .pause = $0 { return true }; return false })
        #expect(service.events(of: "pip").contains { if case .play = $0 { return true }; return false })
        #expect(service.events(of: "main").contains { if case .pause = $0 { return true }; return false })
    }

    @Test("a picture-in-picture moved, resized and swapped by the API: each zone's player goes on, its item never restarted")
    func pipMovesWithoutInterruption() async throws {
        let clip = try Fixtures.path("counter.mp4")
        let service = try await LayoutService(layout: Self.pip(clip), playlist: [PlaylistItem(source: clip)])
        defer { service.shutdown() }
        try await Application(router: service.api.router()).test(.router) { client in
            try await service.wait { presented(try await service.request(client, .get, "/stats").json, zone: "pip") > 3 }
            let before = service.recorded.list.withLock { $0.count }
            let moved = try await service.request(client, .put, "/zones/pip", ["x": 10, "y": "5%", "width": "25%", "height": 120])
            #expect(moved.status == 200)
            #expect(moved.json["rect"] as? [String: Int] == ["x": 10, "y": 24, "width": 160, "height": 120])
            let swapped = try await service.request(client, .post, "/zones/swap", ["a": "main", "b": "pip"])
            #expect(swapped.status == 200)
            let zones = try await service.zones(client)
            #expect(zones["main"]?["rect"] as? [String: Int] == ["x": 10, "y": 24, "width": 160, "height": 120])
            #expect(zones["pip"]?["rect"] as? [String: Int] == ["x": 0, "y": 0, "width": 640, "height": 480])
            #expect(zones["main"]?["z"] as? Int == 1 && zones["pip"]?["z"] as? Int == 0)
            let frames = presented(try await service.request(client, .get, "/stats").json, zone: "pip")
            try await service.wait { presented(try await service.request(client, .get, "/stats").json, zone: "pip") > frames + 5 }
            #expect(presented(try await service.request(client, .get, "/stats").json, zone: "pip") > frames + 5)
            // No zone stopped, or started an item at a command, because of the moves (the clip
            // loops, gaplessly: its first frame again, with no request behind it, is no restart).
            let after = service.recorded.list.withLock { Array($0[before...]) }
            let restarts = after.filter { e in
                switch e.event {
                case .stop, .stateChanged: true
                case .firstFrame(_, _, let since, _): since != nil
                default: false
                }
            }
            #expect(restarts.isEmpty, "events after the moves: \(restarts.map(\.event.name))")
            let layout = try await service.request(client, .get, "/layout").json
            #expect((layout["zones"] as? [[String: Any]])?.first { $0["id"] as? String == "pip" }?["width"] as? String == "100%")
        }
    }

    @Test("PUT /layout adds and removes zones and keeps the ones that stay; what cannot be done is refused naming the field")
    func layoutReplaced() async throws {
        let clip = try Fixtures.path("counter.mp4")
        let service = try await LayoutService(layout: Self.pip(clip), playlist: [PlaylistItem(source: clip)])
        defer { service.shutdown() }
        try await Application(router: service.api.router()).test(.router) { client in
            try await service.wait { presented(try await service.request(client, .get, "/stats").json, zone: "pip") > 0 }
            let pipPlayer = try #require(service.api.screen?.player(zone: "pip"))
            let body: [String: Any] = [
                "width": 640, "height": 480,
                "zones": [["id": "main"], ["id": "pip", "x": 0, "y": 0, "width": "50%", "height": "50%", "z": 2, "playlist": [clip]],
                          ["id": "ticker", "y": "90%", "height": "10%", "z": 3, "text": ["text": "Doors open at eight", "scroll": 120]]],
            ]
            let put = try await service.request(client, .put, "/layout", body)
            #expect(put.status == 200)
            #expect((put.json["zones"] as? [[String: Any]])?.map { $0["id"] as? String } == ["main", "pip", "ticker"])
            // The same playlist: the zone's player is the one it had, and plays on.
            #expect(service.api.screen?.player(zone: "pip") === pipPlayer)
            #expect(state(try await service.zones(client)["pip"]) == "playing")
            #expect((try await service.zones(client)["ticker"]?["rect"] as? [String: Int]) == ["x": 0, "y": 432, "width": 640, "height": 48])

            let removed = try await service.request(client, .put, "/layout", ["zones": [["id": "main"], ["id": "ticker", "text": ["text": "x"]]]])
            #expect(removed.status == 200)
            #expect(try await service.zones(client).keys.sorted() == ["main", "ticker"])
            #expect(try await service.request(client, .post, "/zones/pip/play").status == 404)

            let newMain = try await service.request(client, .put, "/layout", ["main": "ticker", "zones": [["id": "main"], ["id": "ticker"]]])
            #expect(newMain.status == 409 && newMain.json["field"] as? String == "main")
            #expect(try await service.request(client, .put, "/zones/main", ["audio": true]).status == 200)
            let twoSounds = try await service.request(client, .put, "/zones/ticker", ["audio": true])
            #expect(twoSounds.status == 409 && twoSounds.json["field"] as? String == "audio")
            let bad = try await service.request(client, .put, "/layout", ["zones": [["id": "main", "width": 0]]])
            #expect(bad.status == 400 && bad.json["field"] as? String == "zones[0].width")
            let unknown = try await service.request(client, .put, "/zones/main", ["playlist": []])
            #expect(unknown.status == 400 && unknown.json["field"] as? String == "playlist")
            // Nothing refused was applied.
            #expect(try await service.zones(client).keys.sorted() == ["main", "ticker"])
            let config = try await service.request(client, .get, "/config").json
            #expect(((config["layout"] as? [String: Any])?["zones"] as? [Any])?.count == 2)
        }
    }

    @Test("proof of play per zone: a zone's play to its end is recorded with that zone's own frame counts")
    func proofOfPlayPerZone() async throws {
        let layout = ScreenLayout(width: 320, height: 240, zones: [ScreenLayout.Zone(id: "main"),
                                                                   ScreenLayout.Zone(id: "pip", x: .fraction(0.5), width: .fraction(0.5), height: .fraction(0.5), z: 1)])
        let service = try await LayoutService(layout: layout)
        defer { service.shutdown() }
        let clip = try Fixtures.path("counter.mp4")
        try await Application(router: service.api.router()).test(.router) { client in
            #expect(try await service.request(client, .post, "/zones/pip/load", ["source": clip, "autoplay": true]).status == 200)
            try await service.wait(seconds: 15) { service.events(of: "pip").contains(.ended) }
            let plays = try await service.request(client, .get, "/proof-of-play").json["plays"] as? [[String: Any]] ?? []
            let pip = plays.filter { $0["zone"] as? String == "pip" }
            #expect(pip.count == 1 && pip.first?["outcome"] as? String == "completed" && pip.first?["framesShown"] as? Int == 96, "\(plays)")
        }
    }

    @Test("a zone's text set and cleared by PUT and DELETE /zones/{id}/text is drawn over the zone, and only there")
    func zoneText() async throws {
        let layout = ScreenLayout(width: 320, height: 240, zones: [ScreenLayout.Zone(id: "main"),
                                                                   ScreenLayout.Zone(id: "band", y: .fraction(0.75), height: .fraction(0.25), z: 1)])
        let service = try await LayoutService(layout: layout)
        defer { service.shutdown() }
        try await Application(router: service.api.router()).test(.router) { client in
            let put = try await service.request(client, .put, "/zones/band/text", ["text": "HELLO", "size": 40, "color": "FFFFFF"])
            #expect(put.status == 200)
            func brightest(_ rows: Range<Int>) async throws -> Int {
                let composed = service.api.screen!.screen.composed
                try await service.wait { service.api.screen!.screen.composed > composed + 2 }
                let picture = try #require(try service.output.output?.snapshot())
                return rows.flatMap { y in (0..<picture.width).map { x in Int(picture.pixel(x: x, y: y).r) } }.max() ?? 0
            }
            #expect(try await brightest(180..<240) > 200)
            #expect(try await brightest(0..<180) == 0)
            #expect(try await service.request(client, .delete, "/zones/band/text").status == 200)
            #expect(try await brightest(180..<240) == 0)
            let bad = try await service.request(client, .put, "/zones/band/text", ["text": ""])
            #expect(bad.status == 400 && bad.json["field"] as? String == "text")
            // A ticker so slow that it would take more than a day to cross is refused.
            let slow = try await service.request(client, .put, "/zones/band/text", ["text": "x", "scroll": 0.001])
            #expect(slow.status == 400 && slow.json["field"] as? String == "scroll")
        }
    }

    @Test("without a layout, /layout and /zones answer 404 naming layout; the config's layout is read, shown and checked")
    func noLayout() async throws {
        var config = ServiceConfig()
        try config.apply(json: Data(#"{"layout": {"main": "b", "zones": [{"id": "a", "audio": true}, {"id": "b", "x": "50%", "text": {"text": "hi"}}]}}"#.utf8),
                         runtimeOnly: false)
        #expect(config.layout?.mainZone == "b" && config.layout?.zones.count == 2)
        let shown = String(decoding: try JSONEncoder().encode(Wire.Config(config)), as: UTF8.self)
        #expect(shown.contains(#""main":"b""#) && shown.contains(#""x":"50%""#))
        var walled = ServiceConfig()
        try walled.apply(json: Data(#"{"layout": {"wall": {"outputs": ["HDMI-A-1", "HDMI-A-2"], "bezel": "12.5mm"}, "zones": [{"id": "a"}]}}"#.utf8), runtimeOnly: false)
        #expect(walled.layout?.wall == ScreenLayout.Wall(outputs: ["HDMI-A-1", "HDMI-A-2"], columns: 2, bezel: .millimetres(12.5)))
        #expect(String(decoding: try JSONEncoder().encode(Wire.Config(walled)), as: UTF8.self).contains(#""bezel":"12.5mm""#))
        // A wall across boxes: null is another box's screen.
        try walled.apply(json: Data(#"{"layout": {"wall": {"outputs": [null, "HDMI-A-1"], "bezel": 20}, "zones": [{"id": "a"}]}}"#.utf8), runtimeOnly: false)
        #expect(walled.layout?.wall == ScreenLayout.Wall(outputs: [nil, "HDMI-A-1"], columns: 2, bezel: .pixels(20)))
        #expect(String(decoding: try JSONEncoder().encode(Wire.Config(walled)), as: UTF8.self).contains(#""outputs":[null,"HDMI-A-1"]"#))
        var none = ServiceConfig()
        #expect(throws: APIError.badRequest("layout.wall.outputs", "must name at least one screen of this box")) {
            try none.apply(json: Data(#"{"layout": {"wall": {"outputs": [null, null]}, "zones": [{"id": "a"}]}}"#.utf8), runtimeOnly: false)
        }
        var bad = ServiceConfig()
        #expect(throws: APIError.self) { try bad.apply(json: Data(#"{"layout": {"main": "c", "zones": [{"id": "a"}]}}"#.utf8), runtimeOnly: false) }
        #expect(throws: APIError.self) { try bad.apply(json: Data(#"{"layout": {"wall": {"outputs": ["HDMI-A-1"]}, "zones": [{"id": "a"}]}}"#.utf8), runtimeOnly: false) }
        #expect(throws: APIError.self) { try bad.apply(json: Data(#"{"layout": {"rotation": 90, "wall": {"outputs": ["A-1", "A-2"]}, "zones": [{"id": "a"}]}}"#.utf8), runtimeOnly: false) }
        do {
            try bad.apply(json: Data(#"{"layout": {"zones": [{"id": "a"}]}}"#.utf8), runtimeOnly: true)
            Issue.record("PUT /config changed the layout")
        } catch {
            #expect(error.message.hasPrefix("layout: cannot change at run time"))
        }

        let service = try await InProcessService(keys: nil)
        try await Application(router: service.api.router()).test(.router) { client in
            for (method, uri) in [(HTTPRequest.Method.get, "/layout"), (.get, "/zones"), (.post, "/zones/main/play")] {
                let r = try await service.request(client, method, uri)
                #expect(r.status == 404 && r.json["field"] as? String == "layout", "\(uri)")
            }
        }
    }
}

@Suite("service: multiview, zones tuned to channels with a label and a picture watch", .serialized)
struct MultiviewServiceTests {
    @Test("zones name channels: each plays its channel labelled with its name; a black tile raises pictureAlarm; a zone is retuned by POST /zones/{id}/channel")
    func channelsInZones() async throws {
        let clip = try Fixtures.path("counter.mp4"), black = try Fixtures.path("black.mp4")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("scanout-multiview-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let m3u = dir.appendingPathComponent("channels.m3u").path
        try """
        #EXTM3U
        #EXTINF:-1 tvg-id="news",News
        \(clip)
        #EXTINF:-1 tvg-id="dark",Dark
        \(black)
        #EXTINF:-1 tvg-id="sport",Sport
        \(clip)

        """.write(toFile: m3u, atomically: true, encoding: .utf8)
        var a = ScreenLayout.Zone(id: "a", width: .fraction(0.5)), b = ScreenLayout.Zone(id: "b", x: .fraction(0.5), width: .fraction(0.5))
        a.channel = "news"
        b.channel = "dark"
        var layout = ScreenLayout(width: 640, height: 240, zones: [a, b])
        layout.watch = PictureWatch.Settings(black: 0.5, frozen: 0)
        var config = ServiceConfig()
        config.layout = layout
        config.channels.m3u = m3u
        config.unixSocket = nil
        let server = ScanoutServer(config: config, logLevel: LogLevelControl(.error), logger: Logger(label: "test"),
                                   makePipeline: { PlaybackPipeline(display: HeadlessDisplay()) })
        let (player, api) = try await server.assemble()
        let events = ZonedEvents()
        player.events.addListener { n in events.list.withLock { $0.append((n.zone, n.event)) } }
        defer { api.screen?.shutdown() }
        @Sendable func alarms() -> [(zone: String?, event: PlayerEvent)] {
            events.list.withLock { $0.filter { if case .pictureAlarm = $0.event { return true }; return false } }
        }
        try await Application(router: api.router()).test(.router) { client in
            func get(_ uri: String) async throws -> [String: Any] { try await jsonRequest(client, .get, uri).json }
            func post(_ uri: String, _ body: [String: Any]) async throws -> (Int, [String: Any]) { try await jsonRequest(client, .post, uri, body) }
            let zones = try await get("/layout")["zones"] as? [[String: Any]] ?? []
            let shownA = try #require(zones.first { $0["id"] as? String == "a" })
            #expect(shownA["channel"] as? String == "news")
            #expect((shownA["text"] as? [String: Any])?["text"] as? String == "News")
            #expect((shownA["text"] as? [String: Any])?["placement"] as? String == "bottom")
            #expect(((shownA["playlist"] as? [[String: Any]])?.first?["source"] as? String) == clip)

            // The black tile: an alarm after half a second of black while it plays.
            let end = Date().addingTimeInterval(10)
            while Date() < end, !alarms().contains(where: { $0.zone == "b" }) { try await Task.sleep(for: .milliseconds(50)) }
            // Every event since the start, from the hub's ring: an alarm raised before this test
            // listened is there too.
            let all = player.events.subscribe(after: 0).replay.map { ($0.zone, $0.event) }
            let raised = try #require(all.first { e in if case .pictureAlarm = e.1, e.0 == "b" { return true }; return false })
            guard case let .pictureAlarm(kind, active, seconds) = raised.1 else { return }
            #expect(kind == .black && active && seconds >= 0.5)
            #expect(!all.contains { e in if case .pictureAlarm = e.1, e.0 == "a" { return true }; return false })

            let retuned = try await post("/zones/a/channel", ["id": "sport"])
            #expect(retuned.0 == 200)
            let layoutNow = try await get("/layout")["zones"] as? [[String: Any]] ?? []
            let nowA = try #require(layoutNow.first { $0["id"] as? String == "a" })
            #expect(nowA["channel"] as? String == "sport" && (nowA["text"] as? [String: Any])?["text"] as? String == "Sport")
            #expect(events.list.withLock { $0.contains { $0.zone == "a" && $0.event == .channelChanged(id: "sport", name: "Sport", source: clip) } })
            let missing = try await post("/zones/a/channel", ["id": "nope"])
            #expect(missing.0 == 404 && missing.1["field"] as? String == "id")
            let stats = try await get("/stats")["zones"] as? [[String: Any]] ?? []
            #expect(stats.count == 2 && stats.allSatisfy { $0["picture"] is [String: Any] })
        }
        // Refused: a layout naming a channel the list does not have.
        var bad = ServiceConfig()
        bad.unixSocket = nil
        bad.layout = ScreenLayout(width: 64, height: 64, zones: [ScreenLayout.Zone(id: "m")])
        let (_, api2) = try await ScanoutServer(config: bad, logLevel: LogLevelControl(.error), logger: Logger(label: "test"),
                                                makePipeline: { PlaybackPipeline(display: HeadlessDisplay()) }).assemble()
        defer { api2.screen?.shutdown() }
        try await Application(router: api2.router()).test(.router) { client in
            let r = try await jsonRequest(client, .put, "/layout", ["zones": [["id": "m", "channel": "nope"]]])
            #expect(r.status == 400 && r.json["field"] as? String == "zones[0].channel")
        }
    }
}

@Suite("service: a reload of the config file puts its layout on the screen")
struct LayoutReloadTests {
    @Test("SIGHUP's reload: a zone added and one moved, the moved one's player kept; another main zone is refused and the layout kept")
    func reloadTakesTheLayout() async throws {
        let clip = try Fixtures.path("counter.mp4")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("scanout-layout-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        func write(_ zones: String, main: String = "main") throws {
            try #"{"unixSocket": null, "layout": {"width": 320, "height": 240, "main": "\#(main)", "zones": \#(zones)}}"#.write(toFile: file, atomically: true, encoding: .utf8)
        }
        try write(#"[{"id": "main"}, {"id": "pip", "x": 200, "y": 150, "width": 100, "height": 75, "z": 1, "playlist": ["\#(clip)"]}]"#)
        let config = try ServiceConfig.load(file: file)
        let (_, api) = try await ScanoutServer(config: config, logLevel: LogLevelControl(.error), logger: Logger(label: "test"),
                                               makePipeline: { PlaybackPipeline(display: HeadlessDisplay()) }).assemble()
        let screen = try #require(api.screen)
        defer { screen.shutdown() }
        let pip = try #require(screen.player(zone: "pip"))
        // Made at start, as the service makes it: it compares the file with what it read then.
        let reloader = ConfigReloader(api: api, logLevel: LogLevelControl(.error), logger: Logger(label: "test"))
        try write(#"[{"id": "main"}, {"id": "pip", "x": 0, "y": 0, "width": 100, "height": 75, "z": 1, "playlist": ["\#(clip)"]}, {"id": "band", "y": "80%", "height": "20%", "z": 2, "text": {"text": "hello"}}]"#)
        await reloader.reload()
        #expect(screen.zoneIDs.sorted() == ["band", "main", "pip"])
        #expect(screen.player(zone: "pip") === pip)
        #expect(screen.placements().first { $0.id == "pip" }?.rect == PixelRect(x: 0, y: 0, width: 100, height: 75))
        #expect(api.currentConfig.layout?.zones.count == 3)

        try write(#"[{"id": "main"}, {"id": "other"}]"#, main: "other")
        await reloader.reload()
        #expect(screen.zoneIDs.sorted() == ["band", "main", "pip"])
    }
}
