import Foundation

/// tracks.mkv (English subtitles 0.5–1.5 s and 2.0–2.8 s, French 1.0–2.0 s) remuxed into
/// `scratch` with its English subtitle track flagged default, and the French one flagged
/// `frenchForced` or nothing: a clip whose default track mpv shows with no `--slang`/`--sid`.
public func defaultEnglishSubtitleClip(in scratch: Scratch, frenchForced: Bool) throws -> String {
    let out = scratch.path(frenchForced ? "default-forced.mkv" : "default.mkv")
    _ = try Proc.ffmpeg(["-i", try Fixtures.path("tracks.mkv"), "-map", "0", "-c", "copy",
                         "-disposition:s:0", "default", "-disposition:s:1", frenchForced ? "forced" : "0", "-y", out])
    return out
}
