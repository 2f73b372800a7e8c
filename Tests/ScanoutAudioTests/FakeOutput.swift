import Foundation
import ScanoutAudio
import ScanoutCore
import ScanoutTesting
import Testing

/// An audio output on a fake sink, both on one manual clock: the output's clock, underruns,
/// losses, pauses and flushes in virtual time (`FakeAudioSink.run(until:)` moves the clock while
/// the output thread waits for the device).
struct FakeOutput: Sendable {
    let clock: ManualClock
    let sink: FakeAudioSink
    let output: AudioOutput

    init(format: AudioFormat = AudioFormat(sampleRate: 48000, channels: 2), canPause: Bool = true,
         failWritesAfter: Int? = nil) {
        let clock = ManualClock()
        self.clock = clock
        sink = FakeAudioSink(format: format, clock: clock, canPause: canPause)
        output = AudioOutput(sink: sink, failWritesAfter: failWritesAfter, now: { clock.now() })
    }

    /// Moves the clock while the output waits for the device, until `done`; false when that did
    /// not come within 10 s of real time.
    @discardableResult
    func run(until done: () -> Bool) -> Bool { sink.run(until: done) }

    /// Until the output thread waits for the clock again (the device full): nothing moves then,
    /// so every reading of the output is stable.
    func settle() -> Bool { sink.run { sink.isWaitingForClock } }

    /// The output's clock for `epoch` now, on the manual clock.
    func heard(epoch: Int = 0) -> Double? { output.streamTime(at: clock.now(), epoch: epoch) }

    /// Stops the output: the device is taken away first, so that a write waiting for the clock
    /// returns and the output thread can end.
    func close() {
        sink.unplug()
        output.close()
    }
}

/// Interleaved stereo frames whose two samples carry the frame's index (mod 30000): a gap, a
/// repeat or a reordering shows in what the device got.
func ramp(frames: Int, from first: Int = 0) -> [Int16] {
    (first..<first + frames).flatMap { i -> [Int16] in [Int16(i % 30000), Int16(i % 30000)] }
}

/// `samples` cut into chunks of `frames` frames (stereo), the first starting at stream time
/// `start`.
func chunks(_ samples: [Int16], frames: Int, start: Double, epoch: Int = 0, rate: Double = 1) -> [AudioChunk] {
    stride(from: 0, to: samples.count / 2, by: frames).map { f in
        let end = min(f + frames, samples.count / 2)
        return AudioChunk(samples: Array(samples[2 * f..<2 * end]), start: start + Double(f) / 48000, epoch: epoch, rate: rate)
    }
}

extension AudioOutput {
    /// Queues `chunks` in order; whether every one was taken.
    func enqueueAll(_ chunks: [AudioChunk]) -> Bool { chunks.allSatisfy { enqueue($0) } }
}

/// A chunk in a failed expectation: where it starts and how long it is, not its samples.
extension AudioChunk: CustomTestStringConvertible {
    public var testDescription: String {
        "AudioChunk(\(samples.count) samples, start \(start.map { "\($0)" } ?? "nil"), epoch \(epoch), rate \(rate)\(ends ? ", end" : ""))"
    }
}

/// Where two runs of samples first differ, in a line (nil when they are the same): a failed
/// comparison names the place, not every sample.
func firstDifference(_ got: [Int16], _ expected: [Int16]) -> String? {
    if let i = (0..<min(got.count, expected.count)).first(where: { got[$0] != expected[$0] }) {
        return "sample \(i) is \(got[i]), not \(expected[i]) (\(got.count) samples, \(expected.count) expected)"
    }
    return got.count == expected.count ? nil : "\(got.count) samples, \(expected.count) expected"
}
