import Foundation
import ScanoutService
import ScanoutTestSupport
import Testing

/// The `offline` config key: a flag (keepAll) or an object.
@Suite struct OfflineConfigTests {
    static func parse(_ json: String) throws -> ServiceConfig { try ServiceConfig.parse(json) }

    @Test func aFlagOrAnObject() throws {
        #expect(try Self.parse(#"{"offline": true}"#).offline.keepAll)
        #expect(try !Self.parse(#"{"offline": false}"#).offline.keepAll)
        let c = try Self.parse(#"{"offline": {"keepAll": true, "concurrentDownloads": 3, "minFreeBytes": 1000, "maxHeight": 720}}"#)
        #expect(c.offline.keepAll && c.offline.concurrentDownloads == 3 && c.offline.minFreeBytes == 1000 && c.offline.maxHeight == 720)
        #expect((c.json["offline"] as? [String: Any])?["concurrentDownloads"] as? Int == 3)
        #expect(throws: ConfigFileError.self) { try Self.parse(#"{"offline": 1}"#) }
        #expect(throws: ConfigFileError.self) { try Self.parse(#"{"offline": {"concurrentDownloads": 0}}"#) }
        #expect(throws: ConfigFileError.self) { try Self.parse(#"{"offline": {"bogus": 1}}"#) }
    }
}
