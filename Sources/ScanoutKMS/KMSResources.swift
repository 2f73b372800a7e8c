/// A connector's link state (`DRM_MODE_CONNECTED` and friends).
public enum KMSConnectionState: String, Sendable, Equatable {
    case connected, disconnected, unknown
}

/// The full timing of a mode (`drmModeModeInfo` less the C layout), kept so that a real device can
/// turn a chosen mode back into a `MODE_ID` blob. Absent for modes made up in tests.
public struct KMSModeTiming: Sendable, Equatable {
    public var clock: UInt32
    public var hdisplay, hsyncStart, hsyncEnd, htotal, hskew: UInt16
    public var vdisplay, vsyncStart, vsyncEnd, vtotal, vscan: UInt16
    public var vrefresh: UInt32
    public var flags: UInt32
    public var type: UInt32
    public var name: String

    public init(clock: UInt32, hdisplay: UInt16, hsyncStart: UInt16, hsyncEnd: UInt16, htotal: UInt16, hskew: UInt16,
                vdisplay: UInt16, vsyncStart: UInt16, vsyncEnd: UInt16, vtotal: UInt16, vscan: UInt16,
                vrefresh: UInt32, flags: UInt32, type: UInt32, name: String) {
        self.clock = clock
        self.hdisplay = hdisplay; self.hsyncStart = hsyncStart; self.hsyncEnd = hsyncEnd
        self.htotal = htotal; self.hskew = hskew
        self.vdisplay = vdisplay; self.vsyncStart = vsyncStart; self.vsyncEnd = vsyncEnd
        self.vtotal = vtotal; self.vscan = vscan
        self.vrefresh = vrefresh; self.flags = flags; self.type = type; self.name = name
    }
}

/// One display mode a connector offers.
public struct KMSMode: Sendable, Equatable, CustomStringConvertible {
    public var width: Int
    public var height: Int
    /// Vertical refresh in whole hertz (libdrm's `vrefresh`).
    public var refresh: Int
    /// The sink's preferred mode (`DRM_MODE_TYPE_PREFERRED`).
    public var preferred: Bool
    public var timing: KMSModeTiming?

    public init(width: Int, height: Int, refresh: Int, preferred: Bool = false, timing: KMSModeTiming? = nil) {
        self.width = width
        self.height = height
        self.refresh = refresh
        self.preferred = preferred
        self.timing = timing
    }

    /// "1920x1080@60", the form `chooseMode` accepts.
    public var description: String { "\(width)x\(height)@\(refresh)" }
}

/// A connector (a screen's socket).
public struct KMSConnector: Sendable, Equatable {
    public var id: UInt32
    /// libdrm's type name ("HDMI-A", "DP", "Virtual").
    public var typeName: String
    /// The number among connectors of the same type (the 1 in "HDMI-A-1").
    public var typeID: UInt32
    public var connection: KMSConnectionState
    public var modes: [KMSMode]
    /// Encoders that can drive this connector.
    public var encoderIDs: [UInt32]
    /// Property values by name ("CRTC_ID", "DPMS", ...).
    public var properties: [String: UInt64]
    /// The screen's width in millimetres, as its EDID says (0: unknown).
    public var widthMM: Int
    /// The entries of each enum property, by property name then entry name ("Colorspace":
    /// "BT2020_RGB" → 9): a value is only valid where the driver offers it.
    public var enums: [String: [String: UInt64]] = [:]
    /// The bounds of each range property ("max bpc": 6...12).
    public var ranges: [String: ClosedRange<UInt64>] = [:]

    public init(id: UInt32, typeName: String, typeID: UInt32, connection: KMSConnectionState,
                modes: [KMSMode], encoderIDs: [UInt32] = [], properties: [String: UInt64] = [:], widthMM: Int = 0) {
        self.widthMM = widthMM
        self.id = id
        self.typeName = typeName
        self.typeID = typeID
        self.connection = connection
        self.modes = modes
        self.encoderIDs = encoderIDs
        self.properties = properties
    }

    /// "HDMI-A-1", as libdrm and the kernel name it.
    public var name: String { connectorName(type: typeName, typeID: typeID) }
}

/// An encoder and the CRTCs it can be fed from.
public struct KMSEncoder: Sendable, Equatable {
    public var id: UInt32
    /// Bit i set: the i-th CRTC of `KMSResources.crtcs` can feed this encoder.
    public var possibleCRTCs: UInt32

    public init(id: UInt32, possibleCRTCs: UInt32) {
        self.id = id
        self.possibleCRTCs = possibleCRTCs
    }
}

/// A CRTC (a scanout engine).
public struct KMSCRTC: Sendable, Equatable {
    public var id: UInt32
    /// Property values by name ("ACTIVE", "MODE_ID", ...).
    public var properties: [String: UInt64]

    public init(id: UInt32, properties: [String: UInt64] = [:]) {
        self.id = id
        self.properties = properties
    }
}

/// A plane's role (the `type` property).
public enum KMSPlaneType: String, Sendable, Equatable {
    case primary, overlay, cursor
}

/// A plane (a layer a CRTC composes).
public struct KMSPlane: Sendable, Equatable {
    public var id: UInt32
    public var type: KMSPlaneType
    /// Bit i set: the plane can be used with the i-th CRTC of `KMSResources.crtcs`.
    public var possibleCRTCs: UInt32
    /// Supported pixel formats (DRM fourccs).
    public var formats: [UInt32]
    /// Property values by name ("FB_ID", "CRTC_ID", "SRC_X", ...).
    public var properties: [String: UInt64]
    /// Layout modifiers per format, from `IN_FORMATS`; empty when the driver does not say.
    public var modifiers: [UInt32: [UInt64]]
    /// The values the `rotation` property offers (its enum entries); empty when the plane has no
    /// such property.
    public var rotations: KMSRotation
    /// The entries of each enum property ("COLOR_ENCODING": "ITU-R BT.2020 YCbCr" → 2).
    public var enums: [String: [String: UInt64]] = [:]

    public init(id: UInt32, type: KMSPlaneType, possibleCRTCs: UInt32, formats: [UInt32], properties: [String: UInt64] = [:],
                modifiers: [UInt32: [UInt64]] = [:], rotations: KMSRotation = []) {
        self.modifiers = modifiers
        self.rotations = rotations
        self.id = id
        self.type = type
        self.possibleCRTCs = possibleCRTCs
        self.formats = formats
        self.properties = properties
    }

    /// Whether the plane can be used with the CRTC at `crtcIndex` in `KMSResources.crtcs`.
    public func canUse(crtcIndex: Int) -> Bool {
        crtcIndex >= 0 && crtcIndex < 32 && possibleCRTCs & (1 << UInt32(crtcIndex)) != 0
    }
}

/// Everything a device offers, at one moment.
public struct KMSResources: Sendable, Equatable {
    public var connectors: [KMSConnector]
    public var encoders: [KMSEncoder]
    public var crtcs: [KMSCRTC]
    public var planes: [KMSPlane]

    public init(connectors: [KMSConnector], encoders: [KMSEncoder], crtcs: [KMSCRTC], planes: [KMSPlane]) {
        self.connectors = connectors
        self.encoders = encoders
        self.crtcs = crtcs
        self.planes = planes
    }

    /// The index of a CRTC in `crtcs`, the bit that `possibleCRTCs` masks use.
    public func crtcIndex(of id: UInt32) -> Int? { crtcs.firstIndex { $0.id == id } }
}
