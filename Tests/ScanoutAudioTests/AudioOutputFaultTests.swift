import Foundation
import ScanoutAudio
import ScanoutCore
import ScanoutTesting
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What the output does when the device fails, on a fake sink in virtual time: an underrun or a
/// suspend is recovered and the sound goes on, sample for sample; a device that is gone ends the
/// output, which says why and stops answering.
@Suite(.timeLimit(.minutes(1))) struct AudioOutputFaultTests {
    @Test func aDeviceThatRanDryIsRecoveredAndTheSoundGoesOn() throws {
        let rig = FakeOutput()
        defer { rig.close() }
        let first = ramp(frames: 9600), second = ramp(frames: 9600, from: 9600)
        #expect(rig.output.enqueueAll(chunks(first, frames: 4800, start: 0)))
        #expect(rig.run { rig.output.counts.framesPlayed == 9600 })
        // Nothing more comes for half a second: the device plays what it holds and runs dry.
        rig.clock.advance(by: .nanoseconds(500_000_000))
        #expect(rig.sink.counts.underruns == 1 && rig.sink.delay() == 0)
        #expect(rig.output.enqueueAll(chunks(second, frames: 4800, start: 0.2)))
        #expect(rig.run { rig.output.counts.framesPlayed == 19200 })
        #expect(rig.output.counts.underruns == 1 && rig.sink.counts.recoveries == 1)
        #expect(rig.output.loss == nil)
        // Every sample once, in order: the write the underrun refused was written again.
        #expect(firstDifference(rig.sink.samples, first + second) == nil)
        let heard = try #require(rig.heard())
        #expect(heard >= 0.2 && heard <= 0.4, "\(heard)")
    }

    @Test(arguments: [EPIPE, ESTRPIPE])
    func anUnderrunOrASuspendIsRecovered(errno: Int32) throws {
        let rig = FakeOutput()
        defer { rig.close() }
        rig.sink.failNextWrite(with: errno)
        let sound = ramp(frames: 24000)
        #expect(rig.output.enqueueAll(chunks(sound, frames: 4800, start: 0)))
        #expect(rig.run { rig.output.counts.framesPlayed == 24000 })
        #expect(rig.output.counts.underruns == 1 && rig.sink.counts.recoveries == 1)
        #expect(rig.output.loss == nil)
        #expect(firstDifference(rig.sink.samples, sound) == nil)
    }

    @Test func aDeviceUnpluggedMidPlayIsLost() throws {
        let rig = FakeOutput()
        defer { rig.close() }
        #expect(rig.output.enqueueAll(chunks(ramp(frames: 48000), frames: 4800, start: 0)))
        #expect(rig.run { rig.sink.framesHeard >= 14400 })
        #expect(rig.heard() != nil)
        rig.sink.unplug()
        #expect(rig.run { rig.output.loss != nil })
        #expect(rig.output.loss == AudioLoss(device: "fake", reason: "No such device"))
        #expect(rig.output.loss?.description == "audio device fake lost: No such device; video goes on with its own clock")
        // Lost for good: no clock, nothing queued, nothing taken, the play-out answers at once.
        #expect(rig.heard() == nil)
        #expect(rig.output.queuedSeconds == 0)
        #expect(!rig.output.enqueue(AudioChunk(samples: ramp(frames: 480), start: 2)))
        #expect(rig.output.waitUntilHeard(timeout: 5))
        #expect(rig.output.counts.underruns == 0 && rig.sink.counts.recoveries == 0)
    }

    /// The fault plan's `audio-lost@N`: every write after N good ones fails, as a device that
    /// went away would.
    @Test func theFaultPlansLossComesAfterItsWrites() throws {
        let rig = FakeOutput(failWritesAfter: 5)
        defer { rig.close() }
        // The loss may come before the last chunks are queued: those are refused.
        _ = rig.output.enqueueAll(chunks(ramp(frames: 48000), frames: 4800, start: 0))
        #expect(rig.run { rig.output.loss != nil })
        #expect(rig.output.loss == AudioLoss(device: "fake", reason: "Input/output error"))
        // Five periods of 10 ms reached the device, then nothing.
        #expect(rig.output.counts.framesPlayed == 5 * rig.sink.periodFrames)
        #expect(rig.sink.framesWritten == 5 * rig.sink.periodFrames)
    }

    /// A full queue drops the chunk that does not fit, counts it, and keeps the ones queued.
    @Test func aChunkThatDoesNotFitIsDroppedAndCounted() throws {
        let clock = ManualClock()
        let sink = FakeAudioSink(format: AudioFormat(sampleRate: 48000, channels: 2), clock: clock)
        let output = AudioOutput(sink: sink, maxQueuedSeconds: 0.5, now: { clock.now() })
        defer {
            sink.unplug()
            output.close()
        }
        // The first 0.1 s fills the device and the output thread waits with the next in hand;
        // the queue then holds 0.5 s at most.
        let all = chunks(ramp(frames: 48000), frames: 4800, start: 0)
        #expect(output.enqueue(all[0]) && output.enqueue(all[1]))
        #expect(sink.run { sink.isWaitingForClock && output.queuedSeconds == 0 })
        let taken = all[2...].map { output.enqueue($0) }
        #expect(taken == [true, true, true, true, true, false, false, false])
        #expect(output.counts.dropped == 3)
        #expect(abs(output.queuedSeconds - 0.5) < 1e-9)
    }
}
