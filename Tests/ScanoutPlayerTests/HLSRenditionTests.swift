import ScanoutDisplay
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ScanoutPlayer
import ScanoutRender
import ScanoutTestSupport
import Testing

/// HLS alternative renditions over loopback HTTP: the hls_subs ladder of tools/make-fixtures.sh
/// (hls2's two variants, 150 frames from 1.466667 s; an English AAC rendition; English and French
/// WebVTT renditions whose cues count from the first picture: English 0.5–1.5 s and 3.0–4.0 s,
/// French 1.0–2.0 s and 3.5–4.5 s).
@Suite("HLS alternative renditions: listed, chosen by language, shown across a variant change")
struct HLSRenditionTests {
    @Test("the master playlist's audio and subtitle renditions are tracks with their LANGUAGE, NAME and DEFAULT")
    func listed() async throws {
        try await offPool {
            let server = try HTTPFileServer.hls(directory: try Fixtures.path("hls_subs"))
            let reader = try FrameReader(input: server.url("master.m3u8"))
            let tracks = reader.demuxer.tracks.filter { $0.kind != .video }
            #expect(tracks.map(\.kind) == [.audio, .subtitle, .subtitle])
            #expect(tracks.map(\.codecName) == ["aac", "webvtt", "webvtt"])
            #expect(tracks.map(\.language) == ["en", "en", "fr"])
            #expect(tracks.map(\.title) == ["English", "English", "Français"])
            #expect(tracks.map(\.isDefault) == [true, false, false])
            #expect(TrackSelector.pick(.subtitle, from: reader.demuxer.tracks, languages: ["fre"])?.index == tracks[2].index)
            #expect(reader.demuxer.variants.count == 2)
        }
    }

    /// Plays `item` on a headless CPU display over a server that sends the top variant (`/v1/`)
    /// at 40 kB/s, so that the player changes down to 256x192 after its first segment; returns
    /// each picture shown.
    static func play(_ item: PlaylistItem, server: HTTPFileServer) throws -> [RGBImage] {
        try server.control("throttle?prefix=/v1/&rate=40000")
        var configuration = PlayerConfiguration()
        configuration.demuxer = DemuxerOptions(timeoutSeconds: 10, adaptive: AdaptiveOptions(initialBandwidth: 10_000_000, upSegments: 99))
        return try SubtitlePlaybackTests.pictures(item, on: HeadlessDisplay(renderer: CPUHeadlessRenderer()),
                                                  configuration: configuration) { _ in }
    }

    /// Each variant's pictures decoded from the fixture's files, keyed by the frame's code band
    /// (the top 32 rows, which subtitles do not reach): frame number and size in one key.
    static func plainPictures() throws -> [[UInt8]: (number: Int, image: RGBImage)] {
        var plain: [[UInt8]: (number: Int, image: RGBImage)] = [:]
        for v in ["v0", "v1"] {
            let reader = try FrameReader(input: try Fixtures.path("hls_subs/\(v)/index.m3u8"))
            let f = VideoFrame()
            var n = 0
            while try reader.next(into: f) {
                let image = try CPURenderer().render(f)
                plain[band(image)] = (n, image)
                n += 1
            }
        }
        return plain
    }

    static func band(_ image: RGBImage) -> [UInt8] { Array(image.bytes.prefix(image.bytes.count * 32 / image.height)) }

    @Test("subtitleLanguages fr picks the French rendition: its lines on frames 30...59 and 105...134, across a change of variant")
    func frenchAcrossAVariantChange() async throws {
        try await offPool {
            let server = try HTTPFileServer.hls(directory: try Fixtures.path("hls_subs"))
            var item = PlaylistItem(source: server.url("master.m3u8"))
            item.subtitles = SubtitleSelection(languages: ["fr"])
            let shown = try Self.play(item, server: server)
            let plain = try Self.plainPictures()
            var numbers: [Int] = [], texted: [Int] = [], widths: Set<Int> = []
            for image in shown {
                let p = try #require(plain[Self.band(image)], "a picture that is no frame of either variant")
                numbers.append(p.number)
                widths.insert(image.width)
                if p.image.bytes != image.bytes { texted.append(p.number) }
            }
            #expect(numbers == Array(0..<150))
            #expect(widths == [256, 320], "no change of variant happened")
            #expect(texted == Array(30...59) + Array(105...134))
        }
    }
}
