import Foundation
import ScanoutDemux
import ScanoutDisplay
import ScanoutKMS
import ScanoutRender

// `hdr`: how HDR content goes to KMS screens (`HDRSettings`):
//
//     mode ("auto" | "off")          — auto: HDR where the screen declares the content's EOTF;
//                                      off: tone mapped to SDR everywhere
//     maxBpc (10...16)               — the most bits a channel asked of a link (default 10)
//     screens {"HDMI-A-1": {eotfs: ["sdr", "pq", "hlg"], maxLuminance, minLuminance}}
//                                    — what a screen takes, in place of what its EDID says
//     mastering {red, green, blue, white: [x, y], minLuminance, maxLuminance}
//                                    — sent for PQ content that states no mastering display
//     lightLevel {maxCLL, maxFALL}   — sent for PQ content that states no light levels
//     toneMapping ("hable" | "mobius" | "reinhard" | "clip" | "linear" | "bt2390" | "none")
//                                    — how HDR content is drawn in SDR (default hable)

extension Wire {
    struct HDR: Decodable {
        enum Field: String, CodingKey, CaseIterable { case mode, maxBpc, screens, mastering, lightLevel, toneMapping }
        var settings: HDRSettings

        init(from decoder: any Swift.Decoder) throws {
            let c = try decoder.container(keyedBy: Field.self)
            var s = HDRSettings()
            if let v = try c.decodeChoiceIfPresent(HDROutputMode.self, forKey: .mode) { s.mode = v }
            if let v = try c.decodeIfPresent(Int.self, forKey: .maxBpc, in: 10...16) { s.maxBPC = v }
            if let v = try c.decodeIfPresent([String: Screen].self, forKey: .screens) {
                for name in v.keys where name.isEmpty { throw APIError.badRequest(c.name(.screens), "a connector name (HDMI-A-1) for each screen") }
                s.screens = v.mapValues(\.capability)
            }
            if let v = try c.decodeIfPresent(Mastering.self, forKey: .mastering) { s.defaultMastering = v.display }
            if let v = try c.decodeIfPresent(LightLevel.self, forKey: .lightLevel) { s.defaultLightLevel = v.level }
            let curves = ToneCurve.allCases.map(\.rawValue) + ["none"]
            if let v = try c.decodeIfPresent(String.self, forKey: .toneMapping, oneOf: curves) {
                s.toneMapping = ToneCurve(rawValue: v).map { ToneMapping(curve: $0) }
            }
            settings = s
        }

        /// A screen's capability as configured.
        struct Screen: Decodable {
            enum Field: String, CodingKey, CaseIterable { case eotfs, maxLuminance, minLuminance }
            var capability: DisplayHDRCapability
            init(from decoder: any Swift.Decoder) throws {
                let c = try decoder.container(keyedBy: Field.self)
                let names = try c.decodeStrings(forKey: .eotfs, each: "one of sdr, hdrGamma, pq, hlg") ?? []
                var eotfs: [DisplayHDRCapability.EOTF] = []
                for n in names {
                    guard let e = DisplayHDRCapability.EOTF(rawValue: n) else {
                        throw APIError.badRequest(c.name(.eotfs), "one of sdr, hdrGamma, pq, hlg (got \"\(n)\")")
                    }
                    eotfs.append(e)
                }
                let max = try c.decodeIfPresent(Double.self, forKey: .maxLuminance, in: 1...10_000)
                let min = try c.decodeIfPresent(Double.self, forKey: .minLuminance, in: 0...100)
                capability = DisplayHDRCapability(eotfs: eotfs, maxLuminance: max, minLuminance: min)
            }
        }

        struct Mastering: Decodable {
            enum Field: String, CodingKey, CaseIterable { case red, green, blue, white, minLuminance, maxLuminance }
            var display: MasteringDisplay
            init(from decoder: any Swift.Decoder) throws {
                let c = try decoder.container(keyedBy: Field.self)
                func point(_ f: Field) throws -> Chromaticity {
                    let v = try c.decode([Double].self, forKey: f)
                    guard v.count == 2, v.allSatisfy({ (0...1).contains($0) }) else {
                        throw APIError.badRequest(c.name(f), "a chromaticity [x, y], each 0...1")
                    }
                    return Chromaticity(x: v[0], y: v[1])
                }
                display = MasteringDisplay(red: try point(.red), green: try point(.green), blue: try point(.blue), white: try point(.white),
                                           minLuminance: try c.decode(Double.self, forKey: .minLuminance, in: 0...100),
                                           maxLuminance: try c.decode(Double.self, forKey: .maxLuminance, in: 1...10_000))
            }
        }

        struct LightLevel: Decodable {
            enum Field: String, CodingKey, CaseIterable { case maxCLL, maxFALL }
            var level: ContentLightLevel
            init(from decoder: any Swift.Decoder) throws {
                let c = try decoder.container(keyedBy: Field.self)
                level = ContentLightLevel(maxCLL: try c.decode(Int.self, forKey: .maxCLL, in: 0...65535),
                                          maxFALL: try c.decode(Int.self, forKey: .maxFALL, in: 0...65535))
            }
        }
    }
}

extension ServiceConfig {
    func encodeHDR(into c: inout KeyedEncodingContainer<WireKey>) throws {
        struct Shown: Encodable {
            var mode: String, maxBpc: Int
            var screens: [String: DisplayHDRCapability]
            var mastering: MasteringDisplay
            var lightLevel: ContentLightLevel?
            var toneMapping: String
        }
        try c.encode(Shown(mode: hdr.mode.rawValue, maxBpc: hdr.maxBPC, screens: hdr.screens, mastering: hdr.defaultMastering,
                           lightLevel: hdr.defaultLightLevel, toneMapping: hdr.toneMapping?.curve.rawValue ?? "none"), forKey: "hdr")
    }
}
