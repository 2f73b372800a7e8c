/// Where `AudioOutput` writes its samples: a playback device opened for a format, that plays what
/// it holds at its own pace and says how much of it is still to be heard.
///
/// `ALSADevice` is the one that plays (opened and set up by its `init`, closed when the last
/// reference goes); `ScanoutTesting.FakeAudioSink` plays at the pace of a manual clock, so that the
/// output's clock, underruns, losses, pauses and flushes are checked in virtual time.
///
/// Calls come from one thread at a time: the output thread, once the output has started.
public protocol AudioSink: AnyObject {
    /// The device's name, as a loss names it.
    var name: String { get }
    /// The format the device took (interleaved signed 16-bit): chunks are converted to it.
    var format: AudioFormat { get }
    /// Frames per period (the output writes a period at a time) and in the whole buffer.
    var periodFrames: Int { get }
    var bufferFrames: Int { get }
    /// Writes interleaved frames, blocking until the device took them all or failed. Returns the
    /// frames written, or a negative errno: `-EPIPE` an underrun and `-ESTRPIPE` a suspend (both
    /// recovered with `recover`), anything else a device that is gone.
    func write(_ samples: UnsafeBufferPointer<Int16>) -> Int
    /// Frames written but not heard yet; nil when the device cannot say.
    func delay() -> Int?
    /// Makes the device ready again after `write` returned `error` (an underrun or a suspend);
    /// false when it cannot be.
    func recover(_ error: Int) -> Bool
    /// Pauses (or resumes) playback with what the device holds kept; false when it cannot: no
    /// pause in the device, or nothing playing.
    func pause(_ on: Bool) -> Bool
    /// Plays what the device holds to its end, blocking meanwhile, then makes it ready for new
    /// samples: the end of the sound.
    func drain()
    /// Throws away what the device holds and makes it ready for new samples: a seek's flush.
    func discard()
    /// Text for a negative errno that `write` returned (what a loss says).
    func describe(error: Int) -> String
}
