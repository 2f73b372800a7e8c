import ScanoutCore
import ScanoutDemux

/// The four filters of one scaled draw (`ScalerTaps`), as yuv.frag's CHROMA_SCALED_EXACT reads
/// them from one RGBA8 texture: per filter, a row of first positions, then a row per tap, each
/// value stored as (R * 256 + G) - 32768.
struct ScaledTaps: Equatable {
    /// Luma across, chroma across, luma down, chroma down.
    let filters: [ScalerTaps]
    /// The first row of each filter in the texture.
    let rows: [Int]
    let image: RGBAImage

    /// The geometry a draw's taps depend on (the upright source's plane sizes and the scaled size).
    struct Key: Hashable {
        var luma: Size
        var chroma: Size
        var destination: Size
        /// The source's chroma is not subsampled either way (4:4:4).
        var chromaUnsubsampled: Bool

        /// swscale keeps chroma at full resolution (yuv2rgb_full) for an odd output width and
        /// for a 4:4:4 source, else one chroma sample for each pair of pixels.
        var fullChroma: Bool { destination.width % 2 == 1 || chromaUnsubsampled }
    }

    struct Size: Hashable {
        var width: Int, height: Int
    }

    /// nil where swscale would not scale in one pass, or the texture would exceed `maxSize`.
    init?(_ key: Key, maxSize: Int) {
        let d = key.destination
        guard let lumaAcross = ScalerTaps(source: key.luma.width, destination: d.width, vertical: false),
              let chromaAcross = ScalerTaps(source: key.chroma.width, destination: key.fullChroma ? d.width : (d.width + 1) / 2, vertical: false),
              let lumaDown = ScalerTaps(source: key.luma.height, destination: d.height, vertical: true),
              let chromaDown = ScalerTaps(source: key.chroma.height, destination: d.height, vertical: true) else { return nil }
        filters = [lumaAcross, chromaAcross, lumaDown, chromaDown]
        var rows: [Int] = []
        var height = 0
        for f in filters {
            rows.append(height)
            height += 1 + f.size
        }
        self.rows = rows
        let width = max(d.width, d.height)
        guard width <= maxSize, height <= maxSize, max(key.luma.width, key.luma.height) < 32768 else { return nil }
        var bytes = [UInt8](repeating: 0, count: 4 * width * height)
        func put(_ value: Int, column: Int, row: Int) {
            let u = value + 32768
            let at = 4 * (row * width + column)
            bytes[at] = UInt8(u >> 8)
            bytes[at + 1] = UInt8(u & 255)
        }
        for (f, first) in zip(filters, rows) {
            for (i, position) in f.positions.enumerated() {
                put(position, column: i, row: first)
                for (k, w) in f.weights(at: i).enumerated() { put(w, column: i, row: first + 1 + k) }
            }
        }
        image = RGBAImage(width: width, height: height, bytes: bytes)
    }
}

/// The taps textures of the last few scaled geometries (one per zone size, typically), made
/// once and reused while the geometry stays.
struct ScaledTapsCache {
    private var entries: [ScaledTaps.Key: (taps: ScaledTaps, texture: LayerTexture)] = [:]
    /// Geometries that cannot be drawn exactly, not tried again.
    private var refused: Set<ScaledTaps.Key> = []
    private static let capacity = 16

    mutating func taps(for key: ScaledTaps.Key, context: EGLDisplayContext) throws -> (taps: ScaledTaps, texture: GLTexture)? {
        if let e = entries[key], let t = e.texture.texture { return (e.taps, t) }
        if refused.contains(key) { return nil }
        guard let taps = ScaledTaps(key, maxSize: context.maxTextureSize) else {
            if refused.count >= Self.capacity { refused.removeAll() }
            refused.insert(key)
            return nil
        }
        var texture = LayerTexture(name: "scaler taps")
        try texture.update(taps.image, context: context)
        if entries.count >= Self.capacity { entries.removeAll() }
        entries[key] = (taps, texture)
        return texture.texture.map { (taps, $0) }
    }
}

extension GLRenderer {
    /// Sets up CHROMA_SCALED_EXACT for drawing `frame` turned by `orientation` into `rect`, or
    /// returns false where it does not apply: samples over 8 bits, no table math, chroma that
    /// cannot be turned plane by plane, or filters swscale would not run in one pass. Binds the
    /// taps to texture unit 3.
    func exactScaledTaps(for imported: FrameImporter.Imported, _ frame: Picture, orientation: Orientation,
                         rect: PixelRect) throws -> ScaledTaps.Key? {
        guard tableMath, imported.bitDepth == 8, !imported.bytePairs, rect.width > 0, rect.height > 0,
              !orientation.swapsDimensions || imported.chromaLog2.0 == imported.chromaLog2.1 else { return nil }
        func ceilShift(_ v: Int, _ s: Int) -> Int { -((-v) >> s) }
        let storedChroma = (ceilShift(frame.width, imported.chromaLog2.0), ceilShift(frame.height, imported.chromaLog2.1))
        let luma = PlaneTransformSize.upright(frame.width, frame.height, orientation)
        let chroma = PlaneTransformSize.upright(storedChroma.0, storedChroma.1, orientation)
        let key = ScaledTaps.Key(luma: .init(width: luma.width, height: luma.height),
                                 chroma: .init(width: chroma.width, height: chroma.height),
                                 destination: .init(width: rect.width, height: rect.height),
                                 chromaUnsubsampled: imported.chromaLog2 == (0, 0))
        return try scaledTaps.taps(for: key, context: context) == nil ? nil : key
    }

    /// The uniforms of CHROMA_SCALED_EXACT for `key` (from `exactScaledTaps`), in `program`.
    func setScaledTaps(_ key: ScaledTaps.Key, in program: GLProgram, frame: Picture, imported: FrameImporter.Imported,
                       orientation: Orientation, rect: PixelRect) throws {
        guard let (taps, texture) = try scaledTaps.taps(for: key, context: context) else { return }
        bind(texture, unit: 3, to: "u_taps", in: program, linear: false)
        program.set("u_tapsSize", vec2: (Float(taps.image.width), Float(taps.image.height)))
        program.set("u_tapRows", vec4: (Float(taps.rows[0]), Float(taps.rows[1]), Float(taps.rows[2]), Float(taps.rows[3])))
        let sizes = taps.filters.map { Float($0.size) }
        program.set("u_tapCounts", vec4: (sizes[0], sizes[1], sizes[2], sizes[3]))
        program.set("u_dstOrigin", vec2: (Float(rect.x), Float(rect.y)))
        if key.fullChroma {
            let c = Self.swscaleFullChroma(space: frame.colorSpace, full: frame.fullRange)
            program.set("u_fullCoeffs", vec4: (Float(c.v2r), Float(c.v2g), Float(c.u2g), Float(c.u2b)))
            program.set("u_fullLuma", vec2: (Float(c.y), Float(c.yOffset)))
        }
        func upright(_ size: ScaledTaps.Size, storedWidth: Int, storedHeight: Int) -> [Float] {
            let m = Composition.sourceMap(rect: PixelRect(x: 0, y: 0, width: size.width, height: size.height),
                                          sourceWidth: storedWidth, sourceHeight: storedHeight, orientation: orientation)
            return [m[0], m[3], 0, m[1], m[4], 0, m[2], m[5], 1].map { Float($0) }
        }
        let swapped = orientation.swapsDimensions
        program.set("u_lumaUpright", mat3: upright(key.luma, storedWidth: frame.width, storedHeight: frame.height))
        program.set("u_chromaUpright", mat3: upright(key.chroma, storedWidth: swapped ? key.chroma.height : key.chroma.width,
                                                     storedHeight: swapped ? key.chroma.width : key.chroma.height))
    }
}
