import Foundation
import ScanoutDemux

/// What a download is made of: the variant of an HLS master playlist the caps allow, its
/// segments and key, and the size they are estimated at.
extension OfflineManager {
    /// The master's variant the caps allow (highest bitrate, `VariantSelector`'s ladder), its
    /// segments, and BANDWIDTH x duration as the estimate (a HEAD of the first segment times
    /// their number when the playlist names no bandwidth).
    func resolvePlaylist(_ request: DownloadRequest, into record: inout DownloadRecord, segments: inout [SegmentRecord],
                                 key: inout PendingKey?) async throws {
        var url = request.source
        var text = try await fetcher.text(url)
        guard HLSPlaylist.isPlaylist(text) else { throw OfflineError.sourceUnusable(source: url, reason: "not an HLS playlist (no #EXTM3U)") }
        let variants = HLSPlaylist.variants(text, base: url)
        if !variants.isEmpty {
            var options = AdaptiveOptions()
            options.maxHeight = request.maxHeight ?? settings.maxHeight
            options.maxBitrate = request.maxBitrate ?? settings.maxBitrate
            let chosen = VariantSelector(variants: variants.map(\.variant), options: options).ladder.last!
            let variant = variants[chosen.id]
            url = variant.url
            record.bitrate = chosen.bitrate
            record.height = chosen.height
            text = try await fetcher.text(url)
        }
        if text.contains("#EXT-X-BYTERANGE") {
            throw OfflineError.sourceUnusable(source: url, reason: "byte-range segments (#EXT-X-BYTERANGE) are not kept offline")
        }
        let keys = HLSPlaylist.keys(text, base: url).filter { $0.method != "NONE" }
        if let first = keys.first {
            if let other = keys.first(where: { $0.method != "AES-128" }) {
                throw OfflineError.sourceUnusable(source: url, reason: "segments encrypted with \(other.method) are not kept offline (only AES-128: "
                                                  + "libavformat's hls demuxer decrypts SAMPLE-AES only for some codecs)")
            }
            guard let uri = first.uri, keys.allSatisfy({ $0.uri == uri && $0.iv == first.iv }) else {
                throw OfflineError.sourceUnusable(source: url, reason: "segments under more than one key (key rotation) are not kept offline")
            }
            key = .hls(uri: uri, iv: first.iv, mediaSequence: HLSPlaylist.mediaSequence(text))
        }
        let (initSection, list) = HLSPlaylist.segments(text, base: url)
        guard !list.isEmpty else { throw OfflineError.sourceUnusable(source: url, reason: "the media playlist lists no segments") }
        record.kind = .hls
        record.mediaURL = url
        let duration = list.map(\.duration).reduce(0, +)
        if let bitrate = record.bitrate, bitrate > 0 {
            record.estimate = Int64(Double(bitrate) * duration / 8)
        } else {
            record.estimate = (try await fetcher.length(list[0].url) ?? 0) * Int64(list.count)
        }
        let first = initSection == nil ? 0 : 1
        segments = list.enumerated().map { i, s in
            SegmentRecord(downloadId: record.id, number: first + i, url: s.url, duration: s.duration,
                          file: String(format: "seg%05d.", i) + Self.extensionOf(s.url, default: "ts"), length: nil, done: false)
        }
        if let initSection {
            segments.insert(SegmentRecord(downloadId: record.id, number: 0, url: initSection, duration: 0,
                                          file: "init." + Self.extensionOf(initSection, default: "mp4"), length: nil, done: false,
                                          initSection: true), at: 0)
        }
    }
}
