import ScanoutDisplay
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ScanoutPlayer
import ScanoutTestSupport
import Testing

/// A subtitle track flagged default is shown with no language or track asked, as mpv shows it,
/// ahead of a forced one; a language asked still wins, and `enabled: false` still shows nothing.
@Suite("the default subtitle track in playback")
struct DefaultSubtitlePlaybackTests {
    @Test("no choice: the default English track (frames 15...44 and 60...83), ahead of the forced French one")
    func defaultTrackShown() throws {
        let scratch = try Scratch()
        for frenchForced in [false, true] {
            let clip = try defaultEnglishSubtitleClip(in: scratch, frenchForced: frenchForced)
            let (frames, s) = try SubtitlePlaybackTests.play(PlaylistItem(source: clip))
            #expect(frames == Array(15...44) + Array(60...83), "French forced: \(frenchForced)")
            #expect(s.subtitles?.track == 3)
            var french = PlaylistItem(source: clip)
            french.subtitles = SubtitleSelection(languages: ["fr"])
            #expect(try SubtitlePlaybackTests.play(french).frames == Array(30...59))
            var none = PlaylistItem(source: clip)
            none.subtitles = SubtitleSelection(enabled: false)
            #expect(try SubtitlePlaybackTests.play(none).frames.isEmpty)
        }
    }

    @Test("TrackSelector: index, then language, then default, then forced")
    func selectionOrder() throws {
        let en = TrackInfo(index: 3, kind: .subtitle, codecName: "ass", language: "eng", isDefault: true)
        let fr = TrackInfo(index: 4, kind: .subtitle, codecName: "ass", language: "fre", isForced: true)
        let de = TrackInfo(index: 5, kind: .subtitle, codecName: "ass", language: "ger")
        #expect(SubtitleSelection().embeddedTrack(in: [de, fr, en])?.index == 3)
        #expect(SubtitleSelection().embeddedTrack(in: [de, fr])?.index == 4)
        #expect(SubtitleSelection().embeddedTrack(in: [de]) == nil)
        #expect(SubtitleSelection(languages: ["de"]).embeddedTrack(in: [de, fr, en])?.index == 5)
        #expect(SubtitleSelection(languages: ["ja"]).embeddedTrack(in: [de, fr, en])?.index == 3)
        #expect(SubtitleSelection(track: 4).embeddedTrack(in: [de, fr, en])?.index == 4)
        #expect(SubtitleSelection(enabled: false).embeddedTrack(in: [de, fr, en]) == nil)
    }
}
