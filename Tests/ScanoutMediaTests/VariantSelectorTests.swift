import ScanoutMedia
import Testing

/// The variant choice on its own: caps, start, down at once, up with hysteresis.
@Suite struct VariantSelectorTests {
    static let ladder = [HLSVariant(id: 2, bitrate: 660_000, width: 320, height: 240, streamIndex: 2),
                         HLSVariant(id: 0, bitrate: 165_000, width: 256, height: 192, streamIndex: 0),
                         HLSVariant(id: 1, bitrate: 330_000, width: 288, height: 216, streamIndex: 1)]

    @Test func capsAndStart() {
        let all = VariantSelector(variants: Self.ladder, options: AdaptiveOptions())
        #expect(all.ladder.map(\.id) == [0, 1, 2])
        #expect(all.carried(by: 100_000).id == 0)       // nothing fits: the lowest
        #expect(all.carried(by: 400_000).id == 1)
        #expect(all.carried(by: 2_000_000).id == 2)
        #expect(VariantSelector(variants: Self.ladder, options: AdaptiveOptions(maxHeight: 216)).ladder.map(\.id) == [0, 1])
        #expect(VariantSelector(variants: Self.ladder, options: AdaptiveOptions(maxBitrate: 330_000)).ladder.map(\.id) == [0, 1])
        // Caps that allow nothing: the lowest variant still plays.
        #expect(VariantSelector(variants: Self.ladder, options: AdaptiveOptions(maxHeight: 100)).ladder.map(\.id) == [0])
    }

    @Test func downAtOnceUpAfterConsecutiveFastSegments() {
        var selector = VariantSelector(variants: Self.ladder, options: AdaptiveOptions(upFactor: 1.3, upSegments: 2))
        let (v0, v1, v2) = (selector.ladder[0], selector.ladder[1], selector.ladder[2])
        func next(_ current: HLSVariant, _ throughput: Double) -> HLSVariant? { selector.next(current: current, throughput: throughput)?.0 }
        // Below the current bitrate: down at once, to what the throughput carries.
        #expect(next(v2, 200_000) == v0)
        #expect(next(v2, 500_000) == v1)
        // Above the current but not 1.3x the next: stay.
        #expect(next(v1, 800_000) == nil)
        // 1.3x the next for two segments in a row: up one step; a slow one in between restarts the count.
        #expect(next(v1, 900_000) == nil)
        #expect(next(v1, 500_000) == nil)
        #expect(next(v1, 900_000) == nil)
        #expect(next(v1, 900_000) == v2)
        // At the top: nothing higher.
        #expect(next(v2, 10_000_000) == nil)
    }
}
