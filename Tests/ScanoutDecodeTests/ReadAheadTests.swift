import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutTestSupport
import Testing

/// `PacketReadAhead` hands out what the demuxer would, in the same order: every picture, every
/// routed packet in its place, through seeks; its level says what it holds.
@Suite(.serialized) struct ReadAheadTests {
    /// The pictures' checksums read to the end, after `seekTo` (a timestamp) when given, and the
    /// routed track's packets (timestamp, size), each with the number of pictures read before it.
    func read(_ url: String, readAhead: Bool, route track: Int? = nil, seekTo ts: Int64? = nil) throws -> (frames: [String], routed: [String]) {
        let reader = try FrameReader(input: url, demuxerOptions: DemuxerOptions(timeoutSeconds: 10))
        if readAhead { #expect(reader.readAhead(ReadAheadOptions(seconds: 2))) }
        var sum = FrameChecksum(video: reader.video, formatStartTime: reader.demuxer.formatStartTime)
        var frames: [String] = []
        var routed: [String] = []
        if let track { try reader.source.route(track: track) { routed.append("\(frames.count):\($0.pts ?? -1):\($0.size)") } }
        if let ts { try reader.seek(toTimestamp: ts, position: nil) }
        let f = VideoFrame()
        while try reader.next(into: f) { frames.append("\(f.pts ?? -1):\(try sum.md5(of: f).hex)") }
        return (frames, routed)
    }

    @Test func theSamePicturesAndRoutedPacketsAsTheDemuxerInTheSameOrder() throws {
        let server = try HTTPFileServer(directory: Fixtures.directory.path)
        let url = server.url("tracks.mkv")
        let audio = try #require(try Demuxer(input: url).tracks.first { $0.kind == .audio }?.index)
        let direct = try read(url, readAhead: false, route: audio)
        let ahead = try read(url, readAhead: true, route: audio)
        #expect(!direct.frames.isEmpty && !direct.routed.isEmpty)
        #expect(ahead.frames == direct.frames)
        // Each audio packet is handed out after the same number of pictures: fed as the
        // picture is, never ahead of it.
        #expect(ahead.routed == direct.routed)
    }

    @Test func nothingIsReadAheadBeforeTheFirstReadSoATrackRoutedThenLosesNoPacket() throws {
        let server = try HTTPFileServer(directory: Fixtures.directory.path)
        let url = server.url("tracks.mkv")
        let audio = try #require(try Demuxer(input: url).tracks.first { $0.kind == .audio }?.index)
        let reader = try FrameReader(input: url, demuxerOptions: DemuxerOptions(timeoutSeconds: 10))
        #expect(reader.readAhead(ReadAheadOptions(seconds: 2)))
        let ahead = try #require(reader.readAheadSource)
        // A fill that started at once would hold packets by now (the server is on loopback).
        Thread.sleep(forTimeInterval: 0.3)
        #expect(ahead.level.packets == 0 && ahead.level.bytes == 0)
        var first: Int64?
        try reader.source.route(track: audio) { if first == nil { first = $0.pts } }
        let f = VideoFrame()
        _ = try reader.next(into: f)
        while first == nil, try reader.next(into: f) {}
        let direct = try Demuxer(input: url)
        let p = Packet()
        var expected: Int64?
        try direct.route(track: audio) { if expected == nil { expected = $0.pts } }
        while expected == nil, try direct.read(into: p) {}
        #expect(first != nil && first == expected)
    }

    @Test func aSeekDropsWhatWasHeldAndReadsOnFromTheKeyframe() throws {
        let server = try HTTPFileServer(directory: Fixtures.directory.path)
        let url = server.url("faststart.mp4")
        let tb = try Demuxer(input: url).video.timeBase.doubleValue
        let ts = Int64(2.0 / tb)
        let direct = try read(url, readAhead: false, seekTo: ts)
        let ahead = try read(url, readAhead: true, seekTo: ts)
        #expect(direct.frames.count > 10 && direct.frames.count < 96)
        #expect(ahead.frames == direct.frames)
    }

    @Test func theLevelStopsAtItsBoundAndEndsWithTheInput() throws {
        let server = try HTTPFileServer(directory: Fixtures.directory.path)
        let reader = try FrameReader(input: server.url("faststart.mp4"), demuxerOptions: DemuxerOptions(timeoutSeconds: 10))
        #expect(reader.readAhead(ReadAheadOptions(seconds: 1)))
        let ahead = try #require(reader.readAheadSource)
        var level = ahead.level
        for _ in 0..<200 where !level.full {
            ahead.waitForData(within: .milliseconds(20))
            level = ahead.level
        }
        // 30 fps: it stops once a second is held, far from the clip's 3.2 s.
        #expect(level.full)
        #expect(level.seconds >= 1 && level.seconds < 1.2, "\(level)")
        #expect(!level.ended)
        let f = VideoFrame()
        var n = 0
        while try reader.next(into: f) { n += 1 }
        #expect(n == 96)
        #expect(ahead.level.ended && ahead.level.packets == 0 && ahead.level.bytes == 0)
    }

    @Test func onlyNetworkInputsWithAnEndAreReadAhead() throws {
        let local = try FrameReader(input: try Fixtures.path("faststart.mp4"))
        #expect(!local.readAhead(ReadAheadOptions()))
        #expect(local.readAheadSource == nil)
        let server = try HTTPFileServer(directory: Fixtures.directory.path)
        let off = try FrameReader(input: server.url("faststart.mp4"))
        #expect(!off.readAhead(ReadAheadOptions(enabled: false)))
    }
}
