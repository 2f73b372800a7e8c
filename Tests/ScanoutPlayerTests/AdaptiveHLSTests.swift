import Foundation
import ScanoutDisplay
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ScanoutPlayer
import ScanoutTestSupport
import Testing

/// Adaptive HLS over loopback HTTP (`Tests/Fixtures/hls_server.py`): the ladders of
/// tools/make-fixtures.sh (hls2: 256x192 and 320x240; hls3: 256x192, 288x216 and 320x240; 150
/// frames, a keyframe every 30, 1 s segments), each frame showing its number.
@Suite struct AdaptiveHLSTests {
    /// Every frame read: the number it shows and its width (which variant it came from).
    struct Shown { var code: Int; var width: Int }

    static func read(_ reader: FrameReader, each: (FrameReader) throws -> Void = { _ in }) throws -> [Shown] {
        let frame = VideoFrame()
        var shown: [Shown] = []
        while try reader.next(into: frame) {
            try frame.makeCPUResident()
            shown.append(Shown(code: frameCode(frame), width: frame.width))
            try each(reader)
        }
        return shown
    }

    static func options(_ adaptive: AdaptiveOptions, timeout: Double = 10) -> DemuxerOptions {
        DemuxerOptions(timeoutSeconds: timeout, adaptive: adaptive)
    }

    /// A reader of `ladder`'s master playlist on a server that sends paths under `prefix` at
    /// `rate` bytes a second.
    static func throttled(_ ladder: String, _ prefix: String, rate: Int, _ adaptive: AdaptiveOptions) throws -> (HTTPFileServer, FrameReader) {
        let server = try HTTPFileServer.hls(directory: try Fixtures.path(ladder))
        try server.control("throttle?prefix=\(prefix)&rate=\(rate)")
        return (server, try FrameReader(input: server.url("master.m3u8"), demuxerOptions: options(adaptive)))
    }

    @Test func startVariantFollowsTheEstimate() async throws {
        try await offPool {
            let server = try HTTPFileServer.hls(directory: try Fixtures.path("hls3"))
            // No change after the start: up needs more segments than the clip has.
            for (estimate, width) in [(100_000, 256), (400_000, 288), (10_000_000, 320)] {
                let reader = try FrameReader(input: server.url("master.m3u8"),
                                             demuxerOptions: Self.options(AdaptiveOptions(initialBandwidth: estimate, upSegments: 99)))
                #expect(reader.demuxer.variants.map(\.height) == [192, 216, 240])
                #expect(reader.demuxer.currentVariant?.width == width)
                let shown = try Self.read(reader)
                #expect(shown.map(\.code) == Array(0..<150))
                #expect(Set(shown.map(\.width)) == [width])
                #expect(reader.demuxer.variantSwitches.count == 1)
            }
        }
    }

    @Test func throttlingForcesDownThenUpWithEveryFrameOnce() async throws {
        try await offPool {
            // 60 kB/s (480 kb/s) carries 288x216 (330 kb/s) but not 320x240 (660 kb/s). The segment
            // is finished (no abandoning), and up needs no buffer (the clip is shorter than 8 s).
            let (server, reader) = try Self.throttled("hls3", "/v2/", rate: 60000,
                                                      AdaptiveOptions(initialBandwidth: 10_000_000, upSegments: 1, minBufferForUp: 0, abandonSegments: false))
            #expect(reader.demuxer.currentVariant?.height == 240)
            var lifted = false
            let shown = try Self.read(reader) { reader in
                if !lifted, let v = reader.demuxer.currentVariant, v.height < 240 {
                    try server.control("throttle?prefix=/v2/&rate=0")
                    lifted = true
                }
            }
            #expect(shown.map(\.code) == Array(0..<150), "frames: \(shown.map(\.code))")
            let switches = reader.demuxer.variantSwitches
            #expect(switches.map(\.to.height) == [240, 216, 240], "\(switches)")
            // Each change lands on a keyframe (a multiple of 30), where the picture size changes.
            for i in shown.indices.dropFirst() where shown[i].width != shown[i - 1].width {
                #expect(shown[i].code % 30 == 0, "size changed at frame \(shown[i].code)")
            }
            #expect(Set(shown.map(\.width)) == [288, 320])
            if switches.count == 3 {
                #expect(switches[1].bandwidth < 660_000 && switches[1].bandwidth > 330_000)
                #expect(switches[2].bandwidth > 1.3 * 660_000)
                #expect(switches[1].pts != nil && switches[2].pts! > switches[1].pts!)
            }
        }
    }

    @Test func twoVariantsDownWhenTheTopIsSlow() async throws {
        try await offPool {
            let (server, reader) = try Self.throttled("hls2", "/v1/", rate: 40000,
                                                      AdaptiveOptions(initialBandwidth: 10_000_000, upSegments: 99, abandonSegments: false))
            let shown = try withExtendedLifetime(server) { try Self.read(reader) }
            #expect(shown.map(\.code) == Array(0..<150))
            #expect(reader.demuxer.variantSwitches.map(\.to.width) == [320, 256])
            #expect(shown.first?.width == 320 && shown.last?.width == 256)
        }
    }

    @Test func seekAfterAChangeLandsOnAKeyframeOfTheCurrentVariant() async throws {
        try await offPool {
            let server = try HTTPFileServer.hls(directory: try Fixtures.path("hls3"))
            // From the lowest variant up, one step a segment on loopback's throughput.
            let reader = try FrameReader(input: server.url("master.m3u8"),
                                         demuxerOptions: Self.options(AdaptiveOptions(initialBandwidth: 100_000, upSegments: 1, minBufferForUp: 0)))
            let frame = VideoFrame()
            var pts: [Int: Int64] = [:]
            for _ in 0..<100 {
                #expect(try reader.next(into: frame))
                try frame.makeCPUResident()
                pts[frameCode(frame)] = frame.pts
            }
            #expect(reader.demuxer.variantSwitches.count > 1, "\(reader.demuxer.variantSwitches)")
            try reader.seek(toTimestamp: try #require(pts[45]), position: nil)
            let after = try Self.read(reader)
            #expect(after.map(\.code) == Array(30..<150))
        }
    }

    @Test func capsKeepTallerAndCostlierVariantsOut() async throws {
        try await offPool {
            let server = try HTTPFileServer.hls(directory: try Fixtures.path("hls3"))
            for (caps, widths) in [(AdaptiveOptions(initialBandwidth: 10_000_000, maxHeight: 216, upSegments: 1), Set([288])),
                                   (AdaptiveOptions(initialBandwidth: 10_000_000, maxBitrate: 200_000, upSegments: 1), Set([256]))] {
                let reader = try FrameReader(input: server.url("master.m3u8"), demuxerOptions: Self.options(caps))
                let shown = try Self.read(reader)
                #expect(shown.map(\.code) == Array(0..<150))
                #expect(Set(shown.map(\.width)) == widths)
            }
        }
    }

    @Test func liveStartsAtTheEdgeAndFollowsTheWindow() async throws {
        try await offPool {
            let server = try HTTPFileServer.hls(directory: try Fixtures.path("hls2"), options: ["--live", "1", "--window", "3"])
            let reader = try FrameReader(input: server.url("master.m3u8"),
                                         demuxerOptions: Self.options(AdaptiveOptions(initialBandwidth: 100_000, upSegments: 99, liveStartIndex: -1)))
            let shown = try Self.read(reader)
            let first = try #require(shown.first?.code)
            // The newest segment of the window when it opened (segment 2 or later), read on to the end.
            #expect(first >= 60 && first % 30 == 0, "first frame \(first)")
            #expect(shown.map(\.code) == Array(first..<150))
        }
    }

    @Test func liveChangesVariantWithEveryFrameOnce() async throws {
        try await offPool {
            // A window of 4 from the start (the clip's 5 segments: none leaves the window while it
            // plays); 70 kB/s (560 kb/s) is below 320x240's 660 kb/s but keeps up with the clock.
            let server = try HTTPFileServer.hls(directory: try Fixtures.path("hls2"), options: ["--live", "1", "--window", "4"])
            try server.control("throttle?prefix=/v1/&rate=70000")
            let reader = try FrameReader(input: server.url("master.m3u8"),
                                         demuxerOptions: Self.options(AdaptiveOptions(initialBandwidth: 10_000_000, upSegments: 99, liveStartIndex: -2,
                                                                                      abandonSegments: false)))
            let shown = try Self.read(reader)
            #expect(reader.demuxer.variantSwitches.map(\.to.width) == [320, 256])
            let first = try #require(shown.first?.code)
            #expect(shown.map(\.code) == Array(first..<150), "\(shown.map(\.code))")
            #expect(shown.first?.width == 320 && shown.last?.width == 256)
        }
    }

    @Test("a live playlist that stops updating: the player says buffering while its read waits, then the timeout is an error")
    func frozenLivePlaylistIsBufferingThenAnError() async throws {
        try await offPool {
            let server = try HTTPFileServer.hls(directory: try Fixtures.path("hls2"), options: ["--live", "1", "--window", "2"])
            try server.control("freeze")
            var configuration = PlayerConfiguration()
            configuration.demuxer = Self.options(AdaptiveOptions(initialBandwidth: 100_000, upSegments: 99, liveStartIndex: -2), timeout: 3)
            var events: [PlayerEvent] = []
            let engine = PlayerEngine(display: LiveRecordingDisplay(), clock: MonotonicClock(), configuration: configuration) { events.append($0) }
            var stateInsideRead: PlayerState?
            engine.onBufferingInsideRead = { stateInsideRead = engine.state }
            try engine.load([PlaylistItem(source: server.url("master.m3u8"))], autoplay: true)
            let deadline = Date().addingTimeInterval(15)
            while Date() < deadline, !events.contains(where: { if case .error = $0 { true } else { false } }) { engine.tick() }
            let buffering = try #require(events.firstIndex { if case .buffering(true, _) = $0 { true } else { false } }, "\(events)")
            let error = try #require(events.firstIndex { if case .error = $0 { true } else { false } }, "\(events)")
            #expect(buffering < error)
            // Said from inside the read, while it still waited: the loop's owner could publish it.
            #expect(stateInsideRead == .buffering)
            if case .buffering(_, let reason) = events[buffering] { #expect(reason?.hasPrefix("no data from \(server.url("master.m3u8")) for ") == true, "\(reason ?? "")") }
            if case .error(let message, _, _) = events[error] { #expect(message.contains("no answer within 3 s"), "\(message)") }
        }
    }

    @Test func frozenLivePlaylistTimesOut() async throws {
        try await offPool {
            let server = try HTTPFileServer.hls(directory: try Fixtures.path("hls2"), options: ["--live", "1", "--window", "2"])
            try server.control("freeze")
            let reader = try FrameReader(input: server.url("master.m3u8"),
                                         demuxerOptions: Self.options(AdaptiveOptions(initialBandwidth: 100_000, upSegments: 99, liveStartIndex: -2), timeout: 3))
            var codes: [Int] = []
            let frame = VideoFrame()
            #expect {
                while try reader.next(into: frame) {
                    try frame.makeCPUResident()
                    codes.append(frameCode(frame))
                }
            } throws: { error in
                guard case MediaError.timedOut = error else { return false }
                return true
            }
            // Frames of the two segments listed were shown in order (the decoder still held the
            // last few when the read gave up), then nothing more came.
            #expect(codes == Array(0..<codes.count) && (30...60).contains(codes.count), "\(codes)")
        }
    }
}
