import Foundation
import ScanoutPlayer

extension ServiceConfig {
    /// The sound fields: `audioDevice` (an ALSA PCM name; `none`, the default: silent),
    /// `volume` (0...100) and `mute` (runtime), `alang` (languages in order of preference, a
    /// string `"de,en"` or an array) and `aid` (a stream index) for items that name no track;
    /// `presentLog`: a file that gets a line per frame shown, with when it reached the screen.
    mutating func applyAudio(_ o: inout JSONObject) throws(APIError) {
        if let v = try o.string("audioDevice") {
            guard !v.isEmpty else { throw .badRequest("audioDevice", "must be an ALSA PCM name (see `scanout probe`) or \"none\"") }
            audio.device = v
        }
        if let v = try o.int("volume", range: 0...100) { audio.volume = v }
        if let v = try o.bool("mute") { audio.muted = v }
        let selection = try Self.audioSelection(&o)
        if o.has("alang") { audio.selection.languages = selection.languages }
        if o.has("aid") { audio.selection.track = selection.track }
        if o.has("presentLog") { presentLog = try o.string("presentLog", nullable: true) }
    }

    /// `alang` and `aid` of the config (absent: empty); a playlist item's are `Wire.audioSelection`.
    static func audioSelection(_ o: inout JSONObject) throws(APIError) -> AudioSelection {
        var s = AudioSelection()
        if o.has("alang") { s.languages = try o.decode("alang", as: Wire.AudioLanguages.self)?.tags ?? [] }
        s.track = try o.int("aid", range: 0...1000)
        return s
    }

    static let audioKeys: Set<String> = ["audioDevice", "volume", "mute", "alang", "aid", "presentLog"]
    static let audioRuntimeKeys: Set<String> = ["volume", "mute"]

    func encodeAudio(into c: inout KeyedEncodingContainer<WireKey>) throws {
        try c.encode(audio.device, forKey: "audioDevice"); try c.encode(audio.volume, forKey: "volume"); try c.encode(audio.muted, forKey: "mute")
        try c.encode(audio.selection.languages, forKey: "alang"); try c.encodeNullable(audio.selection.track, forKey: "aid")
        try c.encodeNullable(presentLog, forKey: "presentLog")
    }
}
