import Foundation
import ScanoutKMS
import ScanoutTestSupport
import Testing

/// The CTA-861 HDR Static Metadata and Colorimetry blocks of an EDID, read by `DisplayHDRCapability`.
@Suite("HDR in an EDID")
struct EDIDHDRTests {
    static func edid(_ blocks: [[UInt8]]) -> [UInt8] { HDRClips.edid(blocks) }

    @Test("an HDR10 and HLG screen: its EOTFs, its luminances from the coded values, BT.2020 colorimetry")
    func hdrScreen() throws {
        // Extended tag 6: EOTFs SDR|PQ|HLG (0b1101), descriptor type 1, max CV 115, average CV 90, min CV 16.
        let hdr: [UInt8] = [0xe0 | 6, 6, 0x0d, 0x01, 115, 90, 16]
        // Extended tag 5: BT2020YCC and BT2020RGB, and DCI-P3.
        let colorimetry: [UInt8] = [0xe0 | 3, 5, 0xc0, 0x80]
        let h = try #require(DisplayHDRCapability.parse(edid: Self.edid([[0x40 | 3, 0x01, 0x02, 0x03], hdr, colorimetry])))
        #expect(h.eotfs == [.sdr, .pq, .hlg] && h.accepts(.pq) && !h.accepts(.hdrGamma))
        let max = 50 * pow(2, 115.0 / 32)
        #expect(abs(h.maxLuminance! - max) < 1e-9 && abs(h.maxLuminance! - 603.67) < 0.01)
        #expect(abs(h.maxFrameAverageLuminance! - 50 * pow(2, 90.0 / 32)) < 1e-9)
        #expect(abs(h.minLuminance! - max * (16.0 / 255) * (16.0 / 255) / 100) < 1e-12)
        #expect(h.colorimetry == ["BT2020YCC", "BT2020RGB", "DCI-P3"])
    }

    @Test("an SDR screen (no HDR or colorimetry block) and what is not an EDID: nil; a block cut short is not read past its end")
    func none() {
        #expect(DisplayHDRCapability.parse(edid: Self.edid([[0x40 | 3, 0x01, 0x02, 0x03]])) == nil)
        #expect(DisplayHDRCapability.parse(edid: [UInt8](repeating: 0, count: 256)) == nil)
        #expect(DisplayHDRCapability.parse(edid: Array(Self.edid([]).prefix(128))) == nil)
        // A block claiming 31 bytes past the data block area: skipped, no crash.
        var bad = Self.edid([[0xe0 | 2, 6, 0x04]])
        bad[128 + 4] = 0xe0 | 31
        #expect(DisplayHDRCapability.parse(edid: bad) == nil)
        // EOTFs only (a block of 3 bytes): no luminance stated.
        let short = DisplayHDRCapability.parse(edid: Self.edid([[0xe0 | 3, 6, 0x04, 0x01]]))
        #expect(short == DisplayHDRCapability(eotfs: [.pq]))
    }
}
