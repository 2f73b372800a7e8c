import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ScanoutTestSupport
import Testing

/// A gapless move to the next item queues its samples behind the ones playing. Its clock answers
/// before its first sample is written: the time of that sample less the wait for the samples
/// before it, so that its picture follows its sound from its first frame, and the two items'
/// clocks make one timeline.
@Suite(.serialized, .timeLimit(.minutes(1))) struct AudioGaplessClockTests {
    @Test func theNextItemsClockContinuesTheOneHeard() throws {
        let rig = try Rig()
        defer { rig.close() }
        let output = rig.output
        let silence = { (seconds: Double) in [Int16](repeating: 0, count: Int(seconds * 48000) * 2) }
        // Item 1: 1.2 s from stream time 10. Item 2: 0.5 s from stream time 0.25.
        for k in 0..<6 { #expect(output.enqueue(AudioChunk(samples: silence(0.2), start: 10 + 0.2 * Double(k), epoch: 1))) }
        let (t, h1) = try #require(Self.heard(output, epoch: 1, tries: 400), "item 1 is heard")
        #expect(output.streamTime(at: t, epoch: 2) == nil, "nothing of item 2 is queued yet")
        #expect(output.enqueue(AudioChunk(samples: silence(0.5), start: 0.25, epoch: 2)))
        // Both clocks read at the same instant, with no write between the two readings (a write
        // moves the clock by what its period and the time since the last one differ, and a
        // loaded machine can stop this thread between the two); the clock may also say nothing
        // for a moment when the output thread is that late.
        var pair: (item1: Double, item2: Double)?
        for _ in 0..<500 {
            let writes = output.counts.framesPlayed
            let t1 = monotonicNanoseconds()
            if let a = output.streamTime(at: t1, epoch: 1), let b = output.streamTime(at: t1, epoch: 2),
               output.counts.framesPlayed == writes {
                pair = (a, b)
                break
            }
            usleep(1_000)
        }
        let (h1Now, next) = try #require(pair, "item 2 has a clock once queued")
        // Item 1 ends at 11.2; item 2's first sample, 0.25, is heard then.
        #expect(abs((0.25 - next) - (11.2 - h1Now)) < 0.001, "item 2 at \(next) while item 1 is at \(h1Now) (\(h1) before)")
        // Once item 2 plays, its clock is the one its writes set (how close that comes to the
        // prediction depends on this thread and the device's reader keeping time, which a
        // loaded machine does not promise: not checked).
        for _ in 0..<400 where output.counts.framesPlayed < Int(1.3 * 48000) { usleep(5_000) }
        let (t2, heard2) = try #require(Self.heard(output, epoch: 2, tries: 100))
        #expect(heard2 > 0.25 && heard2 < 0.75, "item 2 is heard at \(heard2)")
        #expect(output.streamTime(at: t2, epoch: 1) == nil, "item 1 is over")
    }

    /// At 1.5×, stretched by the output thread: item 2's clock continues item 1's also while
    /// its first samples are in the stretcher with nothing out yet, or being written, and none
    /// of it is queued any more; and item 1's end, what its stretcher held, is counted before it.
    @Test func theNextItemsClockContinuesTheOneHeardAtARate() throws {
        let rig = try Rig()
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
        _ = try #require(Self.heard(output, epoch: 1, tries: 400), "item 1 is heard")
        #expect(output.enqueue(AudioChunk(samples: Array(chunk.prefix(128)), start: 0.25, epoch: 2, rate: 1.5)))
        // Both clocks at one instant with no write between, while item 1 is heard: queued, and
        // then taken by the output thread.
        var pairs: [(queued: Bool, item1: Double, item2: Double)] = []
        for _ in 0..<1500 {
            let writes = output.counts.framesPlayed
            let queued = output.queuedSeconds > 0
            let t = monotonicNanoseconds()
            let a = output.streamTime(at: t, epoch: 1), b = output.streamTime(at: t, epoch: 2)
            if let a, let b, output.counts.framesPlayed == writes { pairs.append((queued, a, b)) }
            usleep(500)
        }
        #expect(pairs.contains { $0.queued } && pairs.contains { !$0.queued }, "\(pairs.count) readings")
        // Played seconds to item 1's end and to item 2's first sample are the same.
        for p in pairs {
            #expect(abs((0.25 - p.item2) - (end1 - p.item1)) < 0.002, "item 2 at \(p.item2) while item 1 is at \(p.item1) (queued: \(p.queued))")
        }
    }

    /// An output on a device paced in real time (48 kHz stereo).
    private struct Rig {
        let scratch: Scratch
        let device: RealTimeFIFODevice
        let output: AudioOutput
        init() throws {
            let format = AudioFormat(sampleRate: 48000, channels: 2)
            scratch = try Scratch()
            device = try RealTimeFIFODevice(directory: scratch.url.path, format: format)
            output = try AudioOutput(device: device.device, format: format)
        }
        func close() {
            output.flush()
            output.close()
        }
    }

    /// The clock of item `epoch`, asked every 2 ms until it answers (`tries` times at most): when
    /// it was asked, and what it said.
    private static func heard(_ output: AudioOutput, epoch: Int, tries: Int) -> (at: UInt64, time: Double)? {
        for _ in 0..<tries {
            let t = monotonicNanoseconds()
            if let time = output.streamTime(at: t, epoch: epoch) { return (t, time) }
            usleep(2_000)
        }
        return nil
    }
}
