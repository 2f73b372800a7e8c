/// libdrm's connector type names (`drmModeGetConnectorTypeName`), by `DRM_MODE_CONNECTOR_*`.
public let drmConnectorTypeNames: [String] = [
    "Unknown", "VGA", "DVI-I", "DVI-D", "DVI-A", "Composite", "SVIDEO", "LVDS", "Component",
    "DIN", "DP", "HDMI-A", "HDMI-B", "TV", "eDP", "Virtual", "DSI", "DPI", "Writeback", "SPI", "USB",
]

/// "HDMI-A-1": a connector's name as libdrm and the kernel form it.
public func connectorName(type: String, typeID: UInt32) -> String { "\(type)-\(typeID)" }

/// "HDMI-A-1" from the numeric `DRM_MODE_CONNECTOR_*` type (11); unknown numbers are "Unknown".
public func connectorName(type: UInt32, typeID: UInt32) -> String {
    let name = Int(type) < drmConnectorTypeNames.count ? drmConnectorTypeNames[Int(type)] : "Unknown"
    return connectorName(type: name, typeID: typeID)
}

/// The mode to use on `connector`: `requested` as "WxH@R" (exact) or "WxH" (the preferred one of
/// that size, else the highest refresh); nil → the preferred mode, else the largest (area, then
/// refresh).
public func chooseMode(connector: KMSConnector, requested: String?) throws -> KMSMode {
    let modes = connector.modes
    guard !modes.isEmpty else { throw KMSError.noModes(connector: connector.name) }
    func larger(_ a: KMSMode, _ b: KMSMode) -> Bool {
        (a.width * a.height, a.refresh) < (b.width * b.height, b.refresh)
    }
    guard let requested else {
        if let preferred = modes.first(where: \.preferred) { return preferred }
        return modes.max(by: larger)!
    }
    let parts = requested.split(separator: "@", omittingEmptySubsequences: false)
    let size = parts[0].split(separator: "x", omittingEmptySubsequences: false)
    guard parts.count <= 2, size.count == 2, let w = Int(size[0]), let h = Int(size[1]), w > 0, h > 0 else {
        throw KMSError.invalidModeRequest(requested)
    }
    var refresh: Int?
    if parts.count == 2 {
        guard let r = Int(parts[1]), r > 0 else { throw KMSError.invalidModeRequest(requested) }
        refresh = r
    }
    let matching = modes.filter { $0.width == w && $0.height == h && (refresh == nil || $0.refresh == refresh) }
    if let preferred = matching.first(where: \.preferred) { return preferred }
    if let best = matching.max(by: { $0.refresh < $1.refresh }) { return best }
    var seen = Set<String>()
    let available = modes.map(\.description).filter { seen.insert($0).inserted }
    throw KMSError.noModeMatching(requested: requested, connector: connector.name, available: available)
}

extension KMSMode {
    /// The kernel's `struct drm_mode_modeinfo` for this mode (68 bytes, the `MODE_ID` blob). Modes
    /// without a timing (made up in tests) get one with blanking-free totals.
    public var modeInfoBytes: [UInt8] {
        let t = timing ?? KMSModeTiming(clock: UInt32(width * height * refresh / 1000), hdisplay: UInt16(width), hsyncStart: UInt16(width),
                                        hsyncEnd: UInt16(width), htotal: UInt16(width), hskew: 0, vdisplay: UInt16(height),
                                        vsyncStart: UInt16(height), vsyncEnd: UInt16(height), vtotal: UInt16(height), vscan: 0,
                                        vrefresh: UInt32(refresh), flags: 0, type: preferred ? 1 << 3 : 0, name: "\(width)x\(height)")
        var b: [UInt8] = []
        b.reserveCapacity(68)
        func u32(_ v: UInt32) { for i in 0..<4 { b.append(UInt8(truncatingIfNeeded: v >> (8 * UInt32(i)))) } }
        func u16(_ v: UInt16) { b.append(UInt8(truncatingIfNeeded: v)); b.append(UInt8(truncatingIfNeeded: v >> 8)) }
        u32(t.clock)
        for v in [t.hdisplay, t.hsyncStart, t.hsyncEnd, t.htotal, t.hskew, t.vdisplay, t.vsyncStart, t.vsyncEnd, t.vtotal, t.vscan] { u16(v) }
        u32(t.vrefresh); u32(t.flags); u32(t.type)
        let name = Array(t.name.utf8.prefix(31))
        b += name + [UInt8](repeating: 0, count: 32 - name.count)
        return b
    }
}
