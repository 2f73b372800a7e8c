import CFFmpeg
import ScanoutCore

/// One stream of an input, as a player lists it: video, audio or subtitles, with what a viewer
/// chooses by (language, title, the container's default and forced flags). HLS alternative
/// renditions (`EXT-X-MEDIA`) appear as streams of their own with their `LANGUAGE` and `NAME`.
public struct TrackInfo: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        case video, audio, subtitle, data, attachment
    }
    /// The stream's index in the container.
    public var index: Int
    public var kind: Kind
    /// libavcodec's name for the codec (`aac`, `mp3`, `subrip`, `ass`, `webvtt`, `mov_text`...).
    public var codecName: String
    /// The language tag as the container gives it (ISO 639-2 `eng`, or a BCP 47 tag from HLS),
    /// nil when unset or `und`.
    public var language: String?
    /// The stream's title (`title` metadata; the rendition's `NAME` for HLS).
    public var title: String?
    public var isDefault: Bool
    public var isForced: Bool
    /// For audio: samples per second and channels (0 when unknown).
    public var sampleRate: Int
    public var channels: Int
    public var timeBase: Rational

    public init(index: Int, kind: Kind, codecName: String, language: String? = nil, title: String? = nil,
                isDefault: Bool = false, isForced: Bool = false, sampleRate: Int = 0, channels: Int = 0,
                timeBase: Rational = Rational(1, 1000)) {
        self.index = index
        self.kind = kind
        self.codecName = codecName
        self.language = language
        self.title = title
        self.isDefault = isDefault
        self.isForced = isForced
        self.sampleRate = sampleRate
        self.channels = channels
        self.timeBase = timeBase
    }

    /// Describes stream `st` of a format context.
    static func describe(_ st: UnsafeMutablePointer<AVStream>) -> TrackInfo {
        let par = st.pointee.codecpar!
        let kind: Kind
        switch par.pointee.codec_type {
        case AVMEDIA_TYPE_VIDEO: kind = .video
        case AVMEDIA_TYPE_AUDIO: kind = .audio
        case AVMEDIA_TYPE_SUBTITLE: kind = .subtitle
        case AVMEDIA_TYPE_ATTACHMENT: kind = .attachment
        default: kind = .data
        }
        func tag(_ key: String) -> String? {
            guard let e = av_dict_get(st.pointee.metadata, key, nil, 0), let v = e.pointee.value else { return nil }
            let s = String(cString: v)
            return s.isEmpty ? nil : s
        }
        let language = tag("language").flatMap { $0.lowercased() == "und" ? nil : $0 }
        let disposition = st.pointee.disposition
        return TrackInfo(index: Int(st.pointee.index), kind: kind,
                         codecName: avcodec_get_name(par.pointee.codec_id).map { String(cString: $0) } ?? "unknown",
                         language: language, title: tag("title") ?? tag("comment"),
                         isDefault: disposition & AV_DISPOSITION_DEFAULT != 0,
                         isForced: disposition & AV_DISPOSITION_FORCED != 0,
                         sampleRate: kind == .audio ? Int(par.pointee.sample_rate) : 0,
                         channels: kind == .audio ? Int(par.pointee.ch_layout.nb_channels) : 0,
                         timeBase: Rational(st.pointee.time_base))
    }
}

/// Picks a track of one kind the way a viewer's preferences say (mpv's `--alang`/`--slang`):
/// an explicit stream index first; then the first language of the preference list that some
/// track has (a two-letter code also matches its three-letter form: `en` = `eng`, `de` = `deu`/`ger`);
/// then, for audio, the track flagged default, else the first one. Subtitles are picked by index,
/// language, then the default flag, then the forced flag (mpv's choice): with none of them, none.
public enum TrackSelector {
    public static func pick(_ kind: TrackInfo.Kind, from tracks: [TrackInfo], index: Int? = nil,
                            languages: [String] = []) -> TrackInfo? {
        let candidates = tracks.filter { $0.kind == kind }
        if let index { return candidates.first { $0.index == index } }
        for wanted in languages {
            if let t = candidates.first(where: { matches(language: $0.language, wanted: wanted) }) { return t }
        }
        switch kind {
        case .subtitle:
            return candidates.first { $0.isDefault } ?? candidates.first { $0.isForced }
        default:
            return candidates.first { $0.isDefault } ?? candidates.first
        }
    }

    /// Whether a track's language tag matches a wanted one: case-insensitive, on the primary
    /// subtag (`en-US` matches `en`), a two-letter code matching its ISO 639-2 forms.
    public static func matches(language: String?, wanted: String) -> Bool {
        guard let language else { return false }
        let a = primary(language), b = primary(wanted)
        if a == b { return true }
        return iso639(a).contains(b) || iso639(b).contains(a)
    }

    private static func primary(_ tag: String) -> String {
        String(tag.lowercased().split(whereSeparator: { $0 == "-" || $0 == "_" }).first ?? "")
    }

    /// The ISO 639-2 codes (terminology and bibliographic) of common two-letter codes.
    private static func iso639(_ code: String) -> [String] {
        let table: [String: [String]] = [
            "en": ["eng"], "de": ["deu", "ger"], "fr": ["fra", "fre"], "es": ["spa"], "it": ["ita"],
            "nl": ["nld", "dut"], "pt": ["por"], "ru": ["rus"], "ja": ["jpn"], "zh": ["zho", "chi"],
            "ko": ["kor"], "ar": ["ara"], "sv": ["swe"], "no": ["nor"], "nb": ["nob"], "da": ["dan"],
            "fi": ["fin"], "pl": ["pol"], "cs": ["ces", "cze"], "el": ["ell", "gre"], "tr": ["tur"],
            "he": ["heb"], "hi": ["hin"], "hu": ["hun"], "ro": ["ron", "rum"], "uk": ["ukr"],
        ]
        return table[code] ?? []
    }
}
