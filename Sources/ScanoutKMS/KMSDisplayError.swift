/// Why the KMS display could not start or go on. `description` is one line naming the device or
/// connector and the cause.
public enum KMSDisplayError: Error, Equatable, CustomStringConvertible {
    case noDevice(path: String, reason: String)
    case noCard(directory: String)
    case permissionDenied(path: String)
    case noAtomic(path: String, driver: String)
    case masterHeld(path: String, holders: [String])
    case noConnectedConnector(path: String, connectors: [String])
    case connectorNotFound(name: String, path: String, available: [String])
    case connectorDisconnected(name: String, path: String)
    case noCRTC(connector: String)
    case noPrimaryPlane(connector: String)
    case commitRejected(path: String, outputs: [String], error: KMSError)
    case noWriteback(path: String)
    case flipTimeout(path: String, crtcID: UInt32, milliseconds: Int32)
    case bufferFailed(String)

    public var description: String {
        switch self {
        case let .noDevice(path, reason): "cannot open KMS device \(path): \(reason)"
        case let .noCard(directory): "no KMS device: \(directory) has no card that opens (use --output headless)"
        case let .permissionDenied(path): "permission denied opening \(path): run as root or add the user to the 'video' group"
        case let .noAtomic(path, driver): "\(path) (\(driver)) does not support atomic modesetting"
        case let .masterHeld(path, holders):
            "cannot become DRM master of \(path): another process is master"
                + (holders.isEmpty ? "" : " (processes with it open: \(holders.joined(separator: ", ")))")
                + "; stop the compositor or switch to a free VT"
        case let .noConnectedConnector(path, connectors):
            "no connected screen on \(path)" + (connectors.isEmpty ? "" : " (connectors: \(connectors.joined(separator: ", ")))")
        case let .connectorNotFound(name, path, available):
            "no connector \(name) on \(path) (it has \(available.joined(separator: ", ")))"
        case let .connectorDisconnected(name, path): "connector \(name) on \(path) has no screen connected"
        case let .noCRTC(connector): "no free CRTC can drive \(connector)"
        case let .noPrimaryPlane(connector): "no primary plane with XRGB8888 for the CRTC of \(connector)"
        case let .commitRejected(path, outputs, error): "\(path) refused the commit for \(outputs.joined(separator: ", ")): \(error)"
        case let .noWriteback(path): "\(path) has no writeback connector to capture the screen with"
        case let .flipTimeout(path, crtc, ms): "\(path): no page-flip event from CRTC \(crtc) within \(ms) ms"
        case let .bufferFailed(why): "scanout buffer: \(why)"
        }
    }
}
