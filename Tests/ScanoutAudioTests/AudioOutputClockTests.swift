import Foundation
import ScanoutAudio
import ScanoutCore
import ScanoutTesting
import Testing

/// The output's clock on a fake sink, in virtual time: the stream time of the sample the
/// listener hears now (the last written less what the device holds), exact to the frame.
@Suite(.timeLimit(.minutes(1))) struct AudioOutputClockTests {
    /// One frame at 48 kHz, and a little for the sums' rounding.
    static let frame = 1.0 / 48000 + 1e-9

    @Test func theClockIsTheSampleHeardNow() throws {
        let rig = FakeOutput()
        defer { rig.close() }
        #expect(rig.heard() == nil, "nothing written yet")
        #expect(rig.output.enqueueAll(chunks(ramp(frames: 48000), frames: 4800, start: 5)))
        #expect(rig.run { rig.sink.framesHeard >= 12000 })
        for _ in 0..<20 {
            #expect(rig.settle())
            let heard = try #require(rig.heard())
            #expect(abs(heard - (5 + Double(rig.sink.framesHeard) / 48000)) <= Self.frame, "heard \(heard) after \(rig.sink.framesHeard) frames")
            // Between two writes the clock runs on with the clock it is read at.
            let later = try #require(rig.output.streamTime(at: rig.clock.now() + .nanoseconds(3_000_000), epoch: 0))
            #expect(abs(later - heard - 0.003) < 1e-9)
            #expect(rig.output.streamTime(at: rig.clock.now(), epoch: 1) == nil, "no other item plays")
            rig.clock.advance(by: .nanoseconds(7_000_000))
        }
        // The device took all of every period the output counts, and part of the one it waits on.
        let lag = rig.sink.framesWritten - rig.output.counts.framesPlayed
        #expect(lag >= 0 && lag < rig.sink.periodFrames)
        #expect(rig.output.counts.underruns == 0 && rig.sink.counts.underruns == 0)
    }

    @Test func pastTheLastSampleWrittenTheClockSaysNothing() throws {
        let rig = FakeOutput()
        defer { rig.close() }
        // 0.25 s: more than the device holds (0.1 s), so the output waits for it once.
        #expect(rig.output.enqueueAll(chunks(ramp(frames: 12000), frames: 2400, start: 0)))
        #expect(rig.run { rig.output.counts.framesPlayed == 12000 })
        let t = rig.clock.now()
        let heard = try #require(rig.output.streamTime(at: t, epoch: 0))
        #expect(abs(heard - Double(rig.sink.framesHeard) / 48000) <= Self.frame)
        // Written to 0.25 s; the clock runs on for two periods (20 ms) past it, then stops.
        let toEnd = Duration.nanoseconds(UInt64((0.25 - heard) * 1e9))
        #expect(rig.output.streamTime(at: t + toEnd + .nanoseconds(15_000_000), epoch: 0) != nil)
        #expect(rig.output.streamTime(at: t + toEnd + .nanoseconds(25_000_000), epoch: 0) == nil)
    }

    @Test func aFlushSilencesTheClockUntilTheNextChunkIsWritten() throws {
        let rig = FakeOutput()
        defer { rig.close() }
        #expect(rig.output.enqueueAll(chunks(ramp(frames: 48000), frames: 4800, start: 0)))
        #expect(rig.run { rig.sink.framesHeard >= 9600 })
        rig.output.flush()
        #expect(rig.heard() == nil)
        #expect(rig.run { rig.sink.counts.discards == 1 })
        #expect(rig.sink.delay() == 0, "what the device held is thrown away")
        #expect(rig.output.queuedSeconds == 0)
        // The next item, at stream time 30: its clock from its first write on.
        #expect(rig.output.enqueueAll(chunks(ramp(frames: 9600), frames: 4800, start: 30)))
        #expect(rig.run { rig.heard() != nil })
        #expect(rig.settle())
        let heard = try #require(rig.heard())
        #expect(heard > 30 - 1e-6 && heard < 30.1, "\(heard)")
    }

    /// A rate change loses no sound: what the stretcher holds for the old rate is played before
    /// the new rate's first sample, and what it holds at the item's end too. The device gets each
    /// part's frames over its rate, to the frame, and the play-out (`waitUntilHeard`) ends once
    /// the device played everything.
    @Test func aRateChangeLosesNoSound() throws {
        let rig = FakeOutput()
        defer { rig.close() }
        let tone = (0..<96000).flatMap { n -> [Int16] in
            let v = Int16(12000 * sin(2 * Double.pi * 440 * Double(n) / 48000))
            return [v, v]
        }
        let split = 40 * 1024
        for c in chunks(Array(tone[..<(2 * split)]), frames: 1024, start: 0, rate: 0.5)
            + chunks(Array(tone[(2 * split)...]), frames: 1024, start: Double(split) / 48000, rate: 2) {
            #expect(rig.output.enqueue(c))
        }
        #expect(rig.output.enqueue(.end()))
        let heard = Heard()
        let waiter = Thread { heard.set(rig.output.waitUntilHeard(timeout: 20)) }
        waiter.start()
        #expect(rig.run { heard.value != nil })
        #expect(heard.value == true)
        #expect(rig.output.counts.framesPlayed == 2 * split + (96000 - split) / 2)
        #expect(rig.sink.framesHeard == rig.sink.framesWritten && rig.sink.counts.drains == 1)
        #expect(rig.output.counts.underruns == 0)
    }

    /// The output is idle only while it waits for the loop thread: not while it has chunks to
    /// write into a full device, nor with a pause, a resume or a flush still to handle; it is
    /// again once all is written (the device still playing it), paused, resumed, flushed, or
    /// closed.
    @Test func theOutputIsIdleOnlyWhileItWaitsForTheLoopThread() throws {
        let rig = FakeOutput()
        defer { rig.close() }
        #expect(rig.run { rig.output.isIdle }, "nothing queued")
        // 0.5 s: more than the device holds (0.1 s) while the clock stands still.
        #expect(rig.output.enqueueAll(chunks(ramp(frames: 24000), frames: 2400, start: 0)))
        #expect(!rig.output.isIdle)
        #expect(rig.settle())
        #expect(!rig.output.isIdle, "the device is full: the output waits for it")
        #expect(rig.run { rig.output.counts.framesPlayed == 24000 })
        #expect(rig.run { rig.output.isIdle })
        #expect((rig.sink.delay() ?? 0) > 0, "written, not all heard yet")
        rig.output.setPaused(true)
        #expect(rig.run { rig.output.isIdle })
        #expect(rig.sink.counts.pauses == 1, "idle once the device is paused")
        rig.output.setPaused(false)
        #expect(rig.run { rig.output.isIdle })
        #expect(rig.sink.counts.resumes == 1, "idle once the device plays again")
        rig.output.flush()
        #expect(rig.run { rig.output.isIdle })
        #expect(rig.sink.counts.discards == 1, "idle once the device dropped what it held")
        rig.close()
        #expect(rig.output.isIdle)
    }

    /// What a thread waiting on the output said, once it said it.
    final class Heard: @unchecked Sendable {
        // Under `lock`.
        private let lock = NSLock()
        private var said: Bool?
        func set(_ v: Bool) { lock.withLock { said = v } }
        var value: Bool? { lock.withLock { said } }
    }
}
