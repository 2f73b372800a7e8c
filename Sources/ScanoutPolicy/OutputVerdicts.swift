import ScanoutKMS

/// Why an output must not show the content. `description` is one line for logs and the API.
public enum CensorReason: Sendable, Equatable, CustomStringConvertible {
    /// A writeback connector while the policy denies capture.
    case captureDenied(output: String)
    /// An external or virtual connector while the policy denies external output.
    case externalOutputDenied(output: String, connectorClass: ConnectorClass)
    /// HDCP is needed and the connector lacks the property that asks for it.
    case hdcpUnsupported(output: String, missingProperty: String)
    /// HDCP is needed and no screen is connected.
    case hdcpNotConnected(output: String)
    /// HDCP was asked for; the kernel has not reported Enabled yet.
    case hdcpPending(output: String, required: ContentPolicy.HDCP)
    /// HDCP was not Enabled within the timeout.
    case hdcpTimedOut(output: String, required: ContentPolicy.HDCP, seconds: Double)
    /// HDCP was Enabled and fell back to Desired (the link lost authentication).
    case hdcpLost(output: String)
    /// The atomic commit that asks for HDCP was refused.
    case hdcpRequestFailed(output: String, error: KMSError)

    public var output: String {
        switch self {
        case let .captureDenied(o), let .externalOutputDenied(o, _), let .hdcpUnsupported(o, _), let .hdcpNotConnected(o),
             let .hdcpPending(o, _), let .hdcpTimedOut(o, _, _), let .hdcpLost(o), let .hdcpRequestFailed(o, _):
            o
        }
    }

    public var description: String {
        switch self {
        case let .captureDenied(o): "\(o): writeback is capture, and the content policy denies capture"
        case let .externalOutputDenied(o, c): "\(o): \(c.rawValue) output, and the content policy denies external outputs"
        case let .hdcpUnsupported(o, p): "\(o): the content needs HDCP and the connector has no \"\(p)\" property"
        case let .hdcpNotConnected(o): "\(o): the content needs HDCP and no screen is connected"
        case let .hdcpPending(o, t): "\(o): waiting for HDCP \(t.rawValue) (Content Protection is not Enabled yet)"
        case let .hdcpTimedOut(o, t, s): "\(o): HDCP \(t.rawValue) was not enabled within \(s) s; check the cable and that the screen supports HDCP"
        case let .hdcpLost(o): "\(o): HDCP link lost (Content Protection fell back from Enabled to Desired)"
        case let .hdcpRequestFailed(o, e): "\(o): asking for HDCP failed: \(e)"
        }
    }
}

/// Show the frame, or draw a censored frame (black or a slate: the display decides) instead.
public typealias OutputVerdict = OutputFilterVerdict<CensorReason>
