import Foundation
import ScanoutCore
import ScanoutDisplay
import ScanoutRender

/// A screen of zones playing: one `Player` per zone (its engine on a thread of its own, its own
/// playlist, timeline, drops and events) presenting into the zone's `ZoneSurface`, and a
/// compositor thread that composes every zone's last frame onto the output once per refresh
/// (`CanvasScreen.compose`). One zone at most has the sound; the others play silent. The layout
/// may change while it plays (`apply`): a zone that stays keeps its player, its item and its
/// position, wherever it moves.
///
/// `@unchecked Sendable`: `stopping`, `composeError`, `lateCount`, `layout` and `zonePlayers`
/// are read and written under `lock`; `apply` runs one at a time (`applying`); the screen is composed on the
/// compositor thread only.
public final class ScreenPlayer: @unchecked Sendable {
    public let screen: CanvasScreen
    private let lock = NSLock()
    private let applying = NSLock()
    private var current: ScreenLayout
    /// The zones' players, in drawing order.
    private var zonePlayers: [(id: String, player: Player)] = []
    private let base: PlayerConfiguration
    private var stopping = false
    private var composeError: (any Error)?
    private var lateCount = 0
    private var compositor: Thread?
    private let compositorDone = DispatchSemaphore(value: 0)
    /// Each zone's picture watch, by zone id (the compositor's thread looks, anyone reads).
    private var watches: [String: PictureWatch] = [:]
    /// Made for each zone's player before it starts (the service hooks its own in).
    private let prepare: ((String, Player) -> Void)?

    /// Starts the zones' players on `output` (a canvas of `outputWidth`×`outputHeight`), each
    /// loading its playlist and playing at once (with `loadPlaylists`; else the caller loads
    /// them), and composes every `refreshInterval` (at the output's vblanks, when it has them),
    /// on a thread of its own. `prepare` sees each zone's player as it is made, before it loads
    /// anything.
    public convenience init(layout: ScreenLayout, output: any CanvasOutput, outputWidth: Int, outputHeight: Int,
                            configuration: PlayerConfiguration = PlayerConfiguration(), refreshInterval: Duration = .nanoseconds(16_666_667),
                            loadPlaylists: Bool = true, prepare: ((String, Player) -> Void)? = nil) {
        self.init(layout: layout, output: output, outputWidth: outputWidth, outputHeight: outputHeight, configuration: configuration,
                  refreshInterval: refreshInterval, loadPlaylists: loadPlaylists, prepare: prepare, compositor: nil)
    }

    /// As above, composing on `host` (the thread that opened `output`: `init(layout:…opening:)`)
    /// when given.
    init(layout: ScreenLayout, output: any CanvasOutput, outputWidth: Int, outputHeight: Int, configuration: PlayerConfiguration,
         refreshInterval: Duration, loadPlaylists: Bool, prepare: ((String, Player) -> Void)?, compositor host: ScreenThread?) {
        current = layout
        base = configuration
        self.prepare = prepare
        let zones = layout.drawingOrder
        screen = CanvasScreen(canvas: layout.canvas(outputWidth: outputWidth, outputHeight: outputHeight), output: output, names: zones.map(\.id))
        zonePlayers = zip(zones, screen.zones).map { zone, surface in (zone.id, makePlayer(zone, surface: surface, load: loadPlaylists)) }
        setTexts(layout)
        let interval = output.vblankSource?.refreshInterval ?? refreshInterval
        if let host {
            host.run { [self] in composeLoop(every: interval) }
            return
        }
        let t = Thread(named: "scanout-screen") { [self] in composeLoop(every: interval) }
        compositor = t
        t.start()
    }

    /// A zone's player on `surface`, with the zone's scaling and sound, its events tagged with
    /// the zone's id; its playlist loaded and started when `load`.
    private func makePlayer(_ zone: ScreenLayout.Zone, surface: ZoneSurface, load: Bool) -> Player {
        let player = Player(configuration: configuration(of: zone)) { surface }
        player.events.tag(zone: zone.id)
        prepare?(zone.id, player)
        if load { Self.load(zone, on: player) }
        return player
    }

    /// The configuration a zone's player plays with: the screen's, with the zone's scaling and,
    /// unless the zone has the sound, no audio output.
    private func configuration(of zone: ScreenLayout.Zone) -> PlayerConfiguration {
        var c = base
        c.scaling = zone.scaling
        if !zone.audio { c.audio.device = "none" }
        return c
    }

    /// Loads `zone`'s playlist on `player` and starts it (nothing, for a zone with none).
    private static func load(_ zone: ScreenLayout.Zone, on player: Player) {
        let items = zone.playlist, mode = zone.repeatMode
        guard !items.isEmpty else { return }
        player.submit { engine in
            engine.setRepeat(mode)
            do { try engine.load(items, autoplay: true) } catch { engine.report(.error(message: "\(error)", item: nil, skipped: false)) }
        }
    }

    /// Draws each zone's text (nil: none) over it, sized to its rectangle.
    private func setTexts(_ layout: ScreenLayout) {
        let rects = screen.canvas.zones.map(\.rect)
        let players = lock.withLock { zonePlayers }
        for (i, zone) in layout.drawingOrder.enumerated() {
            guard let text = zone.text else {
                screen.setText(nil, zone: i)
                continue
            }
            do {
                screen.setText(try TextZone(text, width: rects[i].width, height: rects[i].height), zone: i)
            } catch {
                screen.setText(nil, zone: i)
                players[i].player.events.publish(.warning("zone \(zone.id): its text cannot be drawn: \(error)"))
            }
        }
    }

    /// What `apply` changed.
    public struct Change: Equatable, Sendable {
        /// Zones made (their players started).
        public var added: [String] = []
        /// Zones whose players were stopped and removed.
        public var removed: [String] = []
        /// Zones that stayed and whose playlist or repeat mode changed (loaded again, with
        /// `loadPlaylists`).
        public var reloaded: [String] = []
    }

    /// Puts `layout` on the screen from the next compose on. Zones are told apart by id: a zone
    /// that stays keeps its player and what it plays (moved, resized, restacked, restyled; its
    /// scaling and sound from its next item), and its playlist is loaded again only when it
    /// changed; new zones get players, zones no longer named are stopped. With `loadPlaylists`
    /// false, the caller loads the playlists of the zones `added` and `reloaded`.
    @discardableResult
    public func apply(_ layout: ScreenLayout, loadPlaylists: Bool = true) throws -> Change {
        try update(loadPlaylists: loadPlaylists) { $0 = layout }.change
    }

    /// Changes the layout on the screen with `change` (given the layout on the screen now) and
    /// puts the result on it as `apply` does; changes are made one at a time, so two callers
    /// each changing a zone lose neither change.
    public func update(loadPlaylists: Bool = true, _ change: (inout ScreenLayout) throws -> Void) throws -> (layout: ScreenLayout, change: Change) {
        applying.lock()
        defer { applying.unlock() }
        var layout = self.layout
        try change(&layout)
        return (layout, try put(layout, loadPlaylists: loadPlaylists))
    }

    /// Loads zone `id`'s playlist as the layout on the screen gives it, and starts it.
    public func start(zone id: String) {
        let (layout, players) = lock.withLock { (current, zonePlayers) }
        guard let zone = layout.zone(id), let player = players.first(where: { $0.id == id })?.player else { return }
        Self.load(zone, on: player)
    }

    /// Where each zone is on the canvas now, in drawing order, with its player.
    public func placements() -> [(id: String, rect: PixelRect, z: Int, player: Player)] {
        applying.lock()
        defer { applying.unlock() }
        let (layout, players) = lock.withLock { (current, zonePlayers) }
        let rects = screen.canvas.zones.map(\.rect)
        return zip(players, rects).map { p, r in (p.id, r, layout.zone(p.id)?.z ?? 0, p.player) }
    }

    /// `apply`, under `applying`.
    private func put(_ layout: ScreenLayout, loadPlaylists: Bool) throws -> Change {
        let (old, players) = lock.withLock { (current, zonePlayers) }
        let surfaces = Dictionary(uniqueKeysWithValues: screen.zones.map { ($0.name, $0) })
        let known = Dictionary(uniqueKeysWithValues: players.map { ($0.id, $0.player) })
        let size = screen.canvas.outputSize
        let canvas = layout.canvas(outputWidth: size.width, outputHeight: size.height)
        var change = Change()
        var next: [(id: String, player: Player)] = []
        var nextSurfaces: [ZoneSurface] = []
        for zone in layout.drawingOrder {
            if let player = known[zone.id], let surface = surfaces[zone.id] {
                let config = configuration(of: zone)
                player.submit { $0.configuration.scaling = config.scaling; $0.configuration.audio.device = config.audio.device }
                if let before = old.zone(zone.id), before.playlist != zone.playlist || before.repeatMode != zone.repeatMode {
                    change.reloaded.append(zone.id)
                    if loadPlaylists { Self.load(zone, on: player) }
                }
                next.append((zone.id, player))
                nextSurfaces.append(surface)
            } else {
                let surface = screen.makeSurface(name: zone.id)
                next.append((zone.id, makePlayer(zone, surface: surface, load: loadPlaylists)))
                nextSurfaces.append(surface)
                change.added.append(zone.id)
            }
        }
        try screen.relayout(canvas, zones: nextSurfaces)
        lock.withLock {
            current = layout
            zonePlayers = next
        }
        setTexts(layout)
        let kept = Set(next.map(\.id))
        for (id, player) in players where !kept.contains(id) {
            change.removed.append(id)
            player.shutdown()
        }
        return change
    }

    /// The layout on the screen now.
    public var layout: ScreenLayout { lock.withLock { current } }

    /// The zones' players, in the layout's drawing order (`layout.drawingOrder`).
    public var players: [Player] { lock.withLock { zonePlayers.map(\.player) } }

    /// The zones' ids, in the same order.
    public var zoneIDs: [String] { lock.withLock { zonePlayers.map(\.id) } }

    /// The player of zone `id`.
    public func player(zone id: String) -> Player? { lock.withLock { zonePlayers.first { $0.id == id }?.player } }

    /// Composes once a refresh until `shutdown`, aimed at the output's vblanks when it has them
    /// (`nextCompose`), and looks at the zones' pictures (`look`); a failed compose is kept
    /// (`error`) and ends the loop.
    private func composeLoop(every interval: Duration) {
        let clock = MonotonicClock()
        let start = clock.now()
        var next = start
        var nextLook = start
        // When the coming compose is due: `next` before a compose that ran long moves it to now.
        var due = start
        while !lock.withLock({ stopping }) {
            if clock.now() - due > interval { lock.withLock { lateCount += 1 } }
            do {
                try screen.compose(at: (clock.now() - start).secondsValue)
            } catch {
                lock.withLock { composeError = error }
                break
            }
            if clock.now() >= nextLook {
                look(at: clock.now())
                nextLook = clock.now() + Self.lookInterval
            }
            let now = clock.now()
            next = nextCompose(after: now) ?? next + interval
            due = next
            if next < now { next = now }  // behind: the next compose at once, no burst after it
            clock.sleep(until: next)
        }
        compositorDone.signal()
    }

    /// On an output with vblanks, when to compose for the vblank after the one the last compose
    /// was committed for: half a refresh and the draw before it (`VBlankGrid.presentTime`); nil
    /// without vblanks (or before the first).
    private func nextCompose(after now: ClockTime) -> ClockTime? {
        guard let source = screen.output.vblankSource else { return nil }
        let grid = VBlankGrid(source)
        guard let pending = grid.vblank(after: now) else { return nil }
        return grid.presentTime(for: pending + grid.period)
    }

    /// How often each zone's picture is looked at.
    static let lookInterval = Duration.milliseconds(500)

    /// Looks at every zone's picture (`PictureWatch`) and publishes the alarms that began or
    /// ended on the zone's events.
    func look(at time: ClockTime) {
        let (players, settings) = lock.withLock { (zonePlayers, current.watch) }
        let surfaces = Dictionary(uniqueKeysWithValues: screen.zones.map { ($0.name, $0) })
        for (id, player) in players {
            guard let shown = surfaces[id]?.current() else { continue }
            let s = player.snapshot
            let look = PictureWatch.Look(time: time, playing: s.state == .playing, presented: shown.presented, sample: shown.sample, bytesRead: s.bytesRead)
            let changes = lock.withLock {
                var watch = watches[id] ?? PictureWatch(settings: settings)
                watch.settings = settings
                let changes = watch.observe(look)
                watches[id] = watch
                return changes
            }
            for c in changes { player.events.publish(.pictureAlarm(kind: c.kind, active: c.active, seconds: c.seconds)) }
        }
        lock.withLock { watches = watches.filter { w in players.contains { $0.id == w.key } } }
    }

    /// Zone `id`'s picture watch as of its last look (its alarms, its input's bitrate).
    public func watch(zone id: String) -> PictureWatch? { lock.withLock { watches[id] } }

    /// Composes that started more than one interval after they were due: the compositor did not
    /// keep its pace (a compose is due one interval after the one before it was due, or was
    /// started, when that one had to wait).
    public var lateComposes: Int { lock.withLock { lateCount } }

    /// Why composing stopped, when it failed.
    public var error: (any Error)? { lock.withLock { composeError } }

    /// Whether every zone with a playlist has played it to its end (or stopped, or failed), so
    /// that composing goes on only to show their last frames; never, for a screen whose zones
    /// have no playlist (text only), which shows until it is stopped.
    public var allEnded: Bool {
        let (layout, players) = lock.withLock { (current, zonePlayers) }
        let playing = players.filter { !(layout.zone($0.id)?.playlist.isEmpty ?? true) }.map(\.player)
        return !playing.isEmpty && playing.allSatisfy { [.ended, .stopped, .error].contains($0.snapshot.state) }
    }

    /// Stops the zones' players and the compositor (waits for them).
    public func shutdown() {
        let already = lock.withLock {
            defer { stopping = true }
            return stopping
        }
        guard !already else { return }
        compositorDone.wait()
        for p in players { p.shutdown() }
    }
}
