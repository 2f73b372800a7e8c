#if canImport(Glibc)
import Glibc
#endif
import ScanoutKMS
import ScanoutCore

// The fake's HDR side: a screen with an EDID, the connector properties HDR output sets, and the
// kernel's checks of their values.

extension FakeKMSDevice {
    /// `Colorspace` entries as the kernel's HDMI connectors offer them (a subset).
    public static let hdmiColorspaces: [String: UInt64] = ["Default": 0, "SMPTE_170M_YCC": 1, "BT709_YCC": 2, "BT2020_RGB": 9, "BT2020_YCC": 10]

    /// One screen, "HDMI-A-1" (id 30), `width`×`height`@60, with `edid` as its `EDID` blob (none
    /// when nil), `HDR_OUTPUT_METADATA` (when `metadataProperty`), `Colorspace` (when
    /// `colorspace`) and `max bpc` of `maxBPC` (none when nil); encoder 20, CRTC 10, primary plane
    /// 40 taking `primaryFormats`.
    /// With `videoPlane`, overlay plane 41 takes P010 and NV12 and has `COLOR_ENCODING` (BT.709 as
    /// found) and `COLOR_RANGE` (limited).
    public static func hdrScreen(edid: [UInt8]?, width: Int = 64, height: Int = 36, metadataProperty: Bool = true, colorspace: Bool = true,
                                 maxBPC: ClosedRange<UInt64>? = 6...16,
                                 primaryFormats: [UInt32] = [FourCC.xrgb8888, FourCC.xrgb2101010], videoPlane: Bool = false,
                                 clock: any PlaybackClock = MonotonicClock()) -> FakeKMSDevice {
        var connector = KMSConnector(id: 30, typeName: "HDMI-A", typeID: 1, connection: .connected,
                                     modes: [KMSMode(width: width, height: height, refresh: 60, preferred: true)], encoderIDs: [20],
                                     properties: connectorProperties)
        if metadataProperty { connector.properties[HDRConnectorProperty.metadata] = 0 }
        if colorspace {
            connector.properties[HDRConnectorProperty.colorspace] = 0
            connector.enums[HDRConnectorProperty.colorspace] = hdmiColorspaces
        }
        if let maxBPC {
            connector.properties[HDRConnectorProperty.maxBPC] = 8
            connector.ranges[HDRConnectorProperty.maxBPC] = maxBPC
        }
        let device = FakeKMSDevice(connectors: [connector], encoders: [KMSEncoder(id: 20, possibleCRTCs: 0b1)],
                                   crtcs: [KMSCRTC(id: 10, properties: crtcProperties)],
                                   planes: [KMSPlane(id: 40, type: .primary, possibleCRTCs: 0b1, formats: primaryFormats, properties: planeProperties)]
                                       + (videoPlane ? [Self.videoPlane()] : []),
                                   clock: clock)
        if let edid, let blob = try? device.createPropertyBlob(edid) { device.connectors[0].properties["EDID"] = UInt64(blob) }
        return device
    }

    /// Overlay plane 41: P010 and NV12, `COLOR_ENCODING` BT.709 and `COLOR_RANGE` limited as found.
    static func videoPlane() -> KMSPlane {
        var properties = planeProperties
        properties["COLOR_ENCODING"] = 1
        properties["COLOR_RANGE"] = 0
        var plane = KMSPlane(id: 41, type: .overlay, possibleCRTCs: 0b1, formats: [FourCC.p010, FourCC.nv12], properties: properties)
        plane.enums = ["COLOR_ENCODING": ["ITU-R BT.601 YCbCr": 0, "ITU-R BT.709 YCbCr": 1, "ITU-R BT.2020 YCbCr": 2],
                       "COLOR_RANGE": ["YCbCr limited range": 0, "YCbCr full range": 1]]
        return plane
    }

    /// The kernel's checks of connector values: an enum value the property offers, a range
    /// value within its bounds, an `HDR_OUTPUT_METADATA` that is 0 or a blob of the kernel's
    /// struct size; and the HDR rejection rules.
    func checkPropertyValues(_ request: AtomicRequest, flags: AtomicFlags) throws {
        func refuse(_ reason: String) -> KMSError { .commitRejected(errno: EINVAL, reason: reason) }
        for a in request.assignments {
            if let p = planes.first(where: { $0.id == a.objectID }), let entries = p.enums[a.property], !entries.values.contains(a.value) {
                throw refuse("plane \(p.id): \(a.property) has no entry \(a.value)")
            }
            guard let c = connectors.first(where: { $0.id == a.objectID }) else { continue }
            if let entries = c.enums[a.property], !entries.values.contains(a.value) {
                throw refuse("connector \(c.id): \(a.property) has no entry \(a.value) (it offers \(entries.sorted { $0.value < $1.value }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ")))")
            }
            if let range = c.ranges[a.property], !range.contains(a.value) {
                throw refuse("connector \(c.id): \(a.property) \(a.value) is outside \(range.lowerBound)...\(range.upperBound)")
            }
            if a.property == HDRConnectorProperty.metadata, a.value != 0 {
                guard a.value <= UInt64(UInt32.max), let bytes = blobs[UInt32(a.value)] else { throw refuse("connector \(c.id): no blob \(a.value)") }
                guard bytes.count == HDROutputMetadata.byteCount else {
                    throw refuse("connector \(c.id): HDR_OUTPUT_METADATA blob of \(bytes.count) bytes (\(HDROutputMetadata.byteCount) expected)")
                }
            }
            for (rule, errno) in rejections {
                switch rule {
                case let .maxBPCAbove(limit) where a.property == HDRConnectorProperty.maxBPC && a.value > limit:
                    throw KMSError.commitRejected(errno: errno, reason: "connector \(c.id): the link carries at most \(limit) bits a channel")
                case .hdrMetadataNeedsModeset where a.property == HDRConnectorProperty.metadata && !flags.contains(.allowModeset)
                    && c.properties[a.property] != a.value:
                    throw KMSError.commitRejected(errno: errno, reason: "connector \(c.id): HDR_OUTPUT_METADATA changes need ALLOW_MODESET")
                default:
                    break
                }
            }
        }
    }

    /// The HDR metadata the connector sends now (nil: none).
    public func hdrMetadata(connector id: UInt32) -> HDROutputMetadata? {
        guard let v = value(of: id, HDRConnectorProperty.metadata), v != 0, let bytes = blobs[UInt32(truncatingIfNeeded: v)] else { return nil }
        return HDROutputMetadata(bytes: bytes)
    }
}

extension FakeKMSDevice {
    /// Gives connector `id` a property it did not have (an HDMI connector's `Content Protection`).
    public func addConnectorProperty(_ id: UInt32, _ name: String, _ value: UInt64) throws {
        guard let i = connectors.firstIndex(where: { $0.id == id }) else { throw KMSError.unknownObject(id) }
        connectors[i].properties[name] = value
    }
}
