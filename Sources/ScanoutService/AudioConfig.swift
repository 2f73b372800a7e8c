import Foundation
import ScanoutPlayer

extension Wire.ConfigBody {
    /// The sound fields: `audioDevice` (an ALSA PCM name; `none`, the default: silent),
    /// `volume` (0...100) and `mute` (runtime), `alang` (languages in order of preference, a
    /// string `"de,en"` or an array) and `aid` (a stream index) for items that name no track;
    /// `presentLog`: a file that gets a line per frame shown, with when it reached the screen.
    struct Audio {
        var device: String?
        var volume: Int?
        var muted: Bool?
        /// `alang`'s languages and `aid`'s track, each nil when not given.
        var languages: [String]?
        var track: Int?
        var presentLog: String?

        init(_ c: Fields) throws {
            device = try c.decodeIfPresent(String.self, forKey: .audioDevice)
            if device?.isEmpty == true {
                throw APIError.badRequest(c.name(.audioDevice), "must be an ALSA PCM name (see `scanout probe`) or \"none\"")
            }
            volume = try c.decodeIfPresent(Int.self, forKey: .volume, in: 0...100)
            muted = try c.decodeIfPresent(Bool.self, forKey: .mute)
            let selection = try Wire.audioSelection(c, languages: .alang, track: .aid)
            if c.has(.alang) { languages = selection.languages }
            if c.has(.aid) { track = selection.track }
            if c.has(.presentLog) { presentLog = try c.decode(String.self, forKey: .presentLog) }
        }
    }
}

extension ServiceConfig {
    mutating func applyAudio(_ a: Wire.ConfigBody.Audio) {
        if let v = a.device { audio.device = v }
        if let v = a.volume { audio.volume = v }
        if let v = a.muted { audio.muted = v }
        if let v = a.languages { audio.selection.languages = v }
        if let v = a.track { audio.selection.track = v }
        if let v = a.presentLog { presentLog = v }
    }

    func encodeAudio(into c: inout KeyedEncodingContainer<WireKey>) throws {
        try c.encode(audio.device, forKey: "audioDevice"); try c.encode(audio.volume, forKey: "volume"); try c.encode(audio.muted, forKey: "mute")
        try c.encode(audio.selection.languages, forKey: "alang"); try c.encodeNullable(audio.selection.track, forKey: "aid")
        try c.encodeNullable(presentLog, forKey: "presentLog")
    }
}
