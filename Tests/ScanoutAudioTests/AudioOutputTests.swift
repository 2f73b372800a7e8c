import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ScanoutTestSupport
import Testing

/// Audio decode, conversion, volume and the ALSA sink, checked on the samples ALSA's `file` plugin
/// writes (`file:FILE=...,FORMAT=raw`, defined in alsa-lib's own configuration over the `null`
/// device: every sample written lands in the file). What the output does with a device (its
/// clock, volume, flushes, faults, pauses) is checked on a fake sink in virtual time
/// (AudioOutputClockTests, AudioOutputFaultTests, AudioPauseTests, AudioVolumeTests).
@Suite struct AudioOutputTests {
    /// Plays track `language` of tracks.mkv to `device` at `volume`; returns the samples the
    /// decoder made (before the volume) and the output, released (its file complete).
    private func play(language: String, device: String, format: AudioFormat, volume: Int) throws
        -> (reference: [Int16], format: AudioFormat, loss: AudioLoss?) {
        let reader = try FrameReader(input: try Fixtures.path("tracks.mkv"))
        let track = try #require(TrackSelector.pick(.audio, from: reader.demuxer.tracks, languages: [language]))
        let output = try AudioOutput(device: device, format: format)
        output.setVolume(volume, muted: false)
        let decoder = try AudioDecoder(demuxer: reader.demuxer, track: track, output: output.format)
        final class Samples { var all: [Int16] = [] }
        let made = Samples()
        try reader.demuxer.route(track: track.index) { packet in
            for chunk in (try? decoder.decode(packet)) ?? [] {
                made.all += chunk.samples
                output.enqueue(chunk)
            }
        }
        let frame = VideoFrame()
        while try reader.next(into: frame) {}
        // The play-out: everything written and played by the device, or the device lost.
        #expect(output.waitUntilHeard(timeout: 10))
        let result = (made.all, output.format, output.loss)
        output.close()
        return result
    }

    private func samples(in path: String) throws -> [Int16] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
    }

    @Test func germanTrackReachesTheDeviceResampledAndScaled() throws {
        let scratch = try Scratch()
        let file = scratch.path("out.raw")
        let r = try play(language: "de", device: "file:FILE=\(file),FORMAT=raw", format: AudioFormat(sampleRate: 48000, channels: 2), volume: 50)
        #expect(r.format == AudioFormat(sampleRate: 48000, channels: 2))
        #expect(r.loss == nil)
        var expected = r.reference
        applyVolume(&expected, volume: 50, muted: false)
        let written = try samples(in: file)
        // The German track: 3 s of 880 Hz, mono 44.1 kHz, converted to 48 kHz stereo.
        #expect(abs(r.reference.count / 2 - 144_000) < 4800)
        #expect(written.count <= expected.count && written.count >= expected.count - 2 * 4800)
        #expect(written == Array(expected.prefix(written.count)))
        #expect(zip(stride(from: 0, to: written.count, by: 2), stride(from: 1, to: written.count, by: 2)).allSatisfy { written[$0] == written[$1] })
        #expect(abs(toneFrequency(written, channels: 2, rate: 48000) - 880) < 1)
        #expect(written.contains { $0 != 0 })
    }

    @Test func aDeviceThatCannotOpenSaysWhich() throws {
        #expect(throws: AudioError.self) { try AudioOutput(device: "scanout-no-such-device", format: AudioFormat(sampleRate: 48000, channels: 2)) }
        do {
            _ = try AudioOutput(device: "scanout-no-such-device", format: AudioFormat(sampleRate: 48000, channels: 2))
        } catch let e as AudioError {
            guard case let .deviceOpenFailed(device, _) = e else { Issue.record("\(e)"); return }
            #expect(device == "scanout-no-such-device")
        }
    }

    /// A device that fails part way: writes to /dev/full (ENOSPC inside alsa-lib, EIO to the
    /// writer): the loss names it with ALSA's text for the error.
    @Test func anALSADeviceThatFailsMidPlayIsLost() throws {
        let device = "file:FILE=/dev/full,FORMAT=raw"
        let r = try play(language: "en", device: device, format: AudioFormat(sampleRate: 48000, channels: 2), volume: 100)
        let loss = try #require(r.loss)
        #expect(loss.device == device)
        #expect(loss.reason.contains("Input/output error"))
    }

    @Test(arguments: AudioTempo.Stretcher.allCases)
    func tempoKeepsThePitch(stretcher: AudioTempo.Stretcher) throws {
        #expect(AudioTempo.factors(for: 0.25) == [0.5, 0.5])
        #expect(AudioTempo.factors(for: 4) == [2, 2])
        #expect(AudioTempo.factors(for: 3) == [2, 1.5])
        #expect(AudioTempo.factors(for: 1.5) == [1.5])
        #expect(AudioTempo.filters(for: 0.25, stretcher: .atempo) == "atempo=0.5,atempo=0.5")
        #expect(AudioTempo.filters(for: 0.25, stretcher: .rubberband) == "rubberband=tempo=0.25:window=short")
        let format = AudioFormat(sampleRate: 48000, channels: 1)
        // 2 s of 440 Hz.
        let tone = (0..<96000).map { Int16(12000 * sin(2 * Double.pi * 440 * Double($0) / 48000)) }
        for rate in [0.25, 2.0, 4.0] {
            let tempo = try AudioTempo(rate: rate, format: format, stretcher: stretcher)
            var out: [Int16] = []
            var first: AudioChunk?
            for start in stride(from: 0, to: tone.count, by: 4800) {
                if let c = try tempo.process(AudioChunk(samples: Array(tone[start..<start + 4800]), start: 10 + Double(start) / 48000)) {
                    if first == nil { first = c }
                    out += c.samples
                }
            }
            // The filters hold some samples back: the output is the stretched length, less that.
            let seconds = Double(out.count) / 48000
            #expect(seconds <= 2 / rate + 0.05 && seconds >= 2 / rate * 0.9 - 0.1, "rate \(rate): \(seconds) s")
            // A phase vocoder's output wavers in amplitude between its hops, which moves the
            // count of swings by up to 0.6% (its spectrum peaks at 440 ± 1 Hz); unstretched in
            // pitch the tone would be 110 to 1760 Hz.
            let tolerance = stretcher == .rubberband ? 3.0 : 2.0
            #expect(abs(toneFrequency(out, channels: 1, rate: 48000) - 440) < tolerance, "\(stretcher) at \(rate)x")
            #expect(first?.tempo == rate && first?.start == 10)
        }
    }

    /// Drained at the input's end, the stretcher puts out the whole stretched length (not that
    /// less the window it holds), on the timeline after what came out before, and is fed again
    /// after a reset.
    @Test(arguments: AudioTempo.Stretcher.allCases)
    func aDrainedStretcherPutsOutTheWholeStretchedLength(stretcher: AudioTempo.Stretcher) throws {
        let format = AudioFormat(sampleRate: 48000, channels: 2)
        // 2 s of 440 Hz, in the decoder's chunks of 1024 frames.
        let tone = (0..<96000).flatMap { n -> [Int16] in
            let v = Int16(12000 * sin(2 * Double.pi * 440 * Double(n) / 48000))
            return [v, v]
        }
        for rate in [0.25, 0.5, 1.5, 2.0, 4.0] {
            let tempo = try AudioTempo(rate: rate, format: format, stretcher: stretcher)
            for pass in 0..<2 {
                var frames = 0
                var lastLoud = 0
                var next: Double?
                var contiguous = true
                func take(_ c: AudioChunk?) {
                    guard let c else { return }
                    if let next, let start = c.start, abs(start - next) > 1e-9 { contiguous = false }
                    frames += c.samples.count / 2
                    for i in stride(from: 0, to: c.samples.count, by: 2) where abs(Int(c.samples[i])) > 1000 {
                        lastLoud = frames - c.samples.count / 2 + i / 2
                    }
                    next = c.start.map { $0 + Double(c.samples.count / 2) / 48000 * c.tempo }
                    #expect(c.tempo == rate)
                }
                for start in stride(from: 0, to: tone.count / 2, by: 1024) {
                    let end = min(start + 1024, tone.count / 2)
                    take(try tempo.process(AudioChunk(samples: Array(tone[2 * start..<2 * end]), start: 5 + Double(start) / 48000)))
                }
                let before = frames
                take(tempo.drain())
                #expect(tempo.drain() == nil)
                // The stretched length to the frame; undrained, 24 ms (atempo at 2×) to 186 ms
                // (atempo at 0.25×) short of it.
                let seconds = Double(frames) / 48000
                #expect(frames == Int((96000 / rate).rounded()), "\(stretcher) at \(rate)x, pass \(pass): \(seconds) s, \(Double(before) / 48000) s undrained")
                #expect(frames > before && contiguous)
                // What ends it is the tone, not the silence that pushed it out: the tone's last
                // loud sample is heard within 25 ms of the end (the filters fade the very end
                // out: 23 ms through rubberband at 0.25×, 13 through atempo, under 0.1 ms from
                // 1.5× up).
                let early = Double(frames - lastLoud) / 48000
                #expect(early <= 0.025, "\(stretcher) at \(rate)x: the tone ends \(early * 1000) ms before the end")
                tempo.reset()
            }
        }
    }

    /// Lip sync through a rate change: a 1 kHz beep every second (as in flash-beep.mp4), stretched
    /// in chunks of 1024 samples as the decoder feeds them. Each beep's first loud sample, read
    /// back on the stream's timeline through the chunks' `start` and `tempo` (as the audio clock
    /// reads them), is within 8 ms of wall time of its place. `atempo`, the fallback, puts
    /// them 10–32 ms early here, so it is only checked for landing within 35 ms.
    @Test(arguments: [1.5, 0.75, 2.0, 1.25])
    func aStretchedBeepIsHeardWhereItsPictureIs(rate: Double) throws {
        let format = AudioFormat(sampleRate: 48000, channels: 2)
        let seconds = 8
        let beeps = (0..<seconds * 48000).flatMap { n -> [Int16] in
            let v = n % 48000 < 1600 ? Int16(16000 * sin(2 * Double.pi * 1000 * Double(n) / 48000)) : 0
            return [v, v]
        }
        for (stretcher, allowed) in [(AudioTempo.Stretcher.rubberband, 0.008), (.atempo, 0.035)] {
            let tempo = try AudioTempo(rate: rate, format: format, stretcher: stretcher)
            var onsets: [Double] = []
            var lastLoud = -1.0
            for start in stride(from: 0, to: beeps.count / 2, by: 1024) {
                let chunk = AudioChunk(samples: Array(beeps[2 * start..<2 * (start + 1024)]), start: 20 + Double(start) / 48000)
                guard let out = try tempo.process(chunk), let t0 = out.start else { continue }
                for i in stride(from: 0, to: out.samples.count, by: 2) where abs(Int(out.samples[i])) > 3200 {
                    let t = t0 + Double(i / 2) / 48000 * out.tempo
                    if t - lastLoud > 0.3 { onsets.append(t) }
                    lastLoud = t
                }
            }
            #expect(onsets.count >= seconds - 2, "\(stretcher) at \(rate)x: \(onsets)")
            for t in onsets.dropFirst() {
                // Stream seconds off, as heard: divided by the rate.
                let off = (t - t.rounded()) / rate
                #expect(abs(off) <= allowed, "\(stretcher) at \(rate)x: the beep at \(t.rounded()) s is heard \(off * 1000) ms off")
            }
        }
    }
}
