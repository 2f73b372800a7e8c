import CEGL
import ScanoutCore
import ScanoutDemux
import ScanoutDecode

/// What a tone mapping yuv.frag program is compiled for (its `TONE_` defines): the transfer the
/// picture is coded in and the curve. The peak and the curve's constants are uniforms
/// (`ShaderToneMap`), so one program serves every peak.
struct ToneProgram: Hashable, Sendable {
    /// HLG (`TONE_HLG`); PQ otherwise.
    var hlg: Bool
    var curve: ToneCurve

    var defines: [String] { ["TONE_MAP"] + (hlg ? ["TONE_HLG"] : []) + ["TONE_\(curve.rawValue.uppercased())"] }
}

/// One HDR picture's tone mapping as yuv.frag does it: the program's choices, and the values of
/// its uniforms, worked out from the frame's tags and light levels as `CPUToneMapper` does.
struct ShaderToneMap: Equatable {
    var program: ToneProgram
    /// The signal's peak in units of reference white (100 cd/m²).
    var peak: Double
    /// FFmpeg's desat threshold in units of reference white; 0: off.
    var desaturation: Double
    /// Linear light in the picture's primaries to BT.709's, row-major.
    var matrix: [Double]

    /// The mapping `mapping` asks for on `frame` (a PQ or HLG frame); the peak is the mapping's,
    /// else the frame's (`ToneMapping.signalPeak`). Throws `ToneMappingError.invalidPeak` for a
    /// peak that is not a positive number, as the CPU mapper does.
    init(frame: VideoFrame, mapping: ToneMapping) throws {
        let nits = mapping.peak ?? ToneMapping.signalPeak(transfer: frame.colorTransfer, contentLightLevel: frame.contentLightLevel,
                                                          masteringDisplay: frame.masteringDisplay)
        guard nits > 0, nits.isFinite else { throw ToneMappingError.invalidPeak(nits) }
        program = ToneProgram(hlg: frame.colorTransfer == .hlg, curve: mapping.curve)
        peak = nits / HDRTransfer.referenceWhite
        desaturation = mapping.desaturation ?? 0
        matrix = HDRTransfer.matrixToBT709(from: frame.colorPrimaries)
    }

    /// The curve's constants for this peak (the shader's `u_curve`), as `ToneCurve` works them
    /// out: hable, 1 / hable(peak); mobius, the transform's p, q and scale; bt2390, the peak's
    /// PQ code, the target's (100 cd/m²) relative to it, and the knee.
    var curveConstants: (Float, Float, Float, Float) {
        switch program.curve {
        case .hable:
            return (Float(1 / ToneCurve.hable(peak)), 0, 0, 0)
        case .mobius:
            let m = ToneCurve.mobiusConstants(knee: 0.3, peak: peak)
            return (Float(m.p), Float(m.q), Float(m.scale), 0)
        case .bt2390:
            let b = ToneCurve.bt2390Constants(peak: peak)
            return (Float(b.sourcePQ), Float(b.maxLum), Float(b.knee), 0)
        case .reinhard, .clip, .linear:
            return (0, 0, 0, 0)
        }
    }

    /// Sets the tone mapping uniforms of `program` (in use).
    func set(in program: GLProgram) {
        program.set("u_toBT709", rowMajor: matrix)
        program.set("u_peak", float: Float(peak))
        program.set("u_curve", vec4: curveConstants)
        program.set("u_desat", float: Float(desaturation))
    }
}

/// How the GLES renderer brought the last HDR frame it was asked to tone map to SDR.
public enum GLToneMappingPath: Equatable, Sendable, CustomStringConvertible {
    /// In yuv.frag, from the Y'CbCr planes as they were imported (no CPU pass).
    case shader
    /// On the CPU (`CPUToneMapper`), uploaded as RGBA; why the shader could not.
    case cpu(reason: String)

    public var description: String {
        switch self {
        case .shader: return "in the shader"
        case .cpu(let why): return "on the CPU (\(why))"
        }
    }
}

extension GLRenderer {
    /// `source` as textures, tone mapped when `mapping` is given and it is an HDR frame (a bare
    /// DMA-BUF, untagged, is drawn as it is): in yuv.frag where the picture arrives as Y'CbCr
    /// planes and the program compiles, else on the CPU into RGBA (`toneMappers[zone]`, one per
    /// zone so that one zone's mapped picture is not rewritten under another's). The way taken
    /// is kept in `lastToneMapping`.
    func importMapped(_ source: GLSource, _ mapping: ToneMapping?, zone: Int) throws -> ImportedPicture {
        let hdrFrame: VideoFrame? = switch source {
        case .frame(let f), .surface(_, let f): CPUToneMapper.isHDR(f) ? f : nil
        case .dmabuf: nil
        }
        guard let mapping, let frame = hdrFrame else { return try importSource(source) }
        var reason = "turned off (toneMapsInShader is false)"
        if toneMapsInShader {
            let tone = try ShaderToneMap(frame: frame, mapping: mapping)
            var picture = try importSource(source)
            if let refusal = shaderToneRefusal(picture.imported, tone.program) {
                reason = refusal
            } else {
                picture.picture.toneMap = tone
                lastToneMapping = .shader
                return picture
            }
        }
        lastToneMapping = .cpu(reason: reason)
        while toneMappers.count <= zone { toneMappers.append(CPUToneMapper(output: .rgba)) }
        return try importSource(.frame(try toneMappers[zone].map(frame, mapping)))
    }

    /// Why `imported` cannot be tone mapped in yuv.frag with `tone`; nil when it can. The
    /// picture must be Y'CbCr planes (one external image is converted to 8-bit RGB by the
    /// driver), and the program must compile (tried once per layout and tone program).
    private func shaderToneRefusal(_ imported: FrameImporter.Imported, _ tone: ToneProgram) -> String? {
        guard imported.layout == .planar || imported.layout == .semiPlanar else {
            return "the picture arrived as one external image, which the driver converts to 8-bit RGB"
        }
        let key = YUVProgramKey(semiPlanar: imported.layout == .semiPlanar, bytePairs: imported.bytePairs,
                                luminanceAlpha: imported.luminanceAlpha, chroma: .bilinear, tableMath: false, tone: tone)
        if let refused = toneProgramRefusals[key] { return refused }
        do {
            _ = try yuvProgram(key)
            return nil
        } catch {
            let why = "the tone mapping program is refused: \(error)"
            toneProgramRefusals[key] = why
            return why
        }
    }
}
