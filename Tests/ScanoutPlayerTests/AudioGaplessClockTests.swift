import Foundation
import ScanoutMedia
import ScanoutTestSupport
import Testing

/// A gapless move to the next item queues its samples behind the ones playing. Its clock answers
/// before its first sample is written: the time of that sample less the wait for the samples
/// before it, so that its picture follows its sound from its first frame, and the two items'
/// clocks make one timeline.
@Suite(.serialized, .timeLimit(.minutes(1))) struct AudioGaplessClockTests {
    @Test func theNextItemsClockContinuesTheOneHeard() throws {
        let scratch = try Scratch()
        let format = AudioFormat(sampleRate: 48000, channels: 2)
        let device = try RealTimeFIFODevice(directory: scratch.url.path, format: format)
        let output = try AudioOutput(device: device.device, format: format)
        defer {
            output.flush()
            output.close()
        }
        let silence = { (seconds: Double) in [Int16](repeating: 0, count: Int(seconds * 48000) * 2) }
        // Item 1: 1.2 s from stream time 10. Item 2: 0.5 s from stream time 0.25.
        for k in 0..<6 { #expect(output.enqueue(AudioChunk(samples: silence(0.2), start: 10 + 0.2 * Double(k), epoch: 1))) }
        var t = monotonicNanoseconds()
        var heard: Double?
        for _ in 0..<400 {
            t = monotonicNanoseconds()
            heard = output.streamTime(at: t, epoch: 1)
            if heard != nil { break }
            usleep(2_000)
        }
        let h1 = try #require(heard, "item 1 is heard")
        #expect(output.streamTime(at: t, epoch: 2) == nil, "nothing of item 2 is queued yet")
        #expect(output.enqueue(AudioChunk(samples: silence(0.5), start: 0.25, epoch: 2)))
        let t1 = monotonicNanoseconds()
        let h1Now = try #require(output.streamTime(at: t1, epoch: 1))
        let next = try #require(output.streamTime(at: t1, epoch: 2), "item 2 has a clock once queued")
        // Item 1 ends at 11.2; item 2's first sample, 0.25, is heard then.
        #expect(abs((0.25 - next) - (11.2 - h1Now)) < 0.005, "item 2 at \(next) while item 1 is at \(h1Now) (\(h1) before)")
        // Once item 2 plays, its clock is where the prediction put it (the device paced in real
        // time; a machine too loaded to feed it runs dry, and then the sound is late).
        for _ in 0..<400 where output.counts.framesPlayed < Int(1.3 * 48000) { usleep(5_000) }
        let t2 = monotonicNanoseconds()
        let later = try #require(output.streamTime(at: t2, epoch: 2))
        let predicted = next + Double(t2 - t1) / 1e9
        #expect(output.counts.underruns > 0 || abs(later - predicted) < 0.03, "heard \(later), predicted \(predicted)")
        #expect(output.streamTime(at: t2, epoch: 1) == nil, "item 1 is over")
    }
}
