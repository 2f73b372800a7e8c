import Foundation

/// What a screen says of HDR in its EDID: the CTA-861 extension's HDR Static Metadata data block
/// (the transfer functions it takes, its luminance) and its Colorimetry data block (BT.2020
/// among them). Read from the connector's `EDID` property blob.
public struct DisplayHDRCapability: Sendable, Equatable, Codable {
    /// The transfer functions (EOTFs) of the HDR Static Metadata block.
    public enum EOTF: String, Sendable, Codable, CaseIterable {
        /// Traditional gamma, SDR luminance range.
        case sdr
        /// Traditional gamma, HDR luminance range.
        case hdrGamma
        /// SMPTE ST 2084 (PQ, HDR10).
        case pq
        /// Hybrid log-gamma.
        case hlg
    }

    /// Empty when the EDID has no HDR Static Metadata block.
    public var eotfs: [EOTF]
    /// cd/m², from the block's coded values (CTA-861.3): nil when not stated.
    public var maxLuminance: Double?
    public var maxFrameAverageLuminance: Double?
    public var minLuminance: Double?
    /// The Colorimetry block's flags by name (`BT2020RGB`, `BT2020YCC`, `DCI-P3`...); empty when
    /// there is no such block.
    public var colorimetry: [String]

    public init(eotfs: [EOTF] = [], maxLuminance: Double? = nil, maxFrameAverageLuminance: Double? = nil, minLuminance: Double? = nil,
                colorimetry: [String] = []) {
        self.eotfs = eotfs; self.maxLuminance = maxLuminance; self.maxFrameAverageLuminance = maxFrameAverageLuminance
        self.minLuminance = minLuminance; self.colorimetry = colorimetry
    }

    /// Whether the screen takes content of this transfer in HDR.
    public func accepts(_ eotf: EOTF) -> Bool { eotfs.contains(eotf) }

    /// The HDR capability in `edid` (a base block and its extensions); nil when it has neither
    /// block (or is not an EDID). A malformed extension is skipped, never read past its end.
    public static func parse(edid: [UInt8]) -> DisplayHDRCapability? {
        guard edid.count >= 128, edid[0..<8] == [0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00] else { return nil }
        var found = DisplayHDRCapability()
        var any = false
        let extensions = min(Int(edid[126]), edid.count / 128 - 1)
        guard extensions > 0 else { return nil }
        for e in 1...extensions {
            let block = Array(edid[(e * 128)..<(e * 128 + 128)])
            // CTA-861 extension (tag 2): data blocks from byte 4 to the detailed timings' offset.
            guard block[0] == 0x02, block[1] >= 3 else { continue }
            let end = min(Int(block[2]), 127)
            var i = 4
            while i < end {
                let tag = block[i] >> 5, length = Int(block[i] & 0x1f)
                guard i + length < min(end + 1, 128) else { break }
                if tag == 7, length >= 1 {
                    let payload = Array(block[(i + 1)...(i + length)])
                    switch payload[0] {
                    case 6: any = true; found.readStaticMetadata(payload)
                    case 5: any = true; found.readColorimetry(payload)
                    default: break
                    }
                }
                i += 1 + length
            }
        }
        return any ? found : nil
    }

    /// HDR Static Metadata data block (extended tag 6): EOTFs, descriptor types, then the coded
    /// luminances when the block is long enough.
    private mutating func readStaticMetadata(_ p: [UInt8]) {
        guard p.count >= 3 else { return }
        let bits = p[1]
        eotfs = EOTF.allCases.enumerated().filter { bits & (1 << $0.offset) != 0 }.map(\.element)
        // CTA-861.3: max = 50 × 2^(CV/32); min = max × (CV/255)² / 100.
        if p.count >= 4, p[3] != 0 { maxLuminance = 50 * pow(2, Double(p[3]) / 32) }
        if p.count >= 5, p[4] != 0 { maxFrameAverageLuminance = 50 * pow(2, Double(p[4]) / 32) }
        if p.count >= 6, let max = maxLuminance { minLuminance = max * (Double(p[5]) / 255) * (Double(p[5]) / 255) / 100 }
    }

    /// Colorimetry data block (extended tag 5): two flag bytes (the second's DCI-P3 bit in CTA-861-G).
    private mutating func readColorimetry(_ p: [UInt8]) {
        let names = ["xvYCC601", "xvYCC709", "sYCC601", "opYCC601", "opRGB", "BT2020cYCC", "BT2020YCC", "BT2020RGB"]
        guard p.count >= 2 else { return }
        colorimetry = names.enumerated().filter { p[1] & (1 << $0.offset) != 0 }.map(\.element)
        if p.count >= 3, p[2] & 0x80 != 0 { colorimetry.append("DCI-P3") }
    }
}
