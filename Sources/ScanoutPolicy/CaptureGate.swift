// Capture is any path that copies decoded frames out of the player: files (`render`, `decode`,
// `framemd5`), snapshots, and KMS writeback connectors. Each such path asks the gate first.

/// What a capture is for.
public enum CapturePurpose: String, Sendable, Equatable, CaseIterable {
    /// A KMS writeback connector copying the composed screen to memory.
    case writeback
    /// Frames or checksums written to a file or a pipe.
    case file
    /// One still image of what is playing.
    case snapshot
}

/// A capture refused by the content's policy. `description` is one line for stderr.
public struct CaptureRefused: Error, Sendable, Equatable, CustomStringConvertible {
    public var purpose: CapturePurpose
    public var policy: ContentPolicy

    public init(purpose: CapturePurpose, policy: ContentPolicy) {
        self.purpose = purpose
        self.policy = policy
    }

    public var description: String {
        let what = switch purpose {
        case .writeback: "writeback capture"
        case .file: "writing frames to a file"
        case .snapshot: "a snapshot"
        }
        return "\(what) refused: the content policy denies capture (capture=deny; policy \(policy))"
    }
}

/// The one check every capture path makes before it writes anything.
public enum CaptureGate {
    /// Throws `CaptureRefused` when `policy` denies capture.
    public static func check(policy: ContentPolicy, purpose: CapturePurpose) throws(CaptureRefused) {
        if policy.capture == .deny { throw CaptureRefused(purpose: purpose, policy: policy) }
    }
}
