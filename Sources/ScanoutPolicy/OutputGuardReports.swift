import ScanoutKMS

/// A change of an output's verdict, published once per change.
public enum OutputGuardEvent: Sendable, Equatable {
    /// The output stopped showing the content (or its reason changed).
    case outputRestricted(output: String, reason: CensorReason)
    /// The output shows the content again.
    case outputUnrestricted(output: String)
}

/// Where an output's HDCP link stands, as the guard sees it.
public enum HDCPLinkState: String, Sendable, Equatable {
    /// The policy does not need HDCP on this output.
    case notRequired
    /// Asked for; not Enabled yet.
    case pending
    case enabled
    /// Not Enabled within the timeout (still asked for).
    case timedOut
    /// Was Enabled, fell back to Desired (still asked for).
    case lost
    /// The commit asking for it was refused.
    case failed
    /// Needed but not asked for: the connector lacks the property, no screen is connected, an
    /// earlier rule censors the output, or no frame was judged yet (`OutputStatus.reason` says which).
    case notRequested
}

/// One output as the guard last judged it, for the API and metrics.
public struct OutputStatus: Sendable, Equatable {
    public var output: String
    public var connectorID: UInt32
    public var connectorClass: ConnectorClass
    /// Whether the output's latest frame showed the content.
    public var screenConnectEnabled: Bool
    /// Why it is censored; nil while it shows the content.
    public var reason: CensorReason?
    public var framesCensored: Int
    public var hdcp: HDCPLinkState
}

/// Counters a metrics layer reads.
public struct OutputGuardCounters: Sendable, Equatable {
    /// Frames censored, by output name ("HDMI-A-1").
    public var framesCensored: [String: Int] = [:]
    /// HDCP requests that were not Enabled within the timeout.
    public var hdcpTimeouts = 0
    /// Enabled links that fell back to Desired.
    public var hdcpLinkLosses = 0
    /// Connectors whose HDCP request (or release) the device refused.
    public var hdcpCommitFailures = 0

    public init() {}
}

/// Why releasing HDCP failed. `description` is one line for logs.
public enum OutputGuardError: Error, Sendable, Equatable, CustomStringConvertible {
    case releaseFailed(output: String, error: KMSError)

    public var description: String {
        switch self {
        case let .releaseFailed(o, e): "\(o): setting Content Protection back to Undesired failed: \(e)"
        }
    }
}
