import ScanoutDisplay
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ScanoutPlayer
import ScanoutTestSupport
import Synchronization
import Testing

@Suite struct PlayerThreadTests {
    @Test func theSnapshotShowsACommandsEffectAsSoonAsTheCommandReturns() async throws {
        let player = Player(configuration: PlayerConfiguration()) { HeadlessDisplay() }
        defer { player.shutdown() }
        let clip = try Fixtures.path("counter.mp4")
        // Looping: on a loaded machine the 3.2-s clip must not reach its end between two commands.
        _ = try await player.perform { e in try e.load([PlaylistItem(source: clip)]); e.setRepeat(.one); return 0 }
        for _ in 0..<5 {
            _ = try await player.perform { e in try e.play(); return 0 }
            #expect(player.snapshot.state == .playing)
            _ = try await player.perform { e in try e.pause(); return 0 }
            #expect(player.snapshot.state == .paused)
        }
    }

    @Test func commandsRunOnTheLoopThreadAndEventsArriveInOrder() async throws {
        let clip = try Fixtures.path("counter.mp4")
        var config = PlayerConfiguration()
        config.positionInterval = .milliseconds(500)
        let player = Player(configuration: config) { HeadlessDisplay() }
        let events = player.events.subscribe()
        // What a client asking for the state as soon as it hears `ended` gets (asked on the
        // publishing thread, before the event is even on its way).
        let askedAtEnd = Mutex<PlayerSnapshot?>(nil)
        player.events.addListener { n in
            if n.event == .ended { askedAtEnd.withLock { $0 = player.snapshot } }
        }
        let state = try await player.perform { engine in
            try engine.load([PlaylistItem(source: clip)])
            try engine.setRate(4)   // 3.2 s of media in 0.8 s
            try engine.play()
            return engine.state
        }
        #expect(state == .playing)
        var seen: [PlayerEvent] = []
        var sequence = 0
        for await n in events {
            #expect(n.sequence > sequence)
            sequence = n.sequence
            seen.append(n.event)
            if n.event == .ended { break }
        }
        // outputChanged comes as the thread starts, possibly before this subscription.
        var names = seen.map(\.name).filter { $0 != "position" }
        if names.first == "outputChanged" { names.removeFirst() }
        #expect(names == ["stateChanged", "itemChanged", "prepared", "durationChanged", "serviceState", "stateChanged",
                          "rateChanged", "warning", "stateChanged", "play", "firstFrame", "stateChanged", "ended"])
        // Events go out once the copy is refreshed: asked as soon as `ended` is heard, it has
        // the end and the final figures.
        let snapshot = try #require(askedAtEnd.withLock { $0 })
        #expect(snapshot.state == .ended)
        #expect(snapshot.framesPresented + snapshot.framesDropped == 96)
        // After shutdown, commands are refused and event streams end.
        player.shutdown()
        await #expect(throws: PlayerError.self) { try await player.perform { $0.state } }
        for await _ in player.events.subscribe() { Issue.record("a stream opened after shutdown delivered an event") }
    }
}
