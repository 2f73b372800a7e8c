import Foundation
import ScanoutService
import ScanoutTestSupport
import Testing

/// The `hdr` config key: the mode, max bpc, screens' capabilities as configured, the default
/// metadata; every refusal names its field.
@Suite struct HDRConfigTests {
    static func parse(_ json: String) throws -> ServiceConfig { try ServiceConfig.parse(json) }

    @Test("every field read, shown by GET /config")
    func fields() throws {
        let c = try Self.parse(#"""
            {"hdr": {"mode": "off", "maxBpc": 12, "screens": {"HDMI-A-1": {"eotfs": ["sdr", "pq"], "maxLuminance": 800}},
                     "mastering": {"red": [0.68, 0.32], "green": [0.265, 0.69], "blue": [0.15, 0.06], "white": [0.3127, 0.329],
                                   "minLuminance": 0.0001, "maxLuminance": 1000},
                     "lightLevel": {"maxCLL": 900, "maxFALL": 300}, "toneMapping": "mobius"}}
            """#)
        #expect(c.hdr.mode == .off && c.hdr.maxBPC == 12)
        #expect(c.hdr.screens["HDMI-A-1"]?.eotfs == [.sdr, .pq] && c.hdr.screens["HDMI-A-1"]?.maxLuminance == 800)
        #expect(c.hdr.defaultMastering.red?.x == 0.68 && c.hdr.defaultMastering.maxLuminance == 1000)
        #expect(c.hdr.defaultLightLevel?.maxCLL == 900 && c.hdr.toneMapping?.curve == .mobius)
        #expect(try Self.parse(#"{"hdr": {"toneMapping": "none"}}"#).hdr.toneMapping == nil)
        let shown = try #require(c.json["hdr"] as? [String: Any])
        #expect(shown["mode"] as? String == "off" && shown["maxBpc"] as? Int == 12)
        #expect(((shown["screens"] as? [String: Any])?["HDMI-A-1"] as? [String: Any])?["eotfs"] as? [String] == ["sdr", "pq"])
        // The defaults.
        let d = try Self.parse("{}")
        #expect(d.hdr.mode == .auto && d.hdr.maxBPC == 10 && d.hdr.screens.isEmpty && d.hdr.defaultMastering.maxLuminance == 1000)
    }

    @Test("refusals name the field")
    func refusals() throws {
        let cases: [(String, String)] = [
            (#"{"hdr": {"mode": "on"}}"#, "hdr.mode"),
            (#"{"hdr": {"maxBpc": 8}}"#, "hdr.maxBpc"),
            (#"{"hdr": {"screens": {"HDMI-A-1": {"eotfs": ["hdr10"]}}}}"#, "hdr.screens.HDMI-A-1.eotfs"),
            (#"{"hdr": {"mastering": {"red": [0.7], "green": [0.1, 0.8], "blue": [0.1, 0.1], "white": [0.3, 0.3], "minLuminance": 0, "maxLuminance": 1000}}}"#,
             "hdr.mastering.red"),
            (#"{"hdr": {"lightLevel": {"maxCLL": -1, "maxFALL": 0}}}"#, "hdr.lightLevel.maxCLL"),
            (#"{"hdr": {"tonemap": "hable"}}"#, "hdr.tonemap"),
            (#"{"hdr": {"toneMapping": "aces"}}"#, "hdr.toneMapping"),
        ]
        for (json, field) in cases {
            do {
                _ = try Self.parse(json)
                Issue.record("accepted: \(json)")
            } catch let e as ConfigFileError {
                #expect(e.message.hasPrefix(field), "\(e.message)")
            }
        }
    }
}
