import ScanoutKMS
import ScanoutCore

// HDR frames on a plane as they are: the screen switched to HDR as for a composited frame
// (`prepareColour`: the connector's values go with the frame's commit), and the plane told that
// its Y'CbCr is BT.2020 (`COLOR_ENCODING`) and its range (`COLOR_RANGE`), where the driver has
// these properties. A plane so set is put back as found for the next SDR frame on it.

extension KMSDisplay {
    static let colorEncoding = "COLOR_ENCODING"
    static let colorRange = "COLOR_RANGE"

    /// The `COLOR_ENCODING` value of BT.2020 Y'CbCr on `plane`; nil when it has no such entry.
    static func bt2020Encoding(_ plane: KMSPlane) -> UInt64? {
        plane.enums[colorEncoding]?["ITU-R BT.2020 YCbCr"]
    }

    /// Why an HDR frame cannot go on a plane of `output` (the screen does not show HDR: the
    /// frame is to be tone mapped, which only composition does); nil when it may be tried, or
    /// for an SDR frame.
    func nativeColourRefusal(_ output: Output, _ hdr: HDRContent?) throws -> String? {
        guard let hdr else { return nil }
        try prepareColour(output, for: hdr)
        if case let .toneMapped(reason) = output.colour { return "the HDR frame is tone mapped (\(reason))" }
        return nil
    }

    /// `plane`'s colour properties for the frame: BT.2020 and the frame's range for HDR; as found
    /// for SDR on a plane an HDR frame changed.
    func setPlaneColour(_ plane: KMSPlane, hdr: Bool, fullRange: Bool, in request: inout AtomicRequest) {
        if hdr, let encoding = Self.bt2020Encoding(plane) {
            request.set(plane.id, Self.colorEncoding, encoding)
            let name = fullRange ? "YCbCr full range" : "YCbCr limited range"
            if let range = plane.enums[Self.colorRange]?[name] { request.set(plane.id, Self.colorRange, range) }
            colourPlanes.insert(plane.id)
        } else if !hdr, colourPlanes.contains(plane.id) {
            setFoundColour(of: plane.id, in: &request)
            colourPlanes.remove(plane.id)
        }
    }

    /// Plane `id`'s `COLOR_ENCODING` and `COLOR_RANGE` as found at start.
    func setFoundColour(of id: UInt32, in request: inout AtomicRequest) {
        let found = restoreState.resources.planes.first { $0.id == id }?.properties ?? [:]
        for name in [Self.colorEncoding, Self.colorRange] {
            if let v = found[name] { request.set(id, name, v) }
        }
    }
}
