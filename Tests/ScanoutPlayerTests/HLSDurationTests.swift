import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ScanoutPlayer
import ScanoutTestSupport
import Testing

/// An HLS VOD playlist (`#EXT-X-ENDLIST`) has a length: the sum of its `EXTINF`s, which ffprobe
/// reports as the format's duration. The hls3 ladder of tools/make-fixtures.sh: five 1 s segments.
@Suite("HLS VOD duration from the playlist")
struct HLSDurationTests {
    /// ffprobe's duration of `url`, in seconds.
    static func ffprobeDuration(_ url: String) throws -> Double {
        let r = try Proc.run("ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "default=nw=1:nk=1", url])
        return try #require(Double(r.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)), "ffprobe said: \(r.stdoutText) \(r.stderrText)")
    }

    @Test("a master playlist's reader states ffprobe's duration; a live one states none")
    func readerDuration() async throws {
        try await offPool {
            let server = try HTTPFileServer.hls(directory: try Fixtures.path("hls3"))
            let expected = try Self.ffprobeDuration(server.url("master.m3u8"))
            #expect(abs(expected - 5) < 0.01)
            for name in ["master.m3u8", "v1/index.m3u8"] {
                let reader = try FrameReader(input: server.url(name))
                let seconds = try #require(reader.video.durationSeconds, "\(name): no duration")
                #expect(abs(seconds - expected) < 0.001, "\(name): \(seconds) s, ffprobe \(expected) s")
            }
            let live = try HTTPFileServer.hls(directory: try Fixtures.path("hls2"), options: ["--live", "1", "--window", "3"])
            let reader = try FrameReader(input: live.url("master.m3u8"),
                                         demuxerOptions: DemuxerOptions(adaptive: AdaptiveOptions(liveStartIndex: -1)))
            #expect(reader.video.durationSeconds == nil)
        }
    }

    @Test("the player's durationChanged and every position event carry the playlist's duration")
    func playerEvents() async throws {
        try await offPool {
            let server = try HTTPFileServer.hls(directory: try Fixtures.path("hls3"))
            let expected = try Self.ffprobeDuration(server.url("master.m3u8"))
            let h = Harness()
            try h.engine.load([PlaylistItem(source: server.url("master.m3u8"))])
            try h.engine.play()
            h.run { h.engine.state == .ended }
            #expect(h.engine.state == .ended)
            let changed = h.events.compactMap { e -> Double?? in if case .durationChanged(let d) = e { return d } else { return nil } }
            #expect(changed.count == 1)
            let announced = try #require(changed.first.flatMap { $0 }, "durationChanged(nil)")
            #expect(abs(announced - expected) < 0.001)
            let positions = h.events.compactMap { e -> Double?? in if case .position(_, let d, _) = e { return d } else { return nil } }
            #expect(positions.count >= 4)
            #expect(positions.allSatisfy { $0.map { abs($0 - expected) < 0.001 } ?? false }, "\(positions)")
        }
    }
}
