import ScanoutKMS
import ScanoutCore
import ScanoutDemux
import ScanoutRender

/// Whether HDR content goes to a screen as HDR.
public enum HDROutputMode: String, Sendable, CaseIterable, Codable {
    /// As HDR where the screen declares the content's EOTF and the driver can signal it;
    /// tone mapped to SDR elsewhere.
    case auto
    /// Always SDR: HDR content tone mapped on every screen.
    case off
}

/// How a KMS display treats HDR content: the mode, screens' capabilities as configured (for
/// screens whose EDID lies or says nothing), the metadata sent when a stream states none, and the
/// highest `max bpc` asked of a link.
public struct HDRSettings: Sendable, Equatable {
    public var mode: HDROutputMode
    /// By connector name ("HDMI-A-1"), in place of what the screen's EDID says.
    public var screens: [String: DisplayHDRCapability]
    /// Sent for PQ content whose stream states no mastering display.
    public var defaultMastering: MasteringDisplay
    /// Sent for PQ content whose stream states no light levels; nil: "unknown" (zeros).
    public var defaultLightLevel: ContentLightLevel?
    /// The highest `max bpc` asked (at least 10; lowered to 10 when the link refuses more). Some
    /// links show no picture at 12 although the commit passes; 10 is enough for 10-bit content.
    public var maxBPC: Int
    /// How HDR content is brought to SDR where it is not shown as HDR; nil: its code values
    /// drawn as SDR's.
    public var toneMapping: ToneMapping?

    /// BT.2020 primaries, D65, 1000 cd/m² to 0.005 cd/m²: the usual HDR10 grading display.
    public static let bt2020Mastering = MasteringDisplay(
        red: Chromaticity(x: 0.708, y: 0.292), green: Chromaticity(x: 0.170, y: 0.797), blue: Chromaticity(x: 0.131, y: 0.046),
        white: Chromaticity(x: 0.3127, y: 0.3290), minLuminance: 0.005, maxLuminance: 1000)

    public init(mode: HDROutputMode = .auto, screens: [String: DisplayHDRCapability] = [:],
                defaultMastering: MasteringDisplay = HDRSettings.bt2020Mastering, defaultLightLevel: ContentLightLevel? = nil, maxBPC: Int = 10,
                toneMapping: ToneMapping? = .default) {
        self.mode = mode; self.screens = screens; self.defaultMastering = defaultMastering
        self.defaultLightLevel = defaultLightLevel; self.maxBPC = maxBPC; self.toneMapping = toneMapping
    }
}

/// What a frame says of its colour, as far as the output cares: its dynamic range and HDR10's
/// static metadata.
public struct HDRContent: Sendable, Equatable {
    public var range: DynamicRange
    public var mastering: MasteringDisplay?
    public var lightLevel: ContentLightLevel?
    public init(range: DynamicRange, mastering: MasteringDisplay? = nil, lightLevel: ContentLightLevel? = nil) {
        self.range = range; self.mastering = mastering; self.lightLevel = lightLevel
    }
}

/// How an output shows the content: its own SDR, HDR content tone mapped to SDR (and why), or
/// HDR signalled to the screen.
public enum OutputColour: Sendable, Equatable, CustomStringConvertible {
    case sdr
    case toneMapped(reason: String)
    case hdr(HDRSignal)

    public var description: String {
        switch self {
        case .sdr: "sdr"
        case let .toneMapped(reason): "tone mapped to SDR (\(reason))"
        case let .hdr(s): "\(s.eotf == .pq ? "HDR10 (PQ)" : "HLG"), \(s.maxBPC.map { "max bpc \($0), " } ?? "")XRGB2101010"
        }
    }

    public var signal: HDRSignal? { if case let .hdr(s) = self { s } else { nil } }
}

/// What an output sends for HDR: the connector's property values and the buffers' format.
public struct HDRSignal: Sendable, Equatable {
    public var eotf: HDROutputMetadata.EOTF
    public var metadata: HDROutputMetadata
    /// `Colorspace`'s BT2020_RGB value; nil when the connector has no such property.
    public var colorspace: UInt64?
    /// `max bpc`; nil when the connector has no such property.
    public var maxBPC: UInt64?
    public var range: DynamicRange { eotf == .pq ? .pq : .hlg }
}

/// Decides, per output and content, between HDR and tone mapping. Pure: the screen's connector as
/// last read, its capability (configured, else its EDID's), the primary plane's formats and
/// whether the renderer draws 10-bit buffers are all it looks at.
public enum HDRPlan {
    public struct Screen {
        public var connector: KMSConnector
        public var capability: DisplayHDRCapability?
        public var planeFormats: [UInt32]
        /// nil when the renderer draws 10-bit buffers; else why not.
        public var rendererRefusal: String?
        public init(connector: KMSConnector, capability: DisplayHDRCapability?, planeFormats: [UInt32], rendererRefusal: String? = nil) {
            self.connector = connector; self.capability = capability; self.planeFormats = planeFormats; self.rendererRefusal = rendererRefusal
        }
    }

    public static func decide(_ content: HDRContent?, on screen: Screen, settings: HDRSettings) -> OutputColour {
        guard let content, content.range != .sdr else { return .sdr }
        let name = screen.connector.name
        let eotf: DisplayHDRCapability.EOTF = content.range == .pq ? .pq : .hlg
        if settings.mode == .off { return .toneMapped(reason: "hdr is off") }
        guard let cap = screen.capability else { return .toneMapped(reason: "\(name)'s EDID has no HDR static metadata block") }
        guard cap.accepts(eotf) else {
            return .toneMapped(reason: "\(name) declares no \(eotf.rawValue.uppercased()) (its EOTFs: \(cap.eotfs.map(\.rawValue).joined(separator: ", ")))")
        }
        let c = screen.connector
        guard c.properties[HDRConnectorProperty.metadata] != nil else {
            return .toneMapped(reason: "\(name) has no \(HDRConnectorProperty.metadata) property (the driver cannot signal HDR)")
        }
        var colorspace: UInt64?
        if c.properties[HDRConnectorProperty.colorspace] != nil {
            guard let v = c.enums[HDRConnectorProperty.colorspace]?[HDRConnectorProperty.bt2020RGB] else {
                return .toneMapped(reason: "\(name)'s Colorspace offers no \(HDRConnectorProperty.bt2020RGB)")
            }
            colorspace = v
        }
        var bpc: UInt64?
        if c.properties[HDRConnectorProperty.maxBPC] != nil {
            let range = c.ranges[HDRConnectorProperty.maxBPC] ?? 8...UInt64(max(10, settings.maxBPC))
            let asked = UInt64(max(10, settings.maxBPC))
            guard range.upperBound >= 10 else { return .toneMapped(reason: "\(name)'s link carries at most \(range.upperBound) bits a channel") }
            bpc = min(asked, range.upperBound)
        }
        guard screen.planeFormats.contains(FourCC.xrgb2101010) else {
            return .toneMapped(reason: "\(name)'s primary plane takes no XRGB2101010")
        }
        if let refusal = screen.rendererRefusal { return .toneMapped(reason: refusal) }
        let infoEOTF: HDROutputMetadata.EOTF = content.range == .pq ? .pq : .hlg
        return .hdr(HDRSignal(eotf: infoEOTF, metadata: metadata(content, eotf: infoEOTF, settings: settings), colorspace: colorspace, maxBPC: bpc))
    }

    /// The infoframe for `content`: its mastering display and light levels (the configured
    /// defaults where it states none). HLG sends the EOTF alone: it has no static metadata.
    public static func metadata(_ content: HDRContent, eotf: HDROutputMetadata.EOTF, settings: HDRSettings) -> HDROutputMetadata {
        guard eotf == .pq else { return HDROutputMetadata(eotf: eotf) }
        var m = settings.defaultMastering
        if let own = content.mastering {
            if own.red != nil { m.red = own.red; m.green = own.green; m.blue = own.blue; m.white = own.white }
            if own.maxLuminance != nil { m.maxLuminance = own.maxLuminance; m.minLuminance = own.minLuminance }
        }
        let cll = content.lightLevel ?? settings.defaultLightLevel
        func point(_ c: Chromaticity?) -> HDROutputMetadata.Point { HDROutputMetadata.Point(cieX: c?.x ?? 0, y: c?.y ?? 0) }
        func u16(_ v: Double) -> UInt16 { UInt16(max(0, min(65535, v.rounded()))) }
        return HDROutputMetadata(eotf: eotf, primaries: [point(m.red), point(m.green), point(m.blue)], whitePoint: point(m.white),
                                 maxMasteringLuminance: u16(m.maxLuminance ?? 0), minMasteringLuminance: u16((m.minLuminance ?? 0) * 10_000),
                                 maxCLL: u16(Double(cll?.maxCLL ?? 0)), maxFALL: u16(Double(cll?.maxFALL ?? 0)))
    }
}
