import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ScanoutTestSupport
import Testing

/// A pause keeps what the device holds (`snd_pcm_pause`): on a device paced in real time
/// (`RealTimeFIFODevice`, ALSA's `file` plugin, which can pause), nothing comes out while paused
/// but what the FIFO held, the ramp paused in the middle and resumed reaches the device whole,
/// every sample once and in order, and the clock says nothing while paused and goes on from where
/// the pause stopped it.
@Suite(.serialized, .timeLimit(.minutes(1))) struct AudioPauseTests {
    @Test func aPauseKeepsTheSamplesTheDeviceHolds() throws {
        let scratch = try Scratch()
        let format = AudioFormat(sampleRate: 48000, channels: 2)
        let device = try RealTimeFIFODevice(directory: scratch.url.path, format: format)
        // 1 s: each frame's two samples carry its index (mod 30000), so a gap or a repeat shows.
        let frames = 48000
        let ramp = (0..<frames).flatMap { i -> [Int16] in [Int16(i % 30000), Int16(i % 30000)] }
        do {
            let output = try AudioOutput(device: device.device, format: format)
            for start in stride(from: 0, to: frames, by: 4800) {
                #expect(output.enqueue(AudioChunk(samples: Array(ramp[2 * start..<2 * (start + 4800)]), start: Double(start) / 48000)))
            }
            for _ in 0..<400 where output.counts.framesPlayed < 19200 { usleep(5_000) }
            output.setPaused(true)
            // Counted from the pause on: on a loaded machine this thread can be late by hundreds
            // of milliseconds, and what came out before the pause is not the pause's to keep.
            let atPause = device.samples.count
            usleep(50_000)
            let pausedAt = output.counts.framesPlayed
            #expect(output.streamTime(at: monotonicNanoseconds(), epoch: 0) == nil)
            // Nothing is written while paused, and what the device holds stays there: only what
            // the FIFO itself held comes out (4096 bytes). A device dropped at the pause, as
            // before, writes out its whole buffer here instead (about 11,700 samples). A device
            // that ran dry just before (an underrun: a machine too loaded to feed it) is not
            // playing and cannot pause; it is dropped, so then only the whole ramp is checked.
            usleep(300_000)
            let ranDry = output.counts.underruns > 0
            #expect(output.counts.framesPlayed == pausedAt)
            #expect(ranDry || device.samples.count - atPause <= 4096, "\(device.samples.count - atPause) samples came out during the pause")
            output.setPaused(false)
            var resumed: Double?
            for _ in 0..<100 {
                if let t = output.streamTime(at: monotonicNanoseconds(), epoch: 0) { resumed = t; break }
                usleep(2_000)
            }
            // The clock goes on from where the pause stopped it, not past the pause: no further
            // than what was written before it (the 350 ms paused would put it well past), and
            // no more than the device's buffer behind it (about 0.4 s in, unless this thread
            // came late to the pause).
            let r = try #require(resumed)
            let written = Double(pausedAt) / 48000
            let buffer = Double(output.deviceBuffer.frames) / 48000
            #expect(ranDry || (r > written - buffer - 0.05 && r < written + 0.05), "heard \(r) s right after the resume, \(written) s written")
            for _ in 0..<400 where output.counts.framesPlayed < frames || output.queuedSeconds > 0 { usleep(10_000) }
            // A drop makes the file plugin write out what it kept back (one buffer).
            output.flush()
            device.waitUntilQuiet()
            output.close()
        }
        let got = device.samples
        #expect(difference(got.prefix(ramp.count), ramp) == nil)
        #expect(got.count >= ramp.count)
    }
}
