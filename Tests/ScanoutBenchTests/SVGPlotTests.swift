@testable import ScanoutBench
import Testing

@Suite("bench SVG plot")
struct SVGPlotTests {
    /// Two inputs, Scanout and ffmpeg on each, and Scanout's frame times.
    static func results() -> [InputResult] {
        ["/m/a.mp4", "/m/b.mkv"].map { name in
            var r = InputResult(input: name, video: testVideo())
            r.tools = [ToolFigures(tool: "scanout", values: [120]), ToolFigures(tool: "ffmpeg", values: [60])]
            r.unitMs = [1, 2, 3, 4]
            return r
        }
    }

    @Test("a bar per tool per input scaled to a round maximum, a legend entry per tool, a curve per input")
    func bars() {
        let svg = SVGPlot.render(suite: .decode, results: Self.results(), threads: 2)
        #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"900\" height=\"760\""))
        #expect(svg.hasSuffix("</svg>\n"))
        #expect(svg.components(separatedBy: "<title>scanout 120.0 frames/s</title>").count - 1 == 2)
        #expect(svg.components(separatedBy: "<title>ffmpeg 60.0 frames/s</title>").count - 1 == 2)
        // The axis goes to 200 (the round ceiling of 120) over 300 px: 180 px and 90 px bars on a base line at y 350.
        #expect(svg.components(separatedBy: "y=\"170.0\" width=\"37.0\" height=\"180.0\" fill=\"#2b6cb0\"").count - 1 == 2)
        #expect(svg.components(separatedBy: "y=\"260.0\" width=\"37.0\" height=\"90.0\" fill=\"#2f855a\"").count - 1 == 2)
        #expect(svg.contains(">200.0</text>"))
        #expect(svg.components(separatedBy: "<polyline").count - 1 == 2)
        #expect(svg.contains(">— a.mp4</text>") && svg.contains(">— b.mkv</text>"))
        #expect(svg.contains("threads 2</text>"))
        #expect(!svg.contains(">mpv</text>"))
    }

    @Test("the axis maximum: the smallest of 1, 2, 2.5, 5 × 10^k at or above the value")
    func niceCeiling() {
        #expect(SVGPlot.niceCeiling(120) == 200)
        #expect(SVGPlot.niceCeiling(250) == 250)
        #expect(SVGPlot.niceCeiling(7) == 10)
        #expect(SVGPlot.niceCeiling(0.3) == 0.5)
        #expect(SVGPlot.niceCeiling(0) == 1)
        #expect(SVGPlot.niceCeiling(.nan) == 1)
    }

    @Test("text is escaped for XML")
    func escaping() {
        #expect(SVGPlot.esc("a<b & \"c\">") == "a&lt;b &amp; &quot;c&quot;&gt;")
    }
}
