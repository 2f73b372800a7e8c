import Foundation
import ScanoutDisplay
import ScanoutCore
import ScanoutDecode
import ScanoutPlayer
import ScanoutTestSupport
import ScanoutTesting
import Testing

/// `PlayerEngine.run`: the engine played to its end on the calling thread, as `scanout play`
/// drives it (the same turns of the loop as the service's thread).
@Suite struct PlayerEngineRunTests {
    @Test("run plays the item to its end: every frame once, in order, on time; wall time and sorted deviations")
    func playsToTheEnd() throws {
        let h = Harness()
        try h.engine.load([PlaylistItem(source: try Fixtures.path("counter.mp4"))])
        let start = h.clock.now()
        var progress: [PlaybackProgress] = []
        let stats = try h.engine.run(progress: { progress.append($0) })
        #expect(h.engine.state == .ended)
        #expect(h.display.shown.map(\.code) == Array(0..<96))
        #expect(stats.framesPresented == 96 && stats.framesDropped == 0 && stats.framesDecoded == 96)
        // 96 frames at 30 fps on a manual clock: the last one is due 95/30 s after the first.
        let last = try #require(h.display.shown.last)
        #expect(abs((last.at - start).secondsValue - 95.0 / 30) < 0.01, "\((last.at - start).secondsValue)")
        #expect(stats.wallSeconds >= 95.0 / 30 - 0.01 && stats.wallSeconds == (h.clock.now() - start).secondsValue)
        #expect(stats.pacingDeviations == stats.pacingDeviations.sorted())
        #expect(stats.pacingDeviations.count == 96)
        // A few times a second of media, each with the item's length.
        #expect(progress.count >= 10 && progress.allSatisfy { $0.duration.map { abs($0 - 3.2) < 0.05 } == true })
        #expect(progress.map(\.stats.framesPresented) == progress.map(\.stats.framesPresented).sorted())
        #expect(h.mainEvents.contains(.ended))
    }

    @Test("untimed: every frame shown as soon as it is decoded, the clock never waited on")
    func untimed() throws {
        var configuration = PlayerConfiguration()
        configuration.timed = false
        let h = Harness(configuration: configuration)
        try h.engine.load([PlaylistItem(source: try Fixtures.path("counter.mp4"))])
        let start = h.clock.now()
        let stats = try h.engine.run()
        #expect(h.display.shown.map(\.code) == Array(0..<96))
        #expect(h.display.shown.allSatisfy { $0.at == start })
        #expect(stats.framesPresented == 96 && stats.wallSeconds == 0)
    }

    @Test("shouldStop ends the run part way, still playing")
    func stopsWhenAsked() throws {
        let h = Harness()
        try h.engine.load([PlaylistItem(source: try Fixtures.path("counter.mp4"))])
        let stats = try h.engine.run(shouldStop: { h.display.shown.count >= 10 })
        #expect(h.display.shown.map(\.code) == Array(0..<10))
        #expect(stats.framesPresented == 10)
        #expect(h.engine.state == .playing)
    }

    @Test("a display that fails mid-run: run throws the display's error, typed, and the engine is in error")
    func throwsTheFailure() throws {
        let h = Harness()
        try h.engine.load([PlaylistItem(source: try Fixtures.path("counter.mp4"))])
        #expect(throws: PresentError.self) {
            _ = try h.engine.run(shouldStop: {
                if h.display.shown.count >= 5 { h.display.failing = true }
                return false
            })
        }
        #expect(h.display.shown.count == 5)
        #expect(h.engine.state == .error)
        #expect(h.engine.lastPlaybackError is PresentError)
    }
}
