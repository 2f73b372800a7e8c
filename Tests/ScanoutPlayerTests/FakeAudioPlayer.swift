import Foundation
import ScanoutDisplay
import ScanoutCore
import ScanoutAudio
import ScanoutPlayer
import ScanoutTesting
import Testing

/// An engine whose sound goes to fake sinks (`FakeAudioSinks`), in virtual time: it runs on an
/// `AudioPacedClock` over a manual clock, so each of its waits for a frame's time plays the sound
/// a card would play in that time, and a test checks every sample the device got and the audio
/// clock at each frame, exact, in milliseconds of real time.
///
/// Owns the engine: when the harness goes, the sinks are unplugged before the engine is
/// released, since closing the output waits for its thread and that thread may wait for a clock
/// nothing moves any more. It expects the clock never to have moved before the output settled
/// (`AudioPacedClock.stalls`): then every run is the same, to the sample.
final class FakeAudioPlayer {
    let clock = ManualClock()
    let sinks: FakeAudioSinks
    let paced: AudioPacedClock
    private(set) var engine: PlayerEngine!

    /// The device is named `device`; `configure` changes the configuration further (the
    /// audio settings' track selection, faults); `display` is made on the engine's clock.
    init(device: String = "hw:fake", canPause: Bool = true, configure: (inout PlayerConfiguration) -> Void = { _ in },
         display: (AudioPacedClock) -> any Display, emit: @escaping (PlayerEvent) -> Void = { _ in }) {
        sinks = FakeAudioSinks(clock: clock, canPause: canPause)
        paced = AudioPacedClock(sinks: sinks)
        var configuration = PlayerConfiguration()
        configuration.audio = AudioSettings(device: device, sinkFactory: sinks.factory)
        configure(&configuration)
        let e = PlayerEngine(display: display(paced), clock: paced, configuration: configuration, emit: emit)
        paced.output = { [unowned e] in e.audio.output }
        engine = e
    }

    deinit {
        #expect(paced.stalls == 0, "the clock moved \(paced.stalls) times before the audio output settled")
        sinks.unplugAll()
        engine.audio.output?.close()
    }

    /// The sink playing (the one opened last).
    var sink: FakeAudioSink? { sinks.last }

    /// Ticks while the engine plays (as the loop does; the clock moves as it waits).
    func playToEnd(turns limit: Int = 20_000) {
        var turns = 0
        while engine.state == .playing, turns < limit {
            engine.tick()
            turns += 1
        }
    }

    /// Moves the clock while the output waits for the device, until everything queued is
    /// written (the output waits for the engine) and `done` holds; false when that did not come
    /// within 10 s of real time.
    @discardableResult
    func playOut(until done: () -> Bool = { true }) -> Bool {
        guard let output = engine.audio.output, let sink else { return done() }
        return sink.run { output.isIdle && done() }
    }
}

/// A frame timed by the audio clock is in sync with it: shown no more than one frame interval
/// before its time is heard, and no later than the drop rule lets a frame be (one interval late
/// when it is decided) plus one interval for the present itself on a loaded machine.
func expectInSync(media: Double, heard: Double, interval: Double = 1.0 / 30, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(media - heard <= interval && heard - media <= 2 * interval, "frame at \(media) s shown when the audio was at \(heard) s",
            sourceLocation: sourceLocation)
}
