import CFFmpeg
import ScanoutCore
import Synchronization
import ScanoutDemux

/// The sample layout every audio path in Scanout carries after decoding: interleaved signed
/// 16-bit samples (ALSA's `S16_LE`) at `sampleRate` samples per second per channel.
public struct AudioFormat: Sendable, Hashable, CustomStringConvertible {
    public var sampleRate: Int
    public var channels: Int
    public init(sampleRate: Int, channels: Int) {
        self.sampleRate = sampleRate
        self.channels = channels
    }
    public var description: String { "s16 \(sampleRate) Hz \(channels) ch" }
}

/// A run of decoded, converted samples and where it sits on the input's timeline.
public struct AudioChunk: Sendable {
    /// Interleaved samples (`frames × channels`).
    public var samples: [Int16]
    /// Stream time of the first sample, seconds on the container's timeline (the scale of
    /// `VideoFrame.pts × time base`); nil when the decoder gave no timestamp.
    public var start: Double?
    /// Stream seconds one played second covers (the rate the samples were stretched for: 2 for
    /// a chunk made to play twice as fast). The clock reads `start + played × tempo`.
    public var tempo: Double
    /// Which item of a playlist the samples belong to (the clock follows one item at a time).
    public var epoch: Int
    /// The rate to play the samples at: the output stretches a chunk not stretched yet (tempo 1)
    /// by it, keeping the pitch (`AudioTempo`), just before writing it.
    public var rate: Double
    /// Marks the end of the item's samples (no samples of its own): the output gives back what
    /// its stretcher still holds.
    public var ends: Bool
    public init(samples: [Int16], start: Double?, tempo: Double = 1, epoch: Int = 0, rate: Double = 1, ends: Bool = false) {
        self.samples = samples
        self.start = start
        self.tempo = tempo
        self.epoch = epoch
        self.rate = rate
        self.ends = ends
    }

    /// The end of item `epoch`'s samples.
    public static func end(epoch: Int = 0) -> AudioChunk { AudioChunk(samples: [], start: nil, epoch: epoch, ends: true) }
}

/// What went wrong on the audio path.
public enum AudioError: Error, Equatable, CustomStringConvertible, Sendable {
    /// The input has no audio track that the selection names.
    case noAudioTrack(input: String, wanted: String)
    /// libavcodec has no decoder for the track, or it refused to open.
    case decoderOpenFailed(input: String, codec: String, reason: String)
    /// A libswresample or libavfilter call failed.
    case conversionFailed(call: String, reason: String)
    /// The ALSA device cannot be opened or refuses every format offered.
    case deviceOpenFailed(device: String, reason: String)
    /// Writing to the device failed other than by an underrun.
    case deviceFailed(device: String, reason: String)

    public var description: String {
        switch self {
        case .noAudioTrack(let input, let wanted):
            return "\(input): no audio track \(wanted) (see `scanout probe` for the track list)"
        case .decoderOpenFailed(let input, let codec, let reason):
            return "\(input): cannot decode the \(codec) audio track: \(reason)"
        case .conversionFailed(let call, let reason):
            return "audio conversion failed: \(call): \(reason)"
        case .deviceOpenFailed(let device, let reason):
            return "audio device \(device): cannot open: \(reason) (see `scanout probe` for the devices; `none` plays silent)"
        case .deviceFailed(let device, let reason):
            return "audio device \(device): write failed: \(reason)"
        }
    }
}

/// Decodes one audio track of a demuxer (libavcodec) and converts its samples to an
/// `AudioFormat` (libswresample). Stretching for a rate is the output thread's
/// (`AudioOutput`, `AudioTempo`).
///
/// Owns an `AVCodecContext`, an `SwrContext` and an `AVFrame`, freed once in `deinit`. Not
/// thread-safe: fed from the thread that reads the demuxer (a `Demuxer.route` sink).
public final class AudioDecoder {
    public let track: TrackInfo
    public let output: AudioFormat
    private let input: String
    private let context: UnsafeMutablePointer<AVCodecContext>
    private let frame: UnsafeMutablePointer<AVFrame>
    private var swr: OpaquePointer?
    private let timeBase: Double
    /// Stream time of the sample after the last one converted (for frames without a timestamp).
    private var nextStart: Double?
    /// Packets the decoder rejected (counted and skipped, as for video).
    public private(set) var rejectedPackets = 0
    /// How much longer the sound is made than the stream says, in parts per million (`setStretch`):
    /// set from the player's thread, read by the one that decodes.
    private let stretch = Atomic<Int>(0)
    private var stretchApplied = 0

    /// Opens the decoder of audio track `track` of `demuxer`, converting to `output` (the track's
    /// own rate and channels when nil).
    public init(demuxer: Demuxer, track: TrackInfo, output: AudioFormat? = nil) throws {
        input = demuxer.input
        self.track = track
        guard track.kind == .audio, let par = demuxer.codecParameters(ofTrack: track.index) else {
            throw AudioError.noAudioTrack(input: demuxer.input, wanted: "\(track.index)")
        }
        guard let codec = avcodec_find_decoder(par.pointee.codec_id) else {
            throw AudioError.decoderOpenFailed(input: input, codec: track.codecName, reason: "no decoder in this libavcodec")
        }
        guard let ctx = avcodec_alloc_context3(codec), let f = av_frame_alloc() else { fatalError("libavcodec: out of memory") }
        context = ctx
        frame = f
        timeBase = track.timeBase.doubleValue
        var r = avcodec_parameters_to_context(ctx, par)
        if r >= 0 {
            ctx.pointee.pkt_timebase = AVRational(num: Int32(track.timeBase.num), den: Int32(track.timeBase.den))
            r = avcodec_open2(ctx, codec, nil)
        }
        self.output = output ?? AudioFormat(sampleRate: Int(ctx.pointee.sample_rate), channels: Int(ctx.pointee.ch_layout.nb_channels))
        if r < 0 {
            throw AudioError.decoderOpenFailed(input: input, codec: track.codecName, reason: ffmpegErrorString(r))
        }
    }

    deinit {
        var c: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&c)
        var f: UnsafeMutablePointer<AVFrame>? = frame
        av_frame_free(&f)
        if swr != nil { swr_free(&swr) }
    }

    /// The track has ended (the item's input is read to its end): returns the samples still
    /// held by the decoder and the resampler, in order. `flush` makes the decoder take packets
    /// again.
    public func drain() -> [AudioChunk] {
        var chunks: [AudioChunk] = []
        if avcodec_send_packet(context, nil) >= 0 {
            while avcodec_receive_frame(context, frame) >= 0 {
                defer { av_frame_unref(frame) }
                if let c = try? convert() { chunks.append(c) }
            }
        }
        if let c = resamplerTail() { chunks.append(c) }
        return chunks
    }

    /// Decodes one packet and returns the samples it completes, converted.
    public func decode(_ packet: Packet) throws -> [AudioChunk] {
        if avcodec_send_packet(context, packet.pointer) < 0 { rejectedPackets += 1 }
        var chunks: [AudioChunk] = []
        while avcodec_receive_frame(context, frame) >= 0 {
            defer { av_frame_unref(frame) }
            if let c = try convert() { chunks.append(c) }
        }
        return chunks
    }

    /// Makes the sound `ppm` parts per million longer (negative: shorter) from the next packet on,
    /// by resampling (libswresample's compensation, applied over 10 s of output and renewed at
    /// every packet): how a screen in a sync group keeps its sound on the group's clock when the
    /// device's clock drifts from it, with no click (at most ±`maxStretch`).
    public func setStretch(ppm: Int) { stretch.store(min(max(ppm, -Self.maxStretch), Self.maxStretch), ordering: .relaxed) }
    public static let maxStretch = 1000

    /// Renews the compensation (it ends after its distance) at the stretch asked for.
    private func applyStretch() throws {
        let ppm = stretch.load(ordering: .relaxed)
        guard ppm != 0 || stretchApplied != 0 else { return }
        let distance = Int64(output.sampleRate) * 10
        let r = swr_set_compensation(swr, Int32(Int64(ppm) * distance / 1_000_000), Int32(distance))
        guard r >= 0 else { throw AudioError.conversionFailed(call: "swr_set_compensation", reason: ffmpegErrorString(r)) }
        stretchApplied = ppm
    }

    /// Forgets buffered samples (after a seek).
    public func flush() {
        avcodec_flush_buffers(context)
        if swr != nil { swr_free(&swr) }
        nextStart = nil
    }

    private func convert() throws -> AudioChunk? {
        if swr == nil {
            try openResampler()
            stretchApplied = 0
        }
        try applyStretch()
        // Samples still inside the resampler come out first: the chunk starts that much earlier.
        let buffered = Double(swr_get_delay(swr, Int64(output.sampleRate))) / Double(output.sampleRate)
        let pts = frame.pointee.best_effort_timestamp
        let start = pts == SCANOUT_AV_NOPTS_VALUE ? nextStart : Double(pts) * timeBase - buffered
        let input = UnsafeMutableRawPointer(frame.pointee.extended_data!).assumingMemoryBound(to: UnsafePointer<UInt8>?.self)
        return try resample(input, frames: frame.pointee.nb_samples,
                            capacity: Int(swr_get_out_samples(swr, frame.pointee.nb_samples)), start: start)
    }

    /// What the resampler still holds (a rate conversion's filter delay), as the chunk after
    /// the last one converted.
    private func resamplerTail() -> AudioChunk? {
        guard swr != nil else { return nil }
        return try? resample(nil, frames: 0, capacity: Int(swr_get_delay(swr, Int64(output.sampleRate))) + 32, start: nextStart)
    }

    /// Converts `frames` input frames (none: what the resampler holds) into at most `capacity`
    /// output frames, as a chunk from `start`; moves `nextStart` past it.
    private func resample(_ input: UnsafeMutablePointer<UnsafePointer<UInt8>?>?, frames: Int32, capacity: Int,
                          start: Double?) throws -> AudioChunk? {
        guard capacity > 0 else { return nil }
        var samples = [Int16](repeating: 0, count: capacity * output.channels)
        let got = samples.withUnsafeMutableBytes { out -> Int32 in
            var planes: [UnsafeMutablePointer<UInt8>?] = [out.baseAddress?.assumingMemoryBound(to: UInt8.self)]
            return swr_convert(swr, &planes, Int32(capacity), input, frames)
        }
        guard got >= 0 else { throw AudioError.conversionFailed(call: "swr_convert", reason: ffmpegErrorString(got)) }
        samples.removeLast((capacity - Int(got)) * output.channels)
        nextStart = start.map { $0 + Double(got) / Double(output.sampleRate) }
        return samples.isEmpty ? nil : AudioChunk(samples: samples, start: start)
    }

    private func openResampler() throws {
        var outLayout = AVChannelLayout()
        av_channel_layout_default(&outLayout, Int32(output.channels))
        // A layout with no channel order (some WAV and raw inputs) is taken as the default one
        // for its channel count.
        var inLayout = AVChannelLayout()
        if frame.pointee.ch_layout.order == AV_CHANNEL_ORDER_UNSPEC {
            av_channel_layout_default(&inLayout, frame.pointee.ch_layout.nb_channels)
        } else {
            av_channel_layout_copy(&inLayout, &frame.pointee.ch_layout)
        }
        defer { av_channel_layout_uninit(&outLayout); av_channel_layout_uninit(&inLayout) }
        let r = swr_alloc_set_opts2(&swr, &outLayout, AV_SAMPLE_FMT_S16, Int32(output.sampleRate),
                                    &inLayout, AVSampleFormat(frame.pointee.format), frame.pointee.sample_rate, 0, nil)
        guard r >= 0, swr != nil else { throw AudioError.conversionFailed(call: "swr_alloc_set_opts2", reason: ffmpegErrorString(r)) }
        let i = swr_init(swr)
        guard i >= 0 else { throw AudioError.conversionFailed(call: "swr_init", reason: ffmpegErrorString(i)) }
    }
}

/// Scales samples by a volume, in place: `sample × volume / 100`, truncated toward zero (0 or
/// muted: silence; 100: unchanged). Exact, so that tests can check the output sample by sample.
public func applyVolume(_ samples: inout [Int16], volume: Int, muted: Bool) {
    if muted || volume <= 0 {
        for i in samples.indices { samples[i] = 0 }
        return
    }
    guard volume < 100 else { return }
    let v = Int32(volume)
    for i in samples.indices { samples[i] = Int16(Int32(samples[i]) * v / 100) }
}
