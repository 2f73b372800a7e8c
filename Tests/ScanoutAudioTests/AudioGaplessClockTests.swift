import Foundation
import ScanoutAudio
import ScanoutCore
import ScanoutTesting
import Testing

/// A gapless move to the next item queues its samples behind the ones playing. Its clock answers
/// before its first sample is written: the time of that sample less the wait for the samples
/// before it, so that its picture follows its sound from its first frame, and the two items'
/// clocks make one timeline. On a fake sink in virtual time: both clocks are read at one instant
/// of the manual clock, with nothing written between.
@Suite(.timeLimit(.minutes(1))) struct AudioGaplessClockTests {
    @Test func theNextItemsClockContinuesTheOneHeard() throws {
        let rig = FakeOutput()
        defer { rig.close() }
        let output = rig.output
        let silence = { (seconds: Double) in [Int16](repeating: 0, count: Int(seconds * 48000) * 2) }
        // Item 1: 1.2 s from stream time 10. Item 2: 0.5 s from stream time 0.25.
        for k in 0..<6 { #expect(output.enqueue(AudioChunk(samples: silence(0.2), start: 10 + 0.2 * Double(k), epoch: 1))) }
        #expect(rig.run { rig.heard(epoch: 1) != nil }, "item 1 is heard")
        #expect(rig.heard(epoch: 2) == nil, "nothing of item 2 is queued yet")
        #expect(output.enqueue(AudioChunk(samples: silence(0.5), start: 0.25, epoch: 2)))
        for _ in 0..<3 {
            #expect(rig.settle())
            let h1 = try #require(rig.heard(epoch: 1))
            let next = try #require(rig.heard(epoch: 2), "item 2 has a clock once queued")
            // Item 1 ends at 11.2; item 2's first sample, 0.25, is heard then.
            #expect(abs((0.25 - next) - (11.2 - h1)) < 1e-6, "item 2 at \(next) while item 1 is at \(h1)")
            rig.clock.advance(by: .nanoseconds(50_000_000))
        }
        // Once item 2 plays, its clock is the one its writes set, and item 1's is over.
        #expect(rig.run { rig.sink.framesHeard >= Int(1.3 * 48000) })
        #expect(rig.settle())
        let heard2 = try #require(rig.heard(epoch: 2))
        #expect(heard2 > 0.25 && heard2 < 0.75, "item 2 is heard at \(heard2)")
        #expect(abs(heard2 - (0.25 + Double(rig.sink.framesHeard - 57600) / 48000)) < 1e-6)
        #expect(rig.heard(epoch: 1) == nil, "item 1 is over")
    }

    /// At 1.5×, stretched by the output thread: item 2's clock continues item 1's also while
    /// its first samples are in the stretcher with nothing out yet, or being written, and none
    /// of it is queued any more; and item 1's end, what its stretcher held, is counted before it.
    @Test func theNextItemsClockContinuesTheOneHeardAtARate() throws {
        let rig = FakeOutput()
        defer { rig.close() }
        let output = rig.output
        let tone = { (frames: Int) in
            (0..<frames).flatMap { n -> [Int16] in
                let v = Int16(8000 * sin(2 * Double.pi * 440 * Double(n) / 48000))
                return [v, v]
            }
        }
        // Item 1: 1.2 s from stream time 10, then its end. Item 2: 64 frames from 0.25, too few
        // for the stretcher to put anything out.
        let chunk = tone(1024)
        for k in 0..<Int(1.2 * 48000 / 1024) {
            #expect(output.enqueue(AudioChunk(samples: chunk, start: 10 + Double(k * 1024) / 48000, epoch: 1, rate: 1.5)))
        }
        let end1 = 10 + Double(Int(1.2 * 48000 / 1024) * 1024) / 48000
        #expect(output.enqueue(.end(epoch: 1)))
        #expect(rig.run { rig.heard(epoch: 1) != nil }, "item 1 is heard")
        #expect(output.enqueue(AudioChunk(samples: Array(chunk.prefix(128)), start: 0.25, epoch: 2, rate: 1.5)))
        // Both clocks at one instant with nothing written between, while item 1 is heard: item 2
        // queued, and then taken by the output thread; 5 ms of the clock between two readings.
        var pairs: [(queued: Bool, item1: Double, item2: Double)] = []
        for _ in 0..<400 where pairs.filter({ !$0.queued }).count < 5 {
            rig.sink.run(timeout: .seconds(1)) { rig.sink.isWaitingForClock || output.queuedSeconds == 0 }
            // A reading counts when no write came in the middle of it; on a loaded machine the
            // output thread may be writing, so it is taken again (the clock does not move).
            for _ in 0..<50 {
                let writes = output.counts.framesPlayed
                let queued = output.queuedSeconds > 0
                let t = rig.clock.now()
                guard let a = output.streamTime(at: t, epoch: 1), let b = output.streamTime(at: t, epoch: 2) else { break }
                if output.counts.framesPlayed == writes {
                    pairs.append((queued, a, b))
                    break
                }
                usleep(1000)
            }
            rig.clock.advance(by: .nanoseconds(5_000_000))
        }
        #expect(pairs.contains { $0.queued } && pairs.contains { !$0.queued }, "\(pairs.count) readings")
        // Played seconds to item 1's end and to item 2's first sample are the same.
        for p in pairs {
            #expect(abs((0.25 - p.item2) - (end1 - p.item1)) < 0.002, "item 2 at \(p.item2) while item 1 is at \(p.item1) (queued: \(p.queued))")
        }
    }
}
