import ScanoutDecode
import ScanoutTestSupport
import Testing

@Suite("picture samples: a zone's luma at a grid of points")
struct PictureSampleTests {
    func frames(_ name: String, count: Int) throws -> [PictureSample] {
        try Fixtures.frames(name, count: count).map { try #require($0.pictureSample()) }
    }

    @Test("a black clip is black (limited range, every point at 16 or so); the counter clip is not, and its frames differ from one to the next")
    func blackAndMoving() throws {
        let black = try frames("black.mp4", count: 3)
        #expect(black.count == 3 && black.allSatisfy { $0.luma.count == 16 * 9 && $0.isBlack && !$0.fullRange })
        #expect(black[0].looksLike(black[2]))
        #expect(abs(black[0].mean - 16) <= 1)
        let counter = try frames("counter.mp4", count: 3)
        #expect(counter.allSatisfy { !$0.isBlack && $0.mean > 40 })
        #expect(!counter[0].looksLike(counter[1]) && !counter[1].looksLike(counter[2]))
        #expect(counter[0].looksLike(counter[0]))
    }

    @Test("full range: black is at most 20; one bright point is not black")
    func thresholds() {
        #expect(PictureSample(luma: [0, 20, 5], fullRange: true).isBlack)
        #expect(!PictureSample(luma: [0, 21, 5], fullRange: true).isBlack)
        #expect(PictureSample(luma: [16, 32, 17], fullRange: false).isBlack)
        #expect(!PictureSample(luma: [16, 200, 17], fullRange: false).isBlack)
        #expect(!PictureSample(luma: [], fullRange: false).isBlack)
        #expect(PictureSample(luma: [100, 50], fullRange: false).looksLike(PictureSample(luma: [102, 48], fullRange: false)))
        #expect(!PictureSample(luma: [100, 50], fullRange: false).looksLike(PictureSample(luma: [103, 50], fullRange: false)))
    }
}
