/// Why an audio device stopped: playback goes on with video-only timing (`AudioOutput.loss`).
public struct AudioLoss: Sendable, Equatable, CustomStringConvertible {
    public var device: String
    public var reason: String
    public init(device: String, reason: String) {
        self.device = device
        self.reason = reason
    }
    public var description: String { "audio device \(device) lost: \(reason); video goes on with its own clock" }
}
