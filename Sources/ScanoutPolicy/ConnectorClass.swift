import ScanoutKMS

/// What kind of sink a connector leads to, which decides the rules that apply to it.
public enum ConnectorClass: String, Sendable, Equatable, CaseIterable {
    /// A panel built into the device (eDP, LVDS, DSI, DPI): part of the device, trusted.
    case `internal`
    /// A socket anything can be plugged into (HDMI, DP, DVI, VGA, TV, USB, ...), recorders included.
    case external
    /// A software sink (vkms, a virtual machine's display): it can lead anywhere.
    case virtual
    /// A writeback connector: it copies the screen to memory, which is capture.
    case writeback

    /// The class of libdrm's connector type name (`KMSConnector.typeName`). A name not known here
    /// ("Unknown", "SPI", a future type) is external: restrictions fail closed.
    public init(typeName: String) {
        switch typeName {
        case "eDP", "LVDS", "DSI", "DPI": self = .internal
        case "Virtual": self = .virtual
        case "Writeback": self = .writeback
        default: self = .external
        }
    }

    public init(_ connector: KMSConnector) { self.init(typeName: connector.typeName) }
}
