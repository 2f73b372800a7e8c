import Foundation
import ScanoutCore
import ScanoutDisplay
import ScanoutRender

/// A screen of zones playing: one `Player` per zone (its engine on a thread of its own, its own
/// playlist, timeline, drops and events) presenting into the zone's `ZoneSurface`, and a
/// compositor thread that composes every zone's last frame onto the output once per refresh
/// (`CanvasScreen.compose`). One zone at most has the sound; the others play silent.
///
/// `@unchecked Sendable`: `stopping`, `composeError` and `lateCount` are read and written under
/// `lock`; the screen is composed on the compositor thread only.
public final class ScreenPlayer: @unchecked Sendable {
    public let layout: ScreenLayout
    public let screen: CanvasScreen
    /// The zones' players, in the layout's drawing order (`layout.drawingOrder`).
    public let players: [Player]
    /// The zones' ids, in the same order.
    public let zoneIDs: [String]
    private let lock = NSLock()
    private var stopping = false
    private var composeError: (any Error)?
    private var lateCount = 0
    private var compositor: Thread?
    private let compositorDone = DispatchSemaphore(value: 0)

    /// Starts the zones' players on `output` (a canvas of `outputWidth`×`outputHeight`), each
    /// loading its playlist and playing at once, and composes every `refreshInterval` (the
    /// output's refresh, when it has one).
    public init(layout: ScreenLayout, output: any CanvasOutput, outputWidth: Int, outputHeight: Int,
                configuration: PlayerConfiguration = PlayerConfiguration(), refreshInterval: Duration = .nanoseconds(16_666_667)) {
        self.layout = layout
        let zones = layout.drawingOrder
        zoneIDs = zones.map(\.id)
        screen = CanvasScreen(canvas: layout.canvas(outputWidth: outputWidth, outputHeight: outputHeight), output: output, names: zoneIDs)
        var players: [Player] = []
        for (zone, surface) in zip(zones, screen.zones) {
            var c = configuration
            c.scaling = zone.scaling
            if !zone.audio { c.audio.device = "none" }
            let player = Player(configuration: c) { surface }
            let items = zone.playlist, mode = zone.repeatMode
            if !items.isEmpty {
                player.submit { engine in
                    engine.setRepeat(mode)
                    do { try engine.load(items, autoplay: true) } catch { engine.report(.error(message: "\(error)", item: nil, skipped: false)) }
                }
            }
            players.append(player)
        }
        self.players = players
        for (i, zone) in zones.enumerated() {
            guard let text = zone.text else { continue }
            let r = screen.canvas.zones[i].rect
            do {
                screen.setText(try TextZone(text, width: r.width, height: r.height), zone: i)
            } catch {
                players[i].events.publish(.warning("zone \(zone.id): its text cannot be drawn: \(error)"))
            }
        }
        let interval = output.vblankSource?.refreshInterval ?? refreshInterval
        let t = Thread(named: "scanout-screen") { [self] in composeLoop(every: interval) }
        compositor = t
        t.start()
    }

    /// Composes once a refresh until `shutdown`; a failed compose is kept (`error`) and ends the loop.
    private func composeLoop(every interval: Duration) {
        let clock = MonotonicClock()
        let start = clock.now()
        var next = start
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
            next += interval
            due = next
            let now = clock.now()
            if next < now { next = now }  // behind: the next compose at once, no burst after it
            clock.sleep(until: next)
        }
        compositorDone.signal()
    }

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
        let playing = zip(layout.drawingOrder, players).filter { !$0.0.playlist.isEmpty }.map(\.1)
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
