import CDRM
#if canImport(Glibc)
import Glibc
#endif

/// One DRM card as libdrm describes it.
public struct KMSCardInfo: Sendable, Equatable {
    public var path: String
    public var driver: String
    public var connectors: Int
    public var connectedConnectors: [String]
    public var crtcs: Int
}

/// Which output playback uses, and why.
public struct OutputChoice: Sendable, Equatable {
    public enum Kind: String, Sendable { case kms, headless }
    public var kind: Kind
    public var reason: String
    /// The card to open, for `.kms`.
    public var devicePath: String?
    public init(kind: Kind, reason: String, devicePath: String? = nil) {
        self.kind = kind
        self.reason = reason
        self.devicePath = devicePath
    }
}

/// Looks at the machine's DRM devices (`drmModeGetResources` on each `/dev/dri/card*`) and picks
/// the best output: a KMS screen when one is connected and usable, the headless output otherwise.
public enum OutputSelector {
    /// Every card under `directory` that opens, with its connectors.
    public static func cards(directory: String = "/dev/dri") -> [KMSCardInfo] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasPrefix("card") { names.append(name) }
        }
        return names.sorted().compactMap { describeCard(directory + "/" + $0) }
    }

    static func describeCard(_ path: String) -> KMSCardInfo? {
        let fd = open(path, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var driver = "unknown"
        if let v = drmGetVersion(fd) {
            if let n = v.pointee.name { driver = String(cString: n) }
            drmFreeVersion(v)
        }
        guard let res = drmModeGetResources(fd) else {
            return KMSCardInfo(path: path, driver: driver, connectors: 0, connectedConnectors: [], crtcs: 0)
        }
        defer { drmModeFreeResources(res) }
        var connected: [String] = []
        for i in 0..<Int(res.pointee.count_connectors) {
            guard let conn = drmModeGetConnector(fd, res.pointee.connectors[i]) else { continue }
            if conn.pointee.connection == DRM_MODE_CONNECTED {
                let typeName = drmModeGetConnectorTypeName(conn.pointee.connector_type).map { String(cString: $0) } ?? "Unknown"
                connected.append("\(typeName)-\(conn.pointee.connector_type_id)")
            }
            drmModeFreeConnector(conn)
        }
        return KMSCardInfo(path: path, driver: driver, connectors: Int(res.pointee.count_connectors),
                           connectedConnectors: connected, crtcs: Int(res.pointee.count_crtcs))
    }

    /// The output for `requested` (`auto`, `kms` or `headless`): a card with a connected screen
    /// for `auto` and `kms`, the headless output otherwise, with the reason. (`kms` with no screen
    /// still answers `.headless`; the caller turns that into an error, since KMS was asked for.)
    public static func choose(requested: String = "auto", directory: String = "/dev/dri") -> OutputChoice {
        if requested == "headless" { return OutputChoice(kind: .headless, reason: "headless output requested") }
        let found = cards(directory: directory)
        if found.isEmpty {
            return OutputChoice(kind: .headless, reason: "no KMS device (\(directory) has no card that opens)")
        }
        let screens = found.filter { !$0.connectedConnectors.isEmpty }
        guard let first = screens.first else {
            return OutputChoice(kind: .headless, reason: "no connected screen on \(found.map(\.path).joined(separator: ", "))")
        }
        return OutputChoice(kind: .kms, reason: "screens found on \(first.path) (\(first.connectedConnectors.joined(separator: ", ")))",
                            devicePath: first.path)
    }
}
