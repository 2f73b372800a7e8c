import ScanoutDisplay
import ScanoutKMS
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
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
        var snapshot = PlayerSnapshot()
        let shown = try pictures(item, on: HeadlessDisplay(renderer: CPUHeadlessRenderer())) { engine in
            try before(engine)
            snapshot = engine.snapshot()
        }
        #expect(shown.count == 90 && plain.count == 90)
        return (zip(shown, plain).enumerated().filter { $0.element.0.bytes != $0.element.1.bytes }.map(\.offset), snapshot)
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

    /// The pictures of one run on `display`, frame by frame.
    static func pictures(_ item: PlaylistItem, on display: HeadlessDisplay, configuration: PlayerConfiguration = PlayerConfiguration(),
                         before: (PlayerEngine) throws -> Void) throws -> [RGBImage] {
        let engine = PlayerEngine(display: display, clock: ManualClock(), configuration: configuration) { _ in }
        try engine.load([item])
        try before(engine)
        try engine.play()
        var out: [RGBImage] = []
        var ticks = 0
        while engine.state != .ended && ticks < 2000 {
            let shown = display.framesPresented
            engine.tick()
            ticks += 1
            if display.framesPresented > shown { out.append(try #require(try display.snapshot())) }
        }
        return out
    }

    @Test("the headless GL renderer on a 640x360 output draws the English line on frames 15...44 and 60...83")
    func glHeadless() throws {
        var item = PlaylistItem(source: try Fixtures.path("tracks.mkv"))
        item.subtitles = SubtitleSelection(languages: ["en"])
        func display() throws -> HeadlessDisplay {
            HeadlessDisplay(renderer: GLHeadlessRenderer(gl: try GLRenderer()), outputWidth: 640, outputHeight: 360)
        }
        let with = try Self.pictures(item, on: try display()) { _ in }
        let without = try Self.pictures(item, on: try display()) { try $0.setSubtitles(enabled: false) }
        #expect(with.count == 90 && without.count == 90)
        #expect(with.first.map { ($0.width, $0.height) } ?? (0, 0) == (640, 360))
        let drawn = zip(with, without).enumerated().filter { $0.element.0.bytes != $0.element.1.bytes }.map(\.offset)
        #expect(drawn == Array(15...44) + Array(60...83))
    }

    @Test("a KMS screen (1920x1080) composites the layer laid out on its mode: frame 20 as the CPU compositor draws it with the layer, frame 14 without")
    func kmsScreen() throws {
        let input = try Fixtures.path("tracks.mkv")
        let reader = try FrameReader(input: input)
        var frames: [VideoFrame] = []
        while frames.count < 21 {
            let f = VideoFrame()
            guard try reader.next(into: f) else { break }
            frames.append(f)
        }
        let subs = try SubtitleRenderer(script: try SubtitleFile.read(input, track: 3))
        subs.videoTimeBase = reader.video.timeBase
        let display = try KMSDisplay(device: FakeKMSDevice.singleScreen(clock: ManualClock()), renderer: MemoryScanoutRenderer())
        display.subtitles = subs
        for (n, text) in [(14, false), (20, true)] {
            try display.present(frames[n], orientation: .identity)
            let shown = try display.renderer.read(try #require(display.shownBuffer(named: "HDMI-A-1")))
            var c = Composition()
            c.subtitles = subs.layer(for: frames[n], in: c, outputWidth: 1920, outputHeight: 1080)
            #expect((c.subtitles != nil) == text, "frame \(n)")
            let reference = try CPUCompositor().compose(frames[n], as: c, width: 1920, height: 1080)
            #expect(shown.bytes == reference.bytes, "frame \(n)")
        }
    }

    @Test("the player's defaults: English from its languages for an item that names none; a 40-pixel margin lifts the line")
    func playerDefaults() throws {
        let source = try Fixtures.path("tracks.mkv")
        var item = PlaylistItem(source: source)
        item.subtitles = SubtitleSelection(languages: ["en"])
        let own = try Self.pictures(item, on: HeadlessDisplay(renderer: CPUHeadlessRenderer())) { _ in }
        var configuration = PlayerConfiguration()
        configuration.subtitles = SubtitleSelection(languages: ["en"])
        let defaults = try Self.pictures(PlaylistItem(source: source), on: HeadlessDisplay(renderer: CPUHeadlessRenderer()),
                                         configuration: configuration) { _ in }
        #expect(defaults.count == 90 && defaults.map(\.bytes) == own.map(\.bytes))
        configuration.subtitles.margin = .pixels(40)
        let lifted = try Self.pictures(PlaylistItem(source: source), on: HeadlessDisplay(renderer: CPUHeadlessRenderer()),
                                       configuration: configuration) { _ in }
        #expect(lifted.count == 90)
        // The line's lowest drawn row is at least 40 rows above the bottom, and higher than without.
        func lowestChangedRow(_ a: RGBImage, _ b: RGBImage) -> Int {
            let stride = a.bytes.count / a.height
            return (0..<a.height).last { y in a.bytes[y * stride..<(y + 1) * stride] != b.bytes[y * stride..<(y + 1) * stride] } ?? -1
        }
        let reader = try FrameReader(input: source), frame20 = VideoFrame()
        for _ in 0...20 { _ = try reader.next(into: frame20) }
        let clean = try CPURenderer().render(frame20)
        let low = lowestChangedRow(own[20], clean), high = lowestChangedRow(lifted[20], clean)
        #expect(low > 0 && high > 0 && high < low && high < clean.height - 40, "\(low) → \(high)")
    }

    @Test("a seek to 1.0 s, inside the English line of 0.5–1.5 s, shows the line on the first frame; so does the track chosen after it")
    func seekIntoALine() throws {
        var english = PlaylistItem(source: try Fixtures.path("tracks.mkv"))
        english.subtitles = SubtitleSelection(languages: ["en"])
        let reference = try Self.pictures(english, on: HeadlessDisplay(renderer: CPUHeadlessRenderer())) { _ in }
        #expect(reference.count == 90)
        let reader = try FrameReader(input: english.source), frame31 = VideoFrame()
        for _ in 0...31 { _ = try reader.next(into: frame31) }
        let plain = try CPURenderer().render(frame31)
        for chosenAfter in [false, true] {
            let display = HeadlessDisplay(renderer: CPUHeadlessRenderer())
            let engine = PlayerEngine(display: display, clock: ManualClock(), configuration: PlayerConfiguration()) { _ in }
            // Chosen after the seek: the item starts with the forced French track.
            try engine.load([chosenAfter ? PlaylistItem(source: english.source) : english])
            try engine.seek(to: 1.0, exact: false)
            if !chosenAfter {
                #expect(try display.snapshot()?.bytes == reference[30].bytes, "frame 30, right after the seek")
                continue
            }
            try engine.setSubtitles(track: .some(3))
            try engine.play()
            let shown = display.framesPresented
            for _ in 0..<100 where display.framesPresented == shown { engine.tick() }
            let next = try #require(try display.snapshot())
            #expect(next.bytes == reference[31].bytes && next.bytes != plain.bytes, "frame 31, the first after the choice")
        }
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
