import ScanoutAudio
import ScanoutCore
import ScanoutDecode
import ScanoutDemux

/// Every sample an `AudioDecoder` makes of audio track `languages` (the default track when empty)
/// of `path`, converted to `format`, from the start: the reference the audio tests compare with.
/// `configure` sets the decoder up first (a stretch); `drain` adds what the decoder and its
/// resampler still hold at the end.
public func decodedSound(of path: String, languages: [String] = [], format: AudioFormat, drain: Bool = false,
                         configure: (AudioDecoder) -> Void = { _ in }) throws -> [Int16] {
    let reader = try FrameReader(input: path)
    guard let track = TrackSelector.pick(.audio, from: reader.demuxer.tracks, index: nil, languages: languages) else {
        throw SupportError("\(path) has no audio track for \(languages)")
    }
    let decoder = try AudioDecoder(demuxer: reader.demuxer, track: track, output: format)
    configure(decoder)
    final class Samples { var all: [Int16] = [] }
    let made = Samples()
    try reader.demuxer.route(track: track.index) { packet in
        for chunk in (try? decoder.decode(packet)) ?? [] { made.all += chunk.samples }
    }
    let frame = VideoFrame()
    while try reader.next(into: frame) {}
    if drain { for chunk in decoder.drain() { made.all += chunk.samples } }
    return made.all
}
