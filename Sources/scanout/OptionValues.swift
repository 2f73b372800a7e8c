import ArgumentParser
import ScanoutDisplay
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ScanoutPlayer
import ScanoutRender
import ScanoutBench

// Option values that are one of a few words are enumerations: ArgumentParser refuses any other
// word with the list, and `scanout --generate-completion-script` offers them.

extension HardwareBackend: ExpressibleByArgument {}
extension PlayerType: ExpressibleByArgument {}
extension ScalingMode: ExpressibleByArgument {}
extension HDROutputMode: ExpressibleByArgument {}

/// `--output` of `play`: a screen, none, or the first that works.
enum OutputOption: String, CaseIterable, ExpressibleByArgument {
    case auto, kms, headless
}

/// `--renderer` of `play`, `serve` and `render`: who draws the frames.
enum RendererOption: String, CaseIterable, ExpressibleByArgument {
    case auto, gl, cpu

    var kms: KMSDisplay.RendererChoice { KMSDisplay.RendererChoice(rawValue: rawValue)! }
}

/// `--tonemap` of `render`: a curve that brings PQ and HLG pictures to SDR, or `none` (the
/// code values drawn as SDR's, as before tone mapping existed).
enum ToneMapOption: ExpressibleByArgument, Equatable {
    case none
    case curve(ToneCurve)

    init?(argument: String) {
        if argument == "none" { self = .none } else if let c = ToneCurve(rawValue: argument) { self = .curve(c) } else { return nil }
    }

    var defaultValueDescription: String { if case .curve(let c) = self { c.rawValue } else { "none" } }
    static var allValueStrings: [String] { ToneCurve.allCases.map(\.rawValue) + ["none"] }

    /// The mapping the renderers are given; nil for `none`.
    var mapping: ToneMapping? { if case .curve(let c) = self { ToneMapping(curve: c) } else { nil } }
}

/// `--renderer` of `bench`'s render suite.
extension BenchRenderer: ExpressibleByArgument {}

/// `--egl-platform` of `play`: one EGL platform for the headless output, or the first that works.
enum EGLPlatformOption: String, CaseIterable, ExpressibleByArgument {
    case auto, surfaceless, device, `default`

    var platform: HeadlessPlatform? { HeadlessPlatform(rawValue: rawValue) }
}

/// Completion words for options whose value is checked with the config file's own rules, so that
/// a bad value is named as the config file names it.
enum CompletionWords {
    static let output: CompletionKind = .list(OutputOption.allCases.map(\.rawValue))
    static let repeatMode: CompletionKind = .list(RepeatMode.allCases.map(\.rawValue))
    static let logLevel: CompletionKind = .list(["trace", "debug", "info", "notice", "warning", "error", "critical"])
}

/// `--variant` of the frame-exact commands (`framemd5`, `decode`, `render`): the one variant of an
/// HLS master playlist they read, start to end, with no change of variant (`VariantPin`).
struct VariantOptions: ParsableArguments {
    @Option(help: ArgumentHelp("HLS master playlist: read only variant N (from 0, in the playlist's order). Default: the first, as ffmpeg -map 0:v:0 reads it, or with --max-height/--max-bitrate the tallest they allow.", valueName: "N"))
    var variant: Int?

    /// Refuses a negative index, and an index beside the caps that also choose.
    func check(with input: InputOptions) throws {
        if let variant, variant < 0 { throw ValidationError("--variant: variants count from 0, not \(variant)") }
        if variant != nil, input.maxHeight != nil || input.maxBitrate != nil {
            throw ValidationError("--variant picks one variant; leave out --max-height and --max-bitrate")
        }
    }

    /// The input options with one variant kept.
    func demuxer(_ input: InputOptions) -> DemuxerOptions {
        var options = input.demuxer
        options.variantPin = VariantPin(index: variant)
        return options
    }

    /// Says on stderr which variant `demuxer` keeps ("variant 0 of 3: 256x192, 165 kb/s"), unless
    /// quiet or the playlist has no other.
    func announce(_ demuxer: Demuxer, quiet: Bool) {
        guard !quiet, let kept = demuxer.keptVariant, kept.count > 1 else { return }
        StandardError.write("\(kept)\n")
    }
}

/// `--output`, the 0.6.0 spelling of what `framemd5`, `decode` (`-o`/`--out`: a file) and
/// `render` (`--out`: a folder) write: accepted for one more release, with a warning naming the
/// new spelling. Hidden from the help; `--output` elsewhere means a screen (`play`, `serve`).
struct DeprecatedOutputOption: ParsableArguments {
    @Option(name: .customLong("output"), help: .hidden) var legacy: String?

    /// Refuses both spellings at once.
    func check(beside current: String?, newSpelling: String) throws {
        if legacy != nil, current != nil { throw ValidationError("give \(newSpelling) once; --output is its old spelling") }
    }

    /// `current` (the new option's value), else the old option's with a warning on stderr.
    func value(_ current: String?, newSpelling: String, command: String) -> String? {
        guard current == nil, let legacy else { return current }
        StandardError.write("scanout \(command): --output is deprecated and goes in the next release; use \(newSpelling) \(legacy)\n")
        return legacy
    }
}
extension ToneCurve: ExpressibleByArgument {}
