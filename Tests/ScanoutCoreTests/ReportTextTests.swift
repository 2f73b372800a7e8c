import ScanoutCore
import Testing

@Suite("report text")
struct ReportTextTests {
    @Test("fixed decimals: rounded, padded with zeros, a dash for what is not a number")
    func fixed() {
        #expect(format1(12.34) == "12.3")
        #expect(format1(12.36) == "12.4")
        #expect(format2(3) == "3.00")
        #expect(format2(0.5) == "0.50")
        #expect(formatFixed(1.0 / 3, 3) == "0.333")
        #expect(formatFixed(2.5, 0) == "3.0")
        #expect(format1(.nan) == "-")
        #expect(format2(.infinity) == "-")
    }

    @Test("a column: the text, then spaces to the width, at least one")
    func column() {
        #expect(pad("tool", 8) == "tool    ")
        #expect(pad("scanout", 7) == "scanout ")
        #expect(pad("gstreamer", 4) == "gstreamer ")
        #expect(pad("", 2) == "  ")
    }
}
