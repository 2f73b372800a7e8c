import Foundation
import Logging
import ScanoutPipeline
import ScanoutPlayer
import ScanoutPolicy

// A screen of zones (config `layout`): made and started for `assemble`.

extension ScanoutServer {
    /// The screen of zones `layout` describes, on the output `makeScreenOutput` opens, its zones'
    /// players made (none loads anything yet: `startZones`). Every zone's events reach the main
    /// zone's hub, tagged with the zone's id: one event stream for the screen. With no zone
    /// given the sound, the main zone has it. On a KMS screen each zone is judged by the policy
    /// of the item it plays (`ZonePolicedOutput`): an output that fails it shows the zone's
    /// rectangle as its background.
    func openScreen(_ layout: ScreenLayout, authorizer: ContentAuthorizer) throws -> ScreenPlayer {
        var layout = layout
        let main = layout.mainZone ?? ""
        if !layout.zones.contains(where: \.audio), let i = layout.zones.firstIndex(where: { $0.id == main }) { layout.zones[i].audio = true }
        let hub = ScreenEvents()
        let open = makeScreenOutput
        var opened = ""
        // Opened on the compositor's thread, where it is drawn (a GLES context is current there).
        let policies = ZonePolicies()
        let screen = try ScreenPlayer(layout: layout, configuration: config.playerConfiguration, loadPlaylists: false, prepare: { id, player in
            policies.follow(player, zone: id, authorizer: authorizer)
            guard id != main else { return }
            player.events.addListener { n in hub.forward(n) }
        }, opening: {
            let out = try open(layout)
            opened = out.screen.description
            return out.policed(by: policies)
        })
        hub.target = screen.player(zone: main)?.events
        let size = screen.screen.canvas
        logger.notice("layout: \(layout.zones.count) zones on a \(size.width)x\(size.height) canvas, main zone \(main)",
                      metadata: ["output": "\(opened)"])
        return screen
    }

    /// Loads and starts every zone's playlist but the main zone's (`start` loads that one), its
    /// items authorised first: an item whose token does not verify is left out and named.
    func startZones(of screen: ScreenPlayer, api: ControlAPI) async {
        let main = screen.layout.mainZone
        var layout = (try? api.tuned(screen.layout, on: screen, lenient: true)) ?? screen.layout
        for (i, zone) in layout.zones.enumerated() where zone.id != main && !zone.playlist.isEmpty {
            layout.zones[i].playlist = (try? await api.authorize(zone.playlist, field: "layout.zones.\(zone.id).playlist") { field, error in
                logger.error("\(field): \(error); the item is left out")
            }) ?? []
            api.keepOffline(layout.zones[i].playlist)
        }
        let authorised = layout
        do {
            _ = try screen.update(loadPlaylists: false) { $0 = authorised }
        } catch {
            logger.error("layout: \(error)")
        }
        for zone in authorised.zones where zone.id != main { screen.start(zone: zone.id) }
    }
}

/// Carries the zones' events into the main zone's hub (set once the screen is made), each
/// keeping its zone's tag. `@unchecked Sendable`: `target` is set once, under `lock`, and read
/// under it.
final class ScreenEvents: @unchecked Sendable {
    private let lock = NSLock()
    private var hub: EventHub?
    var target: EventHub? {
        get { lock.withLock { hub } }
        set { lock.withLock { hub = newValue } }
    }

    func forward(_ n: EventHub.Numbered) { target?.publish(n.event, zone: n.zone) }
}
