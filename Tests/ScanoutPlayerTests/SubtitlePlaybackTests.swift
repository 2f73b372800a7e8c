import ScanoutDisplay
import ScanoutMedia
import ScanoutPlayer
import ScanoutRender
import ScanoutTestSupport
import ScanoutTesting
import Testing

/// The player's subtitles: the selected track's packets routed to libass as the item plays, drawn
/// by the headless CPU renderer, checked on every frame of tracks.mkv (30 fps; English 0.5–1.5 s
/// and 2.0–2.8 s, French forced 1.0–2.0 s).
@Suite("subtitles in playback: selection, track list, on/off and delay")
struct SubtitlePlaybackTests {
    /// Plays tracks.mkv to its end on a manual clock (no frame is late, none dropped) and returns
    /// the numbers of the frames whose picture differs from the plain frame in the bottom half.
    static func play(_ item: PlaylistItem, before: (PlayerEngine) throws -> Void = { _ in }) throws -> (frames: [Int], snapshot: PlayerSnapshot) {
        let reader = try FrameReader(input: item.source)
        var plain: [RGBImage] = []
        let f = VideoFrame()
        while try reader.next(into: f) { plain.append(try CPURenderer().render(f)) }
        let display = HeadlessDisplay(renderer: CPUHeadlessRenderer())
        let engine = PlayerEngine(display: display, clock: ManualClock(), configuration: PlayerConfiguration()) { _ in }
        try engine.load([item])
        try before(engine)
        let snapshot = engine.snapshot()
        try engine.play()
        var withText: [Int] = []
        var ticks = 0
        while engine.state != .ended && ticks < 2000 {
            let shown = display.framesPresented
            engine.tick()
            ticks += 1
            guard display.framesPresented > shown else { continue }
            let n = display.framesPresented - 1
            let picture = try #require(try display.snapshot())
            guard plain.indices.contains(n) else { break }
            if picture.bytes != plain[n].bytes { withText.append(n) }
        }
        #expect(display.framesPresented == 90)
        return (withText, snapshot)
    }

    @Test("subtitleLanguages en: the English track on frames 15...44 and 60...83, listed as selected in the state")
    func englishByLanguage() throws {
        var item = PlaylistItem(source: try Fixtures.path("tracks.mkv"))
        item.subtitles = SubtitleSelection(languages: ["en"])
        let (frames, s) = try Self.play(item)
        #expect(frames == Array(15...44) + Array(60...83))
        #expect(s.tracks.filter { $0.kind == .subtitle }.map(\.index) == [3, 4])
        #expect(s.selectedTracks.contains(3) && !s.selectedTracks.contains(4))
        #expect(s.subtitles?.track == 3 && s.subtitles?.enabled == true)
    }

    @Test("no language asked: the forced French track, frames 30...59")
    func forcedByDefault() throws {
        let (frames, s) = try Self.play(PlaylistItem(source: try Fixtures.path("tracks.mkv")))
        #expect(frames == Array(30...59))
        #expect(s.subtitles?.track == 4)
    }

    @Test("POST /subtitles: a +0.5 s delay moves the lines by 15 frames; a track by index; off shows none")
    func delayTrackAndOff() throws {
        let source = try Fixtures.path("tracks.mkv")
        let delayed = try Self.play(PlaylistItem(source: source)) { try $0.setSubtitles(delay: 0.5, track: .some(3)) }
        #expect(delayed.frames == Array(30...59) + Array(75...89))
        #expect(delayed.snapshot.subtitles?.delay == 0.5)
        let off = try Self.play(PlaylistItem(source: source)) { try $0.setSubtitles(enabled: false) }
        #expect(off.frames.isEmpty)
        #expect(off.snapshot.subtitles?.enabled == false)
        #expect(throws: PlayerError.subtitleTrackInvalid(1)) {
            try Self.play(PlaylistItem(source: source)) { try $0.setSubtitles(track: .some(1)) }
        }
    }
}
