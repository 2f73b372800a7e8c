import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ScanoutTestSupport
import Testing

/// The variant choice under a network that slows mid-segment (`Tests/Fixtures/hls_server.py`'s
/// trickle) and with the buffer level in the decision, on the ladders of `AdaptiveHLSTests`
/// (hls3: 256x192, 288x216 and 320x240 at 165, 330 and 660 kb/s; 150 frames, a keyframe every
/// 30, 1 s segments; each frame shows its number).
@Suite struct AbandonedSegmentTests {
    @Test("a segment that trickles below the variant's bitrate is abandoned mid-download; its time range comes from a lower variant, every frame once")
    func trickleMidSegmentAbandonsItForALowerVariant() async throws {
        try await offPool {
            let server = try HTTPFileServer.hls(directory: try Fixtures.path("hls3"))
            // The third segment of 320x240 (89 kB: frames 60 to 89): its first 40 kB at once (a few
            // frames: the segment is begun), then 8 kB/s (64 kb/s, a tenth of the variant's bitrate).
            try server.control("trickle?prefix=/v2/seg2.ts&rate=8000&after=40000")
            let reader = try FrameReader(input: server.url("master.m3u8"),
                                         demuxerOptions: AdaptiveHLSTests.options(AdaptiveOptions(initialBandwidth: 10_000_000, upSegments: 99)))
            #expect(reader.demuxer.currentVariant?.width == 320)
            let started = Date()
            let shown = try AdaptiveHLSTests.read(reader)
            #expect(shown.map(\.code) == Array(0..<150), "frames: \(shown.map(\.code))")
            #expect(reader.demuxer.abandonedSegments == 1)
            let switches = reader.demuxer.variantSwitches
            #expect(switches.count == 2, "\(switches)")
            let change = try #require(switches.last)
            #expect(change.abandonedSegment && change.from?.width == 320 && change.to.width < 320, "\(change)")
            #expect(change.reason.hasPrefix(VariantSwitch.abandonedPrefix), "\(change.reason)")
            // The frames of the abandoned segment that had come (from 60 on) were dropped, not
            // shown: the picture size changes at frame 60, the keyframe the abandoned segment
            // began with, and nowhere else.
            #expect(shown.filter { $0.code < 60 }.allSatisfy { $0.width == 320 })
            #expect(shown.filter { $0.code >= 60 }.allSatisfy { $0.width == change.to.width })
            // The rest of the trickling segment (49 kB at 8 kB/s: 6 s) was not waited for.
            #expect(Date().timeIntervalSince(started) < 6)
            let log = try server.control("log").split(separator: "\n").map(String.init)
            let lower = "/v\(change.to.id)/seg2.ts"
            let abandoned = try #require(log.firstIndex(of: "/v2/seg2.ts"), "\(log)")
            #expect(log[abandoned...].contains(lower), "\(log)")
            #expect(!log.contains("/v2/seg3.ts"), "\(log)")
        }
    }

    @Test("a segment slowing to 2 kB/s is abandoned while a read waits for it, not after the read timed out")
    func slowTrickleIsAbandonedInsideTheBlockedRead() async throws {
        try await offPool {
            let server = try HTTPFileServer.hls(directory: try Fixtures.path("hls3"))
            // libavformat's hls demuxer reads a segment 32 KiB at a time: after 40 kB at once, the
            // next read waits for 25 kB more, 12 s at 2 kB/s, past the 10 s timeout.
            try server.control("trickle?prefix=/v2/seg2.ts&rate=2000&after=40000")
            let reader = try FrameReader(input: server.url("master.m3u8"),
                                         demuxerOptions: AdaptiveHLSTests.options(AdaptiveOptions(initialBandwidth: 10_000_000, upSegments: 99)))
            let shown = try AdaptiveHLSTests.read(reader)
            #expect(shown.map(\.code) == Array(0..<150), "frames: \(shown.map(\.code))")
            #expect(reader.demuxer.abandonedSegments == 1)
            let change = try #require(reader.demuxer.variantSwitches.last)
            #expect(change.abandonedSegment && change.to.width < 320, "\(change)")
            #expect(shown.filter { $0.code < 60 }.allSatisfy { $0.width == 320 })
            #expect(shown.filter { $0.code >= 60 }.allSatisfy { $0.width == change.to.width })
            // The connection was dropped inside that read: well before its 32 KiB (to 65 536 bytes)
            // had come.
            let sent = try server.control("sent").split(separator: "\n").map { $0.split(separator: " ") }
            let written = try #require(sent.first { $0.first == "/v2/seg2.ts" }.flatMap { Int($0[1]) })
            #expect(written >= 40_000 && written < 55_000, "\(written) bytes of /v2/seg2.ts sent")
        }
    }

    @Test func noChangeUpWhileTheBufferIsLow() async throws {
        try await offPool {
            let server = try HTTPFileServer.hls(directory: try Fixtures.path("hls3"))
            // From the lowest variant, with loopback's throughput: up after every segment, but only
            // with 8 s buffered.
            for level in [2.0, 10.0] {
                let reader = try FrameReader(input: server.url("master.m3u8"),
                                             demuxerOptions: AdaptiveHLSTests.options(AdaptiveOptions(initialBandwidth: 100_000, upSegments: 1, minBufferForUp: 8)))
                reader.demuxer.bufferedSeconds = { level }
                let shown = try AdaptiveHLSTests.read(reader)
                #expect(shown.map(\.code) == Array(0..<150))
                let switches = reader.demuxer.variantSwitches
                if level < 8 {
                    #expect(switches.count == 1, "\(switches)")
                    #expect(Set(shown.map(\.width)) == [256])
                } else {
                    #expect(switches.count > 1, "\(switches)")
                    #expect(switches.dropFirst().allSatisfy { $0.reason.contains("10.0 s buffered") }, "\(switches)")
                    #expect(reader.demuxer.adaptiveBufferedSeconds == 10)
                }
            }
        }
    }

    @Test("a live window bounds the buffer: there the way up does not wait for it")
    func liveGoesUpWithoutWaitingForTheBuffer() async throws {
        try await offPool {
            let server = try HTTPFileServer.hls(directory: try Fixtures.path("hls3"), options: ["--live", "1", "--window", "4"])
            let reader = try FrameReader(input: server.url("master.m3u8"),
                                         demuxerOptions: AdaptiveHLSTests.options(AdaptiveOptions(initialBandwidth: 100_000, upSegments: 1, liveStartIndex: -4,
                                                                                                  minBufferForUp: 8)))
            let shown = try AdaptiveHLSTests.read(reader)
            let first = try #require(shown.first?.code)
            #expect(shown.map(\.code) == Array(first..<150))
            #expect(reader.demuxer.variantSwitches.count > 1, "\(reader.demuxer.variantSwitches)")
            #expect(Set(shown.map(\.width)).count > 1)
        }
    }

    @Test("with abandoning off, a late segment is finished and the change down decided while it downloads")
    func lateSegmentFinishedWithAbandoningOff() async throws {
        try await offPool {
            let server = try HTTPFileServer.hls(directory: try Fixtures.path("hls3"))
            try server.control("trickle?prefix=/v2/seg2.ts&rate=40000&after=20000")
            let reader = try FrameReader(input: server.url("master.m3u8"),
                                         demuxerOptions: AdaptiveHLSTests.options(AdaptiveOptions(initialBandwidth: 10_000_000, upSegments: 99,
                                                                                                  abandonSegments: false)))
            reader.demuxer.bufferedSeconds = { 0 }
            let shown = try AdaptiveHLSTests.read(reader)
            #expect(shown.map(\.code) == Array(0..<150))
            #expect(reader.demuxer.abandonedSegments == 0)
            let switches = reader.demuxer.variantSwitches
            #expect(switches.count == 2, "\(switches)")
            // The whole trickling segment was shown, then the next keyframe came from below.
            #expect(shown.filter { $0.code < 90 }.allSatisfy { $0.width == 320 })
            #expect(shown.filter { $0.code >= 90 }.allSatisfy { $0.width < 320 })
            #expect(switches.last?.reason.contains("its rest would take") == true, "\(switches)")
        }
    }
}
