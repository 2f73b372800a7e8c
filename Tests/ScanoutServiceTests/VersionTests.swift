import ScanoutService
import Testing

@Suite struct VersionTests {
    @Test func versionIsSemantic() {
        #expect(ScanoutVersion.string.split(separator: ".").count == 3)
    }
}
