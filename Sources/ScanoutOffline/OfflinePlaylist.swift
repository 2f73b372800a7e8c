import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutDecode

/// The little of an HLS playlist a download needs: a master's variants (`#EXT-X-STREAM-INF`
/// with `BANDWIDTH` and `RESOLUTION`, then the URI) or a media playlist's segments (`#EXTINF`,
/// then the URI), URIs resolved against the playlist's own URL. Playback does not use it:
/// libavformat's hls demuxer reads the local playlist written by `localText`.
enum HLSPlaylist {
    struct Variant {
        var variant: HLSVariant
        var url: String
    }
    struct Segment {
        var url: String
        var duration: Double
    }

    static func isPlaylist(_ text: String) -> Bool { text.hasPrefix("#EXTM3U") }

    static func variants(_ text: String, base: String) -> [Variant] {
        var out: [Variant] = []
        var pending: (bitrate: Int, width: Int, height: Int)?
        for line in lines(text) {
            if line.hasPrefix("#EXT-X-STREAM-INF:") {
                let attrs = attributes(String(line.dropFirst("#EXT-X-STREAM-INF:".count)))
                let size = (attrs["RESOLUTION"] ?? "").split(separator: "x").compactMap { Int($0) }
                pending = (Int(attrs["BANDWIDTH"] ?? "") ?? 0, size.count == 2 ? size[0] : 0, size.count == 2 ? size[1] : 0)
            } else if !line.hasPrefix("#"), let p = pending {
                out.append(Variant(variant: HLSVariant(id: out.count, bitrate: p.bitrate, width: p.width, height: p.height, streamIndex: out.count),
                                   url: resolve(line, base: base)))
                pending = nil
            }
        }
        return out
    }

    /// The media playlist's segments, and its initialisation section (`#EXT-X-MAP`: the
    /// header of fragmented MP4 segments), if any.
    static func segments(_ text: String, base: String) -> (initSection: String?, segments: [Segment]) {
        var out: [Segment] = []
        var duration: Double?
        var initSection: String?
        for line in lines(text) {
            if line.hasPrefix("#EXT-X-MAP:"), initSection == nil, let uri = attributes(String(line.dropFirst("#EXT-X-MAP:".count)))["URI"] {
                initSection = resolve(uri, base: base)
            } else if line.hasPrefix("#EXTINF:") {
                duration = Double(line.dropFirst("#EXTINF:".count).split(separator: ",").first ?? "") ?? 0
            } else if !line.hasPrefix("#"), let d = duration {
                out.append(Segment(url: resolve(line, base: base), duration: d))
                duration = nil
            }
        }
        return (initSection, out)
    }

    /// The local media playlist: the initialisation section, the finished segments from the
    /// first, up to the first one not yet on disk, and `#EXT-X-ENDLIST` (what is there plays as a
    /// finished item).
    /// With `key` (an AES-128 key kept for the asset), the playlist names it and the source's
    /// media sequence (from which the demuxer derives IVs the playlist does not give), and its
    /// files by their paths in `directory` (it is written elsewhere: `ContentKeys`).
    static func localText(_ segments: [SegmentRecord], key: (line: String, mediaSequence: Int)? = nil, directory: String = "") -> String {
        let prefix = directory.isEmpty ? "" : directory + "/"
        let initSection = segments.first { $0.initSection }
        let media = segments.filter { !$0.initSection }
        let ready = initSection?.done == false ? [] : media.prefix { $0.done }
        let target = Int((ready.map(\.duration).max() ?? 1).rounded(.up))
        var text = "#EXTM3U\n#EXT-X-VERSION:\(initSection == nil ? 3 : 7)\n#EXT-X-TARGETDURATION:\(max(1, target))\n"
            + "#EXT-X-MEDIA-SEQUENCE:\(key?.mediaSequence ?? 0)\n#EXT-X-PLAYLIST-TYPE:VOD\n"
        if let key { text += key.line + "\n" }
        if let initSection { text += "#EXT-X-MAP:URI=\"\(prefix)\(initSection.file)\"\n" }
        for s in ready { text += "#EXTINF:\(String(format: "%.6f", s.duration)),\n\(prefix)\(s.file)\n" }
        return text + "#EXT-X-ENDLIST\n"
    }

    /// The `#EXT-X-KEY` tags of a media playlist: method, key URI (absolute) and IV (as written).
    static func keys(_ text: String, base: String) -> [(method: String, uri: String?, iv: String?)] {
        lines(text).filter { $0.hasPrefix("#EXT-X-KEY:") }.map { line in
            let a = attributes(String(line.dropFirst("#EXT-X-KEY:".count)))
            return (a["METHOD"] ?? "", a["URI"].map { resolve($0, base: base) }, a["IV"])
        }
    }

    /// `#EXT-X-MEDIA-SEQUENCE` (0 when absent).
    static func mediaSequence(_ text: String) -> Int {
        lines(text).first { $0.hasPrefix("#EXT-X-MEDIA-SEQUENCE:") }.flatMap { Int($0.dropFirst("#EXT-X-MEDIA-SEQUENCE:".count)) } ?? 0
    }

    private static func lines(_ text: String) -> [String] {
        text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// `KEY=VALUE,KEY="VALUE, WITH COMMAS"` attributes.
    private static func attributes(_ s: String) -> [String: String] {
        var out: [String: String] = [:]
        var key = "", value = "", inKey = true, quoted = false
        for c in s + "," {
            if inKey {
                if c == "=" { inKey = false } else { key.append(c) }
            } else if c == "\"" {
                quoted.toggle()
            } else if c == ",", !quoted {
                out[key.trimmingCharacters(in: .whitespaces)] = value
                key = ""; value = ""; inKey = true
            } else {
                value.append(c)
            }
        }
        return out
    }

    static func resolve(_ uri: String, base: String) -> String {
        URL(string: uri, relativeTo: URL(string: base))?.absoluteString ?? uri
    }
}
