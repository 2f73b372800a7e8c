import Foundation
import ScanoutDisplay
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ScanoutPlayer
import ScanoutTestSupport
import Testing

/// A display that records the frame number of every frame shown, on the real clock.
final class LiveRecordingDisplay: Display {
    var codes: [Int] = []
    var vblankSource: (any VBlankSource)?
    var description: String { "recording" }
    func present(_ frame: VideoFrame, orientation: Orientation) throws { codes.append(frameCode(frame)) }
    func present(_ frame: VideoFrame, layout: FrameLayout) throws { codes.append(frameCode(frame)) }
}

/// Tuning to a live channel that is already sending: UDP on loopback, counter_open_long.ts
/// (open GOP, a keyframe every 100 frames) sent in real time from its start, joined mid-GOP.
@Suite("Tuning to a live channel mid-stream", .serialized)
struct LiveZapTests {
    @Test("the first frame shown is the channel's next keyframe, then every frame follows, none dropped; firstFrame says how long it took")
    func joinsAtKeyframe() async throws { try await offPool { try Self.joinsAtKeyframeBlocking() } }

    static func joinsAtKeyframeBlocking() throws {
        let clip = try Fixtures.path("counter_open_long.ts")
        let index = try FrameIndex.build(input: clip)
        let keyframeNumbers = Set(index.keyframes.compactMap { k in index.timestamps.sorted().firstIndex(of: k.pts) })
        let port = try freeUDPLoopbackPort()
        let scratch = try Scratch()
        let started = scratch.path("started")
        let sender = try BackgroundProcess("python3", [Fixtures.packageRoot.appendingPathComponent("Tests/Fixtures/ts_sender.py").path,
                                                      clip, "127.0.0.1", String(port), "--seconds", String(230.0 / 30), "--started", started])
        // Joined about 20 frames in: the keyframe at 0 is gone, the next is frame 100. Counted
        // from the sender's first packet, not its launch (Python starts slowly on a loaded machine).
        let launch = Date()
        while !FileManager.default.fileExists(atPath: started) && Date().timeIntervalSince(launch) < 10 { usleep(10_000) }
        usleep(700_000)
        let display = LiveRecordingDisplay()
        var events: [PlayerEvent] = []
        let engine = PlayerEngine(display: display, clock: MonotonicClock(), configuration: PlayerConfiguration()) { events.append($0) }
        try engine.load([PlaylistItem(source: "udp://127.0.0.1:\(port)")], autoplay: true)
        let deadline = Date().addingTimeInterval(6)
        while display.codes.count < 40 && Date() < deadline { engine.tick() }
        withExtendedLifetime(sender) {}

        let codes = display.codes
        #expect(codes.count >= 40, "\(codes)")
        let first = try #require(codes.first)
        #expect(first > 0 && keyframeNumbers.contains(first), "first frame \(first); keyframes \(keyframeNumbers.sorted())")
        #expect(codes == Array(first..<(first + codes.count)), "\(codes)")
        let stats = engine.snapshot()
        #expect(stats.framesDropped == 0)
        let shown = events.compactMap { e -> (Double?, PreparationStages)? in
            if case .firstFrame(0, _, let since, let stages) = e { return (since, stages) } else { return nil }
        }
        #expect(shown.count == 1)
        let (since, stages) = try #require(shown.first)
        // The wait for the keyframe is in the probe; the whole is at least the parts.
        #expect(stages.probe > 0 && stages.firstDecode > 0)
        #expect((since ?? 0) >= stages.open + stages.probe + stages.decoder + stages.firstDecode)
    }
}
