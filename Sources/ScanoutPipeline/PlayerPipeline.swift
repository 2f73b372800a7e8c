import ScanoutPlayer
import ScanoutPolicy

extension PlaybackPipeline {
    /// Puts this pipeline behind `engine` (whose display it is), on the engine's thread: items
    /// decode with this output's decoder options (native planes on a screen), each item's policy
    /// (its token's, looked up in `authorizer`; the default policy without one) goes on the outputs
    /// when the item becomes current, and what the outputs report becomes engine events and
    /// counters. The engine keeps the pipeline from then on.
    public func serve(_ engine: PlayerEngine, authorizer: ContentAuthorizer) {
        engine.configuration.decoder = decoding(engine.configuration.decoder)
        onReport = { [unowned engine] report in
            switch report {
            case let .censored(output, reason): engine.reportOutputCensored(output: output, reason: reason)
            case let .shown(output): engine.reportOutputCensored(output: output, reason: nil)
            case let .frameCensored(output): engine.countCensoredFrame(output: output)
            case let .hdcpChanged(output, state): engine.reportHDCPChanged(output: output, state: state.rawValue)
            case let .failed(message): engine.reportWarning("content policy: \(message)")
            case let .captureFailed(message): engine.reportWarning("capture stopped: \(message)")
            case let .colourChanged(output, colour): engine.reportOutputColour(output: output, colour: colour)
            }
        }
        engine.onItemChanged = { item in self.apply(policy: authorizer.policy(token: item.token)) }
    }

    /// A player engine on this pipeline's display, driven on the calling thread (`scanout
    /// play`): items decode with this output's decoder options, as `serve` sets them up; the
    /// output's reports and the content policy stay the caller's.
    public func engine(configuration: PlayerConfiguration, emit: @escaping (PlayerEvent) -> Void) -> PlayerEngine {
        var c = configuration
        c.decoder = decoding(c.decoder)
        return PlayerEngine(display: display, configuration: c, emit: emit)
    }
}
