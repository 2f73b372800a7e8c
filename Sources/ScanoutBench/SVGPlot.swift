import ScanoutCore

/// A self-contained SVG of a benchmark: one bar per tool per input (the suite's figure), and
/// Scanout's per-unit time distribution per input (a cumulative curve). Readable in any browser.
enum SVGPlot {
    static let palette = ["scanout": "#2b6cb0", "ffmpeg": "#2f855a", "mpv": "#b7791f", "gstreamer": "#9b2c2c"]

    /// `streams`: decodes at once per input (decode suite); the bars are then all streams' frames per second.
    static func render(suite: BenchSuite, results: [InputResult], threads: Int, streams: Int = 1) -> String {
        // Wide enough for every input's bars and name.
        let width = max(900.0, 130 * Double(results.count) + 100)
        let frame = Frame(left: 70, right: width - 20, top: 50, barHeight: 300, curveHeight: 260)
        let height = 60 + frame.barHeight + 80 + frame.curveHeight + 60
        var s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width))\" height=\"\(Int(height))\" font-family=\"sans-serif\" font-size=\"12\">\n"
        s += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
        let m = suite.metric
        s += text(20, 24, "scanout bench \(suite.rawValue): \(m.name) per input and tool (\(m.higherIsBetter ? "higher" : "lower") is better), threads \(threads == 0 ? "auto" : String(threads))\(streams > 1 ? " per stream, \(streams) streams at once (aggregate)" : "")", size: 15, bold: true)
        s += bars(suite: suite, results: results, in: frame)
        s += legend(results: results, in: frame)
        s += distribution(suite: suite, results: results, in: frame)
        s += "</svg>\n"
        return s
    }

    /// Where the two plots sit: the bars from `top` down `barHeight`, the curves 80 below them.
    private struct Frame {
        var left: Double, right: Double, top: Double, barHeight: Double, curveHeight: Double
        var bottom: Double { top + barHeight }
        var curveTop: Double { bottom + 80 }
        var curveBottom: Double { curveTop + curveHeight }
    }

    /// A bar per tool per input (the suite's median), with its value above it and the input's
    /// name below the group.
    private static func bars(suite: BenchSuite, results: [InputResult], in frame: Frame) -> String {
        let (left, right, top, bottom, barH) = (frame.left, frame.right, frame.top, frame.bottom, frame.barHeight)
        let m = suite.metric
        let maxValue = results.flatMap { $0.tools.map(\.median) }.filter(\.isFinite).max() ?? 1
        let scale = niceCeiling(maxValue)
        var s = axis(left: left, right: right, top: top, bottom: bottom, maxValue: scale, label: m.unit)
        let groupW = (right - left) / Double(max(results.count, 1))
        for (gi, r) in results.enumerated() {
            let tools = r.tools.filter { $0.median.isFinite }
            let bw = min(40, (groupW - 20) / Double(max(tools.count, 1)))
            let gx = left + Double(gi) * groupW + (groupW - bw * Double(tools.count)) / 2
            for (ti, t) in tools.enumerated() {
                let h = t.median / scale * barH
                let x = gx + Double(ti) * bw
                s += "<rect x=\"\(f(x))\" y=\"\(f(bottom - h))\" width=\"\(f(bw - 3))\" height=\"\(f(h))\" fill=\"\(palette[t.tool] ?? "#555")\"><title>\(esc(t.tool)) \(format1(t.median)) \(esc(m.unit))</title></rect>\n"
                s += text(x + (bw - 3) / 2, bottom - h - 4, format1(t.median), size: 9, anchor: "middle")
            }
            let name = r.input.split(separator: "/").last.map(String.init) ?? r.input
            s += text(left + Double(gi) * groupW + groupW / 2, bottom + 16, name, size: 10, anchor: "middle")
        }
        return s
    }

    /// A coloured square and the name of each tool that has a figure.
    private static func legend(results: [InputResult], in frame: Frame) -> String {
        var s = ""
        var lx = frame.left
        for tool in ["scanout", "ffmpeg", "mpv", "gstreamer"] where results.contains(where: { $0.tools.contains { $0.tool == tool } }) {
            s += "<rect x=\"\(f(lx))\" y=\"\(f(frame.bottom + 28))\" width=\"12\" height=\"12\" fill=\"\(palette[tool]!)\"/>" + text(lx + 16, frame.bottom + 38, tool, size: 11)
            lx += 100
        }
        return s
    }

    /// Scanout's per-unit times, a cumulative curve per input (at most 400 points), on an axis
    /// up to the 99.5th percentile of all of them.
    private static func distribution(suite: BenchSuite, results: [InputResult], in frame: Frame) -> String {
        let (left, right, cTop, cBottom, cdfH) = (frame.left, frame.right, frame.curveTop, frame.curveBottom, frame.curveHeight)
        let unitName = suite == .seek ? "seek time" : (suite == .play ? "pacing deviation" : "frame time")
        var s = text(20, cTop - 14, "scanout \(unitName) distribution (cumulative, ms)", size: 13, bold: true)
        let all = results.flatMap(\.unitMs).sorted()
        let xMax = niceCeiling(pct(all, 99.5).isFinite ? pct(all, 99.5) : 1)
        s += "<line x1=\"\(f(left))\" y1=\"\(f(cBottom))\" x2=\"\(f(right))\" y2=\"\(f(cBottom))\" stroke=\"#333\"/>\n"
        s += "<line x1=\"\(f(left))\" y1=\"\(f(cTop))\" x2=\"\(f(left))\" y2=\"\(f(cBottom))\" stroke=\"#333\"/>\n"
        s += text(right, cBottom + 32, "ms", size: 11, anchor: "end")
        for i in 0...4 {
            let x = left + Double(i) / 4 * (right - left)
            s += text(x, cBottom + 16, format2(xMax * Double(i) / 4), size: 10, anchor: "middle")
            let y = cBottom - Double(i) / 4 * cdfH
            s += text(left - 6, y + 4, "\(i * 25)%", size: 10, anchor: "end")
        }
        let curveColors = ["#2b6cb0", "#d69e2e", "#38a169", "#e53e3e", "#805ad5", "#319795", "#dd6b20", "#718096", "#b83280"]
        for (i, r) in results.enumerated() where !r.unitMs.isEmpty {
            let v = r.unitMs.sorted()
            var points: [String] = []
            let stepCount = min(v.count, 400)
            for k in 0..<stepCount {
                let idx = k * (v.count - 1) / max(stepCount - 1, 1)
                let x = left + min(v[idx] / xMax, 1) * (right - left)
                let y = cBottom - Double(idx + 1) / Double(v.count) * cdfH
                points.append("\(f(x)),\(f(y))")
            }
            let color = curveColors[i % curveColors.count]
            s += "<polyline fill=\"none\" stroke=\"\(color)\" stroke-width=\"1.5\" points=\"\(points.joined(separator: " "))\"/>\n"
            let name = r.input.split(separator: "/").last.map(String.init) ?? r.input
            s += text(right - 200, cTop + 14 + Double(i) * 14, "— " + name, size: 11, color: color)
        }
        return s
    }

    private static func axis(left: Double, right: Double, top: Double, bottom: Double, maxValue: Double, label: String) -> String {
        var s = "<line x1=\"\(f(left))\" y1=\"\(f(bottom))\" x2=\"\(f(right))\" y2=\"\(f(bottom))\" stroke=\"#333\"/>\n"
        s += "<line x1=\"\(f(left))\" y1=\"\(f(top))\" x2=\"\(f(left))\" y2=\"\(f(bottom))\" stroke=\"#333\"/>\n"
        for i in 0...4 {
            let y = bottom - Double(i) / 4 * (bottom - top)
            s += "<line x1=\"\(f(left))\" y1=\"\(f(y))\" x2=\"\(f(right))\" y2=\"\(f(y))\" stroke=\"#ddd\"/>\n"
            s += text(left - 6, y + 4, format1(maxValue * Double(i) / 4), size: 10, anchor: "end")
        }
        s += text(14, top - 8, label, size: 11)
        return s
    }

    /// The smallest of 1, 2, 2.5, 5 × 10^k that is at least `v`.
    static func niceCeiling(_ v: Double) -> Double {
        guard v > 0, v.isFinite else { return 1 }
        var p = 1.0
        while p * 10 <= v { p *= 10 }
        while p > v { p /= 10 }
        for m in [1.0, 2, 2.5, 5, 10] where m * p >= v { return m * p }
        return 10 * p
    }

    private static func f(_ v: Double) -> String { formatFixed(v, 1) }

    private static func text(_ x: Double, _ y: Double, _ t: String, size: Int, anchor: String = "start", bold: Bool = false, color: String = "#222") -> String {
        "<text x=\"\(f(x))\" y=\"\(f(y))\" font-size=\"\(size)\" text-anchor=\"\(anchor)\" fill=\"\(color)\"\(bold ? " font-weight=\"bold\"" : "")>\(esc(t))</text>\n"
    }

    static func esc(_ s: String) -> String {
        var o = ""
        for c in s {
            switch c {
            case "&": o += "&amp;"
            case "<": o += "&lt;"
            case ">": o += "&gt;"
            case "\"": o += "&quot;"
            default: o.append(c)
            }
        }
        return o
    }
}
