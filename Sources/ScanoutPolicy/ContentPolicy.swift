// What a content item allows: which outputs may show it, which link protection they need, and
// whether its frames may be captured. Carried by a signed content token (`ContentToken`), or the
// configured default for content that comes without one.

/// The output restrictions of one content item.
public struct ContentPolicy: Sendable, Equatable, Codable, CustomStringConvertible {
    /// Whether external connectors (HDMI, DP, VGA, ...) and virtual ones may show the content.
    public enum ExternalOutput: String, Sendable, Equatable, Codable, CaseIterable {
        case allow, deny
    }

    /// The HDCP level an output's link needs before it may show the content.
    public enum HDCP: String, Sendable, Equatable, Codable, CaseIterable, Comparable {
        case none, type0, type1

        /// The `HDCP Content Type` property value (`DRM_MODE_HDCP_CONTENT_TYPE0/1`); nil for `none`.
        public var contentType: UInt64? {
            switch self {
            case .none: nil
            case .type0: 0
            case .type1: 1
            }
        }

        public static func < (a: HDCP, b: HDCP) -> Bool {
            let order: [HDCP] = [.none, .type0, .type1]
            return order.firstIndex(of: a)! < order.firstIndex(of: b)!
        }
    }

    /// Whether the content's frames may be captured (written to files, checksummed, snapshotted,
    /// written back by KMS).
    public enum Capture: String, Sendable, Equatable, Codable, CaseIterable {
        case allow, deny
    }

    public var externalOutput: ExternalOutput
    public var hdcp: HDCP
    public var capture: Capture

    public init(externalOutput: ExternalOutput, hdcp: HDCP, capture: Capture) {
        self.externalOutput = externalOutput
        self.hdcp = hdcp
        self.capture = capture
    }

    /// No restriction: every output, no HDCP, capture allowed.
    public static let unrestricted = ContentPolicy(externalOutput: .allow, hdcp: .none, capture: .allow)

    /// Every restriction: internal outputs only, HDCP type 1, no capture.
    public static let strictest = ContentPolicy(externalOutput: .deny, hdcp: .type1, capture: .deny)

    /// "externalOutput=deny hdcp=type1 capture=deny".
    public var description: String {
        "externalOutput=\(externalOutput.rawValue) hdcp=\(hdcp.rawValue) capture=\(capture.rawValue)"
    }
}

/// The player type a token suggests (the `playerType` claim): which decode and present path to use.
public enum PlayerTypeHint: String, Sendable, Equatable, Codable, CaseIterable {
    case auto, native, hw, sw
}
