import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ScanoutTestSupport
import Testing

/// The decoder's stretch (`AudioDecoder.setStretch`): what keeps a sync group's sound on the
/// group's clock, by resampling a few hundred ppm at most.
@Suite struct AudioStretchTests {
    /// Every sample the decoder makes of the German track of tracks.mkv (3 s of 880 Hz, mono
    /// 44.1 kHz) converted to `format`, stretched by `ppm` from the first packet on.
    private func decode(format: AudioFormat, ppm: Int) throws -> [Int16] {
        try decodedSound(of: try Fixtures.path("tracks.mkv"), languages: ["de"], format: format, drain: true) { $0.setStretch(ppm: ppm) }
    }

    /// The largest step between two neighbouring samples of channel 0: a click is a step far
    /// above the tone's own.
    private func largestStep(_ s: [Int16], channels: Int) -> Int {
        stride(from: channels, to: s.count, by: channels).map { abs(Int(s[$0]) - Int(s[$0 - channels])) }.max() ?? 0
    }

    @Test("stretched 1000 ppm, at the track's own rate or converted: 0.1 % more samples, the tone 0.1 % lower, no step larger than the tone's own",
          arguments: [AudioFormat(sampleRate: 44100, channels: 1), AudioFormat(sampleRate: 48000, channels: 2)])
    func stretched(format: AudioFormat) throws {
        let plain = try decode(format: format, ppm: 0)
        let longer = try decode(format: format, ppm: 1000)
        let shorter = try decode(format: format, ppm: -1000)
        let frames = plain.count / format.channels
        let added = longer.count / format.channels - frames, removed = frames - shorter.count / format.channels
        // 3 s: 132,300 or 144,000 frames; 0.1 % of them added or taken away, within a few.
        #expect(abs(added - frames / 1000) <= 8 && abs(removed - frames / 1000) <= 8)
        let tone = toneFrequency(plain, channels: format.channels, rate: Double(format.sampleRate))
        let lower = toneFrequency(longer, channels: format.channels, rate: Double(format.sampleRate))
        #expect(abs(tone - 880) < 1 && abs(lower - tone * (1 - 0.001)) < 0.3)
        #expect(largestStep(longer, channels: format.channels) <= largestStep(plain, channels: format.channels) + 64)
        #expect(largestStep(shorter, channels: format.channels) <= largestStep(plain, channels: format.channels) + 64)
    }

    @Test("the stretch is bounded: 5000 ppm asked, 1000 given")
    func bounded() throws {
        let format = AudioFormat(sampleRate: 44100, channels: 1)
        let plain = try decode(format: format, ppm: 0).count
        let asked = try decode(format: format, ppm: 5000).count
        #expect(abs(asked - plain - plain / 1000) <= 8)
    }
}
