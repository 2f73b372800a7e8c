import ScanoutCore
import ScanoutDecode

/// What a text zone shows: one line of text, still or scrolling.
public struct ZoneText: Equatable, Sendable {
    public var text: String
    /// Font size, pixels.
    public var size: Int
    public var color: RGBColor
    /// Pixels a second the text moves right to left (a ticker: in from the right edge, out at the
    /// left, again); 0: still, centred across.
    public var scroll: Double
    /// Where the line sits in the zone's height.
    public var placement: Placement

    public enum Placement: String, Sendable, CaseIterable {
        /// Halfway down (a ticker's band, a text zone).
        case center
        /// Along the top edge.
        case top
        /// Along the bottom edge (a tile's label).
        case bottom
    }

    public init(text: String, size: Int = 48, color: RGBColor = RGBColor(r: 255, g: 255, b: 255), scroll: Double = 0,
                placement: Placement = .center) {
        self.text = text; self.size = size; self.color = color; self.scroll = scroll; self.placement = placement
    }

    /// The ASS alignment (numpad) for a line placed so, its left edge (`left`) or its middle at
    /// the point, and the point's height in a zone `height` pixels high.
    func anchor(left: Bool, height: Int) -> (alignment: Int, y: Int) {
        let margin = max(2, size / 4)
        switch placement {
        case .center: return (left ? 4 : 5, height / 2)
        case .top: return (left ? 7 : 8, margin)
        case .bottom: return (left ? 1 : 2, height - margin)
        }
    }
}

/// A text zone's layer, drawn with libass (`SubtitleRenderer`: the same fonts, shaping and
/// rasteriser as subtitles) into an RGBA image placed on the zone, which both compositors blend
/// as they blend a logo. A ticker's place at a time is a function of that time alone: it enters
/// at the right edge at 0 and leaves at the left after `period` seconds, then again.
public final class TextZone {
    public let text: ZoneText
    public let width: Int
    public let height: Int
    private let renderer: SubtitleRenderer
    /// Seconds a ticker takes to cross the zone and leave it; nil for still text.
    public let period: Double?
    /// The width of the line, pixels.
    public let textWidth: Int

    public init(_ text: ZoneText, width: Int, height: Int) throws {
        guard width > 0, height > 0 else { throw RenderError.invalidSize("text zone \(width)x\(height)") }
        self.text = text
        self.width = width
        self.height = height
        let header = Self.header(text, width: width, height: height)
        let escaped = text.text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "{", with: "\\{")
            .replacingOccurrences(of: "\n", with: " ")
        // Measured once, still at the left edge: how far a ticker travels.
        let probe = try SubtitleRenderer(header: header)
        probe.add(SubtitleEvent(start: 0, duration: 3600, line: "0,0,Default,,0,0,0,,{\\an4\\pos(0,\(height / 2))}\(escaped)"))
        let full = PixelRect(x: 0, y: 0, width: width, height: height)
        let measured = probe.layer(at: 0, outputWidth: width, outputHeight: height, picture: full, pictureWidth: width, pictureHeight: height)
        textWidth = measured.map { $0.origin(outputWidth: width, outputHeight: height).x + $0.image.width } ?? 0
        renderer = try SubtitleRenderer(header: header)
        if text.scroll > 0 {
            let period = Double(width + textWidth) / text.scroll
            // libass's times are milliseconds in an Int32-sized range: a day at most per crossing.
            guard period <= 86_400 else {
                throw RenderError.invalidSize("a ticker of \(text.scroll) px/s takes \(Int(min(period, 1e12))) s to cross \(width + textWidth) pixels (at most a day; scroll 1 px/s or more)")
            }
            self.period = period
            let ms = Int((period * 1000).rounded())
            let (a, y) = text.anchor(left: true, height: height)
            renderer.add(SubtitleEvent(start: 0, duration: period,
                                       line: "0,0,Default,,0,0,0,,{\\an\(a)\\move(\(width),\(y),\(-textWidth),\(y),0,\(ms))}\(escaped)"))
        } else {
            period = nil
            let (a, y) = text.anchor(left: false, height: height)
            renderer.add(SubtitleEvent(start: 0, duration: 360_000_000,
                                       line: "0,0,Default,,0,0,0,,{\\an\(a)\\pos(\(width / 2),\(y))}\(escaped)"))
        }
    }

    /// The layer `seconds` after the zone started, placed on the zone; nil when no text is in it.
    public func layer(at seconds: Double) -> Overlay? {
        var t = max(seconds, 0)
        if let period { t = t.truncatingRemainder(dividingBy: period) }
        let full = PixelRect(x: 0, y: 0, width: width, height: height)
        return renderer.layer(at: t, outputWidth: width, outputHeight: height, picture: full, pictureWidth: width, pictureHeight: height)
    }

    /// An ASS header whose play area is the zone, with one style of `text`'s font size and colour.
    private static func header(_ text: ZoneText, width: Int, height: Int) -> String {
        let c = text.color
        let hex = { (v: UInt8) in String(v, radix: 16, uppercase: true).leftPadded(to: 2) }
        let colour = "&H00\(hex(c.b))\(hex(c.g))\(hex(c.r))"
        return """
        [Script Info]
        ScriptType: v4.00+
        PlayResX: \(width)
        PlayResY: \(height)
        WrapStyle: 2
        ScaledBorderAndShadow: yes

        [V4+ Styles]
        Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, Bold, Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, MarginL, MarginR, MarginV, Encoding
        Style: Default,DejaVu Sans,\(text.size),\(colour),\(colour),&H00000000,&H00000000,0,0,0,0,100,100,0,0,1,0,0,5,0,0,0,1

        [Events]
        Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text

        """
    }
}

private extension String {
    func leftPadded(to n: Int) -> String { count >= n ? self : String(repeating: "0", count: n - count) + self }
}
