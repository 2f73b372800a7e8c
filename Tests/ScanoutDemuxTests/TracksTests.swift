import ScanoutCore
import ScanoutDemux
import ScanoutTestSupport
import Testing

/// The track list of an input and the packets of the tracks read beside the video.
@Suite struct TracksTests {
    @Test func listsTracksWithLanguagesAndFlags() throws {
        let demuxer = try Demuxer(input: try Fixtures.path("tracks.mkv"))
        let t = demuxer.tracks
        #expect(t.map(\.kind) == [.video, .audio, .audio, .subtitle, .subtitle])
        #expect(t.map(\.codecName) == ["h264", "aac", "mp3", "subrip", "ass"])
        #expect(t.map(\.language) == [nil, "eng", "ger", "eng", "fre"])
        #expect(t[2].title == "Deutsch")
        #expect(t[1].isDefault && !t[2].isDefault)
        #expect(t[4].isForced && !t[3].isForced)
        #expect((t[1].sampleRate, t[1].channels) == (48000, 2))
        #expect((t[2].sampleRate, t[2].channels) == (44100, 1))
    }

    @Test func picksByIndexLanguageAndFlags() throws {
        let t = try Demuxer(input: try Fixtures.path("tracks.mkv")).tracks
        #expect(TrackSelector.pick(.audio, from: t)?.index == 1)                          // the default one
        #expect(TrackSelector.pick(.audio, from: t, languages: ["de", "en"])?.index == 2) // de = ger
        #expect(TrackSelector.pick(.audio, from: t, languages: ["ja", "en-GB"])?.index == 1)
        #expect(TrackSelector.pick(.audio, from: t, index: 2, languages: ["en"])?.index == 2)
        #expect(TrackSelector.pick(.audio, from: t, index: 3) == nil)                     // not an audio track
        #expect(TrackSelector.pick(.subtitle, from: t)?.index == 4)                       // forced only
        #expect(TrackSelector.pick(.subtitle, from: t, languages: ["eng"])?.index == 3)
        #expect(TrackSelector.pick(.subtitle, from: t, languages: ["fr"])?.index == 4)    // fr = fre
        #expect(TrackSelector.pick(.subtitle, from: [t[0], t[1]]) == nil)
    }

    /// Routed tracks get their packets in container order while every video packet is still
    /// read; a track not routed is never handed out.
    @Test func routesPacketsBesideTheVideo() throws {
        let demuxer = try Demuxer(input: try Fixtures.path("tracks.mkv"))
        final class Counts { var audio = 0, subtitles: [Int64] = [] }
        let c = Counts()
        try demuxer.route(track: 1) { p in c.audio += 1; #expect(p.streamIndex == 1) }
        try demuxer.route(track: 4) { p in c.subtitles.append(p.pts ?? -1) }
        #expect(throws: MediaError.self) { try demuxer.route(track: 0) { _ in } }
        #expect(throws: MediaError.self) { try demuxer.route(track: 9) { _ in } }
        let packet = Packet()
        var pictures = 0
        var start: Int64?
        while try demuxer.read(into: packet) {
            #expect(packet.streamIndex == 0)
            if let pts = packet.pts { start = min(start ?? pts, pts) }
            pictures += 1
        }
        #expect(pictures == 90)
        // 3 s of 48 kHz AAC: 1024 samples a packet.
        #expect(c.audio >= 140 && c.audio <= 142)
        // The French line, 1 s after the first picture (the container's time base is 1/1000).
        #expect(c.subtitles.map { $0 - (start ?? 0) } == [1000])
    }
}
