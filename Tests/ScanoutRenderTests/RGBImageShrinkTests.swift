import ScanoutRender
import Testing

@Suite struct RGBImageShrinkTests {
    @Test("shrunk by a box filter: each pixel the rounded mean of the pixels its area covers; no wider than the source; black rectangles clipped")
    func shrink() {
        // 4x2: left half (0, 10, 20) and (2, 12, 22) ..., right half 100s and 200s.
        let px: [[UInt8]] = [[0, 10, 20], [2, 12, 22], [100, 100, 100], [200, 200, 200],
                             [4, 14, 24], [6, 16, 27], [100, 100, 100], [201, 201, 201]]
        let image = RGBImage(width: 4, height: 2, bytes: px.flatMap { $0 })
        let half = image.shrunk(toWidth: 2)
        #expect(half.width == 2 && half.height == 1)
        #expect(half.bytes == [3, 13, 23, 150, 150, 150])   // (0+2+4+6)/4 = 3, (20+22+24+27)/4 = 23.25 → 23; (100+200+100+201)/4 = 150.25
        #expect(image.shrunk(toWidth: 8) == image)
        let black = image.blackingOut(x: 3, y: -1, width: 5, height: 2)
        // Clipped to the picture: only (3, 0) is in it.
        #expect(Array(black.bytes[9..<12]) == [0, 0, 0] && Array(black.bytes[21..<24]) == [201, 201, 201] && Array(black.bytes[0..<3]) == [0, 10, 20])
        #expect(image.blackedOut.bytes.allSatisfy { $0 == 0 } && image.blackedOut.width == 4)
    }
}
