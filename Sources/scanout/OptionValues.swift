import ArgumentParser
import ScanoutDisplay
import ScanoutMedia
import ScanoutPlayer
import ScanoutRender

// Option values that are one of a few words are enumerations: ArgumentParser refuses any other
// word with the list, and `scanout --generate-completion-script` offers them.

extension HardwareBackend: ExpressibleByArgument {}
extension PlayerType: ExpressibleByArgument {}
extension ScalingMode: ExpressibleByArgument {}

/// `--output` of `play`: a screen, none, or the first that works.
enum OutputOption: String, CaseIterable, ExpressibleByArgument {
    case auto, kms, headless
}

/// `--renderer` of `play`, `serve` and `render`: who draws the frames.
enum RendererOption: String, CaseIterable, ExpressibleByArgument {
    case auto, gl, cpu

    var kms: KMSDisplay.RendererChoice { KMSDisplay.RendererChoice(rawValue: rawValue)! }
}

/// `--renderer` of `bench`'s render suite.
enum BenchRenderer: String, CaseIterable, ExpressibleByArgument {
    case cpu, gl
}

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
