import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutPlayer
import ScanoutTestSupport
import ScanoutTesting
import Testing

@Suite("still images as playlist items: shown for their duration, gapless into and out of video")
struct StillItemTests {
    /// Frame 7 of counter.mp4 as a JPEG in `scratch` (Y'CbCr, so its counter band reads 7 from
    /// the luma plane).
    static func picture(in scratch: Scratch) throws -> String {
        let path = scratch.path("seven.jpg")
        _ = try Proc.ffmpeg(["-i", try Fixtures.path("counter.mp4"), "-vf", "select=eq(n\\,7)", "-frames:v", "1", "-q:v", "2", "-y", path])
        return path
    }

    @Test("an image for 1 s, then a clip: the picture until 1 s, the clip's first frame right after, one timeline")
    func imageThenVideo() throws {
        let scratch = try Scratch()
        let image = try Self.picture(in: scratch), clip = try Fixtures.path("counter.mp4")
        let h = Harness()
        var still = PlaylistItem(source: image)
        still.duration = 1
        try h.engine.load([still, PlaylistItem(source: clip)])
        try h.engine.play()
        h.run { h.engine.state == .ended }
        let pictures = h.display.shown.prefix { $0.code == 7 && $0.pts.map { $0 <= 24 } == true }
        // Every 6 ticks of 1/25 s from 0: 0, 0.24, 0.48, 0.72, 0.96 s.
        #expect(pictures.map(\.pts) == [0, 6, 12, 18, 24])
        let start = try #require(pictures.first).at
        let firstOfClip = try #require(h.display.shown.dropFirst(pictures.count).first)
        #expect(firstOfClip.code == 0)
        // The clip starts when the picture's second ends, within a frame of the clip.
        let gap = (firstOfClip.at - start).secondsValue
        #expect(abs(gap - 1.0) < 1.0 / 30, "the clip started \(gap) s after the picture")
        #expect(h.mainEvents.contains(.prepared(item: 0, source: image, width: 320, height: 240, codec: "mjpeg", duration: 1)))
        #expect(h.states.filter { $0 == .ended }.count == 1)
    }

    @Test("the player's image duration applies to items that name none; a seek lands inside the showing")
    func defaultDurationAndSeek() throws {
        let scratch = try Scratch()
        let image = try Self.picture(in: scratch)
        var configuration = PlayerConfiguration()
        configuration.imageDuration = 3
        let h = Harness(configuration: configuration)
        try h.engine.load([PlaylistItem(source: image)])
        #expect(h.engine.duration == 3)
        try h.engine.play()
        h.run(limit: 50) { h.display.shown.count >= 2 }
        try h.engine.seek(to: 2.5, exact: true)
        #expect(h.display.shown.last?.code == 7)
        #expect(h.display.shown.last?.pts == 60)
        h.run { h.engine.state == .ended }
        let shownAfter = h.display.shown.drop { $0.pts != 60 }.map(\.pts)
        #expect(shownAfter.last == 72)
    }
}
