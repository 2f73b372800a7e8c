import ScanoutCore
import ScanoutDemux
import Testing

/// The variant choice on its own: caps, start, down at once, up with hysteresis and only with
/// enough buffered, and what happens to a segment that comes too slowly.
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

    @Test func noChangeUpWhileTheBufferIsLow() {
        var selector = VariantSelector(variants: Self.ladder, options: AdaptiveOptions(upFactor: 1.3, upSegments: 2, minBufferForUp: 8))
        let (v0, v1) = (selector.ladder[0], selector.ladder[1])
        #expect(selector.next(current: v0, throughput: 1_000_000, buffered: 2) == nil)
        #expect(selector.next(current: v0, throughput: 1_000_000, buffered: 7.9) == nil, "two fast segments, but 7.9 s buffered")
        // The fast segments were counted: up as soon as the buffer holds enough.
        let up = selector.next(current: v0, throughput: 1_000_000, buffered: 8)
        #expect(up?.0 == v1)
        #expect(up?.1.contains("8.0 s buffered") == true, "\(up?.1 ?? "")")
        // Down does not wait for the buffer.
        #expect(selector.next(current: v1, throughput: 200_000, buffered: 0)?.0 == v0)
        // Unknown buffer: no bound.
        var unbounded = VariantSelector(variants: Self.ladder, options: AdaptiveOptions(upFactor: 1.3, upSegments: 1, minBufferForUp: 8))
        #expect(unbounded.next(current: v0, throughput: 1_000_000)?.0 == v1)
    }

    /// An 88 000-byte segment of the 660 kb/s variant (half as long at 330 kb/s, a quarter at 165).
    static func progress(_ bytes: Int, in seconds: Double, of expected: Int? = 88_000) -> SegmentProgress {
        SegmentProgress(url: "http://127.0.0.1/v2/seg2.ts", bytes: bytes, seconds: seconds, expectedBytes: expected)
    }

    @Test func aSegmentThatWouldComeAfterTheBufferRanDryIsAbandoned() {
        let selector = VariantSelector(variants: Self.ladder, options: AdaptiveOptions(starvationMargin: 0.5))
        let (v0, v1, v2) = (selector.ladder[0], selector.ladder[1], selector.ladder[2])
        // 8 000 bytes in 0.2 s: 320 kb/s; the 80 000 left take 2 s.
        let slow = Self.progress(8_000, in: 0.2)
        #expect(selector.duringSegment(current: v2, progress: slow, estimate: nil, buffered: 3) == nil, "2 s fit in 3 s less 0.5")
        // 2 s buffered: late. 330 kb/s's segment (44 000 bytes) comes in 1.1 s, before 1.5 s.
        guard case .abandon(let to, let bandwidth, let reason)? = selector.duringSegment(current: v2, progress: slow, estimate: nil, buffered: 2) else {
            Issue.record("not abandoned")
            return
        }
        #expect(to == v1 && abs(bandwidth - 320_000) < 1)
        #expect(reason.hasPrefix(VariantSwitch.abandonedPrefix) && reason.contains("320 kb/s, below"), "\(reason)")
        // 1 s buffered: no lower segment comes in 0.5 s; the lowest (0.55 s) still beats the 2 s left.
        if case .abandon(let to, _, _)? = selector.duringSegment(current: v2, progress: slow, estimate: nil, buffered: 1) {
            #expect(to == v0)
        } else {
            Issue.record("not abandoned for the lowest")
        }
        // A lower estimate than the segment's own rate makes the lower segments slower to come.
        if case .abandon(let to, let bandwidth, _)? = selector.duringSegment(current: v2, progress: slow, estimate: 200_000, buffered: 2) {
            #expect(to == v0 && bandwidth == 200_000)
        } else {
            Issue.record("not abandoned with the estimate")
        }
    }

    @Test func aLateSegmentIsFinishedWhenAbandoningWouldNotHelp() {
        let selector = VariantSelector(variants: Self.ladder, options: AdaptiveOptions(starvationMargin: 0.5))
        let (v0, v1, v2) = (selector.ladder[0], selector.ladder[1], selector.ladder[2])
        // 80 000 bytes at 480 kb/s; the 8 000 left take 0.13 s, less than any lower segment:
        // finished, then down to what 480 kb/s carries.
        let nearlyDone = Self.progress(80_000, in: 80_000 * 8 / 480_000)
        if case .downAfter(let to, _, let reason)? = selector.duringSegment(current: v2, progress: nearlyDone, estimate: nil, buffered: 0) {
            #expect(to == v1 && reason.contains("480 kb/s, below"), "\(reason)")
        } else {
            Issue.record("no change decided")
        }
        // With abandoning off, a late segment is always finished.
        let keep = VariantSelector(variants: Self.ladder, options: AdaptiveOptions(starvationMargin: 0.5, abandonSegments: false))
        guard case .downAfter(let to, _, let reason)? = keep.duringSegment(current: v2, progress: Self.progress(8_000, in: 0.2), estimate: nil, buffered: 2) else {
            Issue.record("no change decided")
            return
        }
        #expect(to == v0 && !reason.hasPrefix(VariantSwitch.abandonedPrefix))
    }

    @Test func segmentsThatKeepUpOrSayTooLittleAreLeftAlone() {
        let selector = VariantSelector(variants: Self.ladder, options: AdaptiveOptions())
        let (v0, v2) = (selector.ladder[0], selector.ladder[2])
        // Faster than the variant's bitrate (800 kb/s): never abandoned, even with nothing buffered.
        #expect(selector.duringSegment(current: v2, progress: Self.progress(20_000, in: 0.2), estimate: nil, buffered: 0) == nil)
        // Less than 0.2 s measured; no announced length; the lowest variant: nothing to decide.
        #expect(selector.duringSegment(current: v2, progress: Self.progress(4_000, in: 0.1), estimate: nil, buffered: 0) == nil)
        #expect(selector.duringSegment(current: v2, progress: Self.progress(8_000, in: 0.2, of: nil), estimate: nil, buffered: 0) == nil)
        #expect(selector.duringSegment(current: v0, progress: Self.progress(1_000, in: 0.2), estimate: nil, buffered: 0) == nil)
    }
}
