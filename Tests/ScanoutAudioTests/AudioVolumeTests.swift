import ScanoutAudio
import ScanoutCore
import ScanoutTesting
import Testing

/// What reaches the device, sample for sample, on a fake sink: the volume's scaling, the mute,
/// a volume change from the next chunk on, and a seek's flush cutting the samples before its
/// target.
@Suite(.timeLimit(.minutes(1))) struct AudioVolumeTests {
    @Test func theVolumeScalesExactlyAndTheMuteWritesSilence() throws {
        var s: [Int16] = [32767, -32768, 101, -101, 3]
        applyVolume(&s, volume: 30, muted: false)
        #expect(s == [9830, -9830, 30, -30, 0])
        applyVolume(&s, volume: 30, muted: true)
        #expect(s == [0, 0, 0, 0, 0])

        let rig = FakeOutput()
        defer { rig.close() }
        let sound = (0..<9600).flatMap { i -> [Int16] in [Int16(i % 20000), Int16(-(i % 20000))] }
        let parts = chunks(sound, frames: 4800, start: 0)
        rig.output.setVolume(30, muted: false)
        #expect(rig.output.enqueue(parts[0]))
        #expect(rig.run { rig.output.counts.framesPlayed == 4800 })
        // From the next chunk on: muted.
        rig.output.setVolume(30, muted: true)
        #expect(rig.output.enqueue(parts[1]))
        #expect(rig.run { rig.output.counts.framesPlayed == 9600 })
        var scaled = parts[0].samples
        applyVolume(&scaled, volume: 30, muted: false)
        #expect(firstDifference(rig.sink.samples, scaled + [Int16](repeating: 0, count: parts[1].samples.count)) == nil)
        #expect(scaled.contains { $0 != 0 })
    }

    /// A seek's flush: what is queued goes, and the samples before the target are cut from the
    /// next chunk, so the device's first sample is the target's.
    @Test func aFlushCutsTheSamplesBeforeTheSeekTarget() throws {
        let rig = FakeOutput(format: AudioFormat(sampleRate: 48000, channels: 1))
        defer { rig.close() }
        let ramp = (0..<48000).map { Int16($0 % 30000) }
        rig.output.setPaused(true)
        #expect(rig.output.enqueue(AudioChunk(samples: ramp, start: 3)))   // never written: flushed
        rig.output.flush(discardBefore: 10.25)
        #expect(rig.output.enqueue(AudioChunk(samples: ramp, start: 10)))
        rig.output.setPaused(false)
        #expect(rig.run { rig.output.counts.framesPlayed == 36000 })
        #expect(firstDifference(rig.sink.samples, Array(ramp[12000...])) == nil)
        #expect(rig.output.loss == nil)
    }
}
