import CALSA
import ScanoutCore
import ScanoutDemux
#if canImport(Glibc)
import Glibc
#endif

/// One ALSA PCM playback device (`snd_pcm_t`), opened blocking, interleaved `S16_LE`, at the rate
/// and channel count nearest to the ones asked for (`format` says what the device took: the
/// decoder resamples to it).
///
/// The `AudioSink` that plays. Owns the handle; `snd_pcm_close` once, in `deinit`. Not
/// thread-safe: used by the audio output thread only, once opened.
public final class ALSADevice: AudioSink {
    public let name: String
    public let format: AudioFormat
    /// Frames per period and in the whole ring buffer, as the device set them.
    public let periodFrames: Int
    public let bufferFrames: Int
    /// Whether the device can pause with what it holds kept (`snd_pcm_hw_params_can_pause`).
    public let canPause: Bool
    private let handle: OpaquePointer

    /// Opens `name` (`default`, `hw:0,3`, `plughw:CARD=PCH,DEV=3`, a name from an asoundrc...)
    /// and sets it up for `format` with about `bufferMilliseconds` of buffer
    /// (`snd_pcm_open`, `snd_pcm_hw_params`).
    public init(name: String, format wanted: AudioFormat, bufferMilliseconds: Int = 100) throws {
        self.name = name
        var h: OpaquePointer?
        var r = snd_pcm_open(&h, name, SND_PCM_STREAM_PLAYBACK, 0)
        guard r >= 0, let h else { throw AudioError.deviceOpenFailed(device: name, reason: Self.text(r)) }
        var params: OpaquePointer?
        snd_pcm_hw_params_malloc(&params)
        defer { snd_pcm_hw_params_free(params) }
        var rate = UInt32(wanted.sampleRate)
        var channels = UInt32(wanted.channels)
        var bufferTime = UInt32(bufferMilliseconds * 1000)
        var dir: Int32 = 0
        func fail(_ step: String, _ code: Int32) -> AudioError {
            snd_pcm_close(h)
            return AudioError.deviceOpenFailed(device: name, reason: "\(step): \(Self.text(code))")
        }
        r = snd_pcm_hw_params_any(h, params)
        if r < 0 { throw fail("no configuration", r) }
        r = snd_pcm_hw_params_set_access(h, params, SND_PCM_ACCESS_RW_INTERLEAVED)
        if r < 0 { throw fail("interleaved access refused", r) }
        r = snd_pcm_hw_params_set_format(h, params, SND_PCM_FORMAT_S16_LE)
        if r < 0 { throw fail("S16_LE refused (use a plughw: or plug device)", r) }
        r = snd_pcm_hw_params_set_channels_near(h, params, &channels)
        if r < 0 { throw fail("\(wanted.channels) channels refused", r) }
        r = snd_pcm_hw_params_set_rate_near(h, params, &rate, &dir)
        if r < 0 { throw fail("\(wanted.sampleRate) Hz refused", r) }
        r = snd_pcm_hw_params_set_buffer_time_near(h, params, &bufferTime, &dir)
        if r < 0 { throw fail("buffer time refused", r) }
        r = snd_pcm_hw_params(h, params)
        if r < 0 { throw fail("snd_pcm_hw_params", r) }
        var period: snd_pcm_uframes_t = 0
        var buffer: snd_pcm_uframes_t = 0
        snd_pcm_hw_params_get_period_size(params, &period, &dir)
        snd_pcm_hw_params_get_buffer_size(params, &buffer)
        handle = h
        format = AudioFormat(sampleRate: Int(rate), channels: Int(channels))
        periodFrames = max(1, Int(period))
        bufferFrames = Int(buffer)
        canPause = snd_pcm_hw_params_can_pause(params) == 1
    }

    deinit { snd_pcm_close(handle) }

    /// Writes interleaved frames, blocking until the device took them all or failed
    /// (`snd_pcm_writei`). Returns the frames written, or a negative errno (`-EPIPE`: underrun).
    public func write(_ samples: UnsafeBufferPointer<Int16>) -> Int {
        let frames = samples.count / format.channels
        var done = 0
        while done < frames {
            let n = snd_pcm_writei(handle, samples.baseAddress! + done * format.channels, snd_pcm_uframes_t(frames - done))
            if n == -Int(EINTR) || n == -Int(EAGAIN) { continue }
            if n < 0 { return n }
            done += n
        }
        return done
    }

    /// Frames written but not heard yet (`snd_pcm_delay`); nil when the device cannot say.
    public func delay() -> Int? {
        var d: snd_pcm_sframes_t = 0
        return snd_pcm_delay(handle, &d) >= 0 ? max(0, d) : nil
    }

    /// Recovers from an underrun or a suspend (`snd_pcm_recover`); false when that failed.
    public func recover(_ error: Int) -> Bool { snd_pcm_recover(handle, Int32(error), 1) >= 0 }

    /// Pauses or resumes playback, what the device holds kept (`snd_pcm_pause`). False when it
    /// cannot: no pause in the hardware, or nothing playing (not started, or run dry).
    public func pause(_ on: Bool) -> Bool {
        guard canPause else { return false }
        return snd_pcm_pause(handle, on ? 1 : 0) >= 0
    }

    /// Plays what the device holds to its end, blocking meanwhile, then makes it ready for new
    /// samples (`snd_pcm_drain`, `snd_pcm_prepare`): the end of the sound.
    public func drain() {
        snd_pcm_drain(handle)
        snd_pcm_prepare(handle)
    }

    /// Throws away what the device holds and makes it ready for new samples (`snd_pcm_drop`,
    /// `snd_pcm_prepare`): a seek's flush.
    public func discard() {
        snd_pcm_drop(handle)
        snd_pcm_prepare(handle)
    }

    /// ALSA's text for an error code (`snd_strerror`).
    public static func text(_ code: Int32) -> String { String(cString: snd_strerror(code)) }

    public func describe(error: Int) -> String { Self.text(Int32(error)) }

    /// A PCM device as ALSA's configuration lists it (`snd_device_name_hint`).
    public struct Hint: Sendable, Equatable {
        public var name: String
        public var description: String
        /// `Input`, `Output`, or nil for both.
        public var direction: String?
    }

    /// The PCM devices ALSA knows of that can play (`snd_device_name_hint` over every card).
    public static func list() -> [Hint] {
        var hints: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
        guard snd_device_name_hint(-1, "pcm", &hints) >= 0, let hints else { return [] }
        defer { snd_device_name_free_hint(hints) }
        var out: [Hint] = []
        var i = 0
        while let h = hints[i] {
            i += 1
            func get(_ key: String) -> String? {
                guard let p = snd_device_name_get_hint(h, key) else { return nil }
                defer { free(p) }
                return String(cString: p)
            }
            guard let name = get("NAME") else { continue }
            let direction = get("IOID")
            if direction == "Input" { continue }
            let desc = (get("DESC") ?? "").split(separator: "\n").joined(separator: ", ")
            out.append(Hint(name: name, description: desc, direction: direction))
        }
        return out
    }
}
