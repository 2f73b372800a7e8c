import ScanoutAudio
import ScanoutCore
import ScanoutTesting
import Testing

/// A pause keeps what the device holds (`AudioSink.pause`, `snd_pcm_pause`): on a fake sink in
/// virtual time, nothing is heard or written while paused however long it lasts, the ramp paused
/// in the middle and resumed reaches the device whole, every sample once and in order, and the
/// clock says nothing while paused and goes on from where the pause stopped it. A device that
/// cannot pause is dropped instead, and the sound goes on from the sample after the last written.
@Suite(.timeLimit(.minutes(1))) struct AudioPauseTests {
    /// 1 s of ramp, in chunks of 0.1 s.
    static let sound = ramp(frames: 48000)

    @Test func aPauseKeepsTheSamplesTheDeviceHolds() throws {
        let rig = FakeOutput()
        defer { rig.close() }
        #expect(rig.output.enqueueAll(chunks(Self.sound, frames: 4800, start: 0)))
        #expect(rig.run { rig.sink.framesHeard >= 19200 })
        rig.output.setPaused(true)
        // The output thread pauses the device once the period it is writing is in.
        #expect(rig.run { rig.sink.counts.pauses == 1 })
        let (heardAtPause, writtenAtPause) = (rig.sink.framesHeard, rig.output.counts.framesPlayed)
        let held = try #require(rig.sink.delay())
        #expect(held > 0, "the device holds samples at the pause")
        #expect(rig.heard() == nil)
        // Half a second paused: nothing heard, nothing written, what the device holds kept.
        rig.clock.advance(by: .nanoseconds(500_000_000))
        #expect(rig.sink.framesHeard == heardAtPause && rig.output.counts.framesPlayed == writtenAtPause)
        #expect(rig.sink.delay() == held)
        #expect(rig.heard() == nil)
        rig.output.setPaused(false)
        #expect(rig.run { rig.sink.counts.resumes == 1 })
        // The clock goes on from where the pause stopped it, not past the pause.
        let resumed = try #require(rig.heard())
        #expect(abs(resumed - Double(heardAtPause) / 48000) <= 1.0 / 48000 + 1e-9, "heard \(resumed) s after the resume")
        #expect(rig.run { rig.output.counts.framesPlayed == 48000 })
        #expect(firstDifference(rig.sink.samples, Self.sound) == nil)
        #expect(rig.sink.counts.discards == 0 && rig.output.counts.underruns == 0)
    }

    @Test func aDeviceThatCannotPauseIsDroppedAndGoesOnFromTheNextSample() throws {
        let rig = FakeOutput(canPause: false)
        defer { rig.close() }
        #expect(rig.output.enqueueAll(chunks(Self.sound, frames: 4800, start: 0)))
        #expect(rig.run { rig.sink.framesHeard >= 19200 })
        rig.output.setPaused(true)
        #expect(rig.run { rig.sink.counts.discards == 1 })
        #expect(rig.sink.delay() == 0, "what the device held is dropped")
        let written = rig.output.counts.framesPlayed
        rig.clock.advance(by: .nanoseconds(500_000_000))
        #expect(rig.output.counts.framesPlayed == written && rig.heard() == nil)
        rig.output.setPaused(false)
        // The clock waits for the next write, which starts at the sample after the last written.
        #expect(rig.run { rig.heard() != nil })
        #expect(rig.settle())
        let resumed = try #require(rig.heard())
        #expect(resumed >= Double(written) / 48000 - 1e-9 && resumed < Double(written) / 48000 + 0.1, "heard \(resumed) s after the resume")
        #expect(rig.run { rig.output.counts.framesPlayed == 48000 })
        // Every sample was written once, in order; the ones dropped at the pause were not heard.
        #expect(firstDifference(rig.sink.samples, Self.sound) == nil)
        #expect(rig.sink.counts.pauses == 0)
    }
}
