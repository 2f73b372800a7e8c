import ScanoutCore

/// A screen made of several pictures: a canvas of one size and background, zones drawn in order
/// (the first at the bottom), each a picture laid out in its rectangle as its own `Composition`
/// says, and images over them all (a logo). The value both compositors draw
/// (`CPUCompositor.compose(_:on:…)`, `GLRenderer.render(_:on:…)`), with one frame (or none) per
/// zone; a screen of one picture is a canvas with one zone that covers it.
public struct Canvas: Equatable, Sendable {
    public var width: Int
    public var height: Int
    public var background: RGBColor
    public var zones: [Zone]
    /// Drawn over every zone, placed on the canvas.
    public var overlays: [Overlay]
    /// How the whole canvas is turned onto the output: a portrait screen is a canvas 1080 wide
    /// and 1920 high turned by 90° (or 270°, as the screen hangs) onto a 1920x1080 mode. Every
    /// zone, image, subtitle and overlay turns with it. The output is exactly the upright canvas
    /// turned, pixel for pixel.
    public var turn: Orientation

    public init(width: Int, height: Int, background: RGBColor = .black, zones: [Zone] = [], overlays: [Overlay] = [],
                turn: Orientation = .identity) {
        self.width = width; self.height = height; self.background = background; self.zones = zones; self.overlays = overlays
        self.turn = turn
    }

    /// The output's size: the canvas's, turned.
    public var outputSize: (width: Int, height: Int) { turn.swapsDimensions ? (height, width) : (width, height) }

    /// The part `view` of this (upright) canvas as a canvas of its own, `view`'s size: what one
    /// screen of a wall shows. Zones keep their place on the whole canvas (moved by `view`'s
    /// corner) and overlays theirs (placed on the whole canvas, then moved), so that the screens
    /// side by side show one picture; the bezels between screens are the parts no view covers.
    public func viewport(_ view: PixelRect) -> Canvas {
        var c = self
        c.width = view.width
        c.height = view.height
        for i in c.zones.indices {
            c.zones[i].rect.x -= view.x
            c.zones[i].rect.y -= view.y
        }
        c.overlays = overlays.map { o in
            var moved = o
            let at = o.origin(outputWidth: width, outputHeight: height)
            moved.position = .point(x: at.x - view.x, y: at.y - view.y)
            return moved
        }
        return c
    }

    /// One picture's place on the canvas.
    public struct Zone: Equatable, Sendable {
        /// Where, in canvas pixels; what lies outside the canvas is not drawn.
        public var rect: PixelRect
        /// How the picture fills the rectangle: scaling, orientation, the sample-aspect rule, the
        /// zone's own background, and its own layers (a label, the subtitles of its item) placed
        /// on the zone. Its output size is the rectangle's, whatever it says.
        public var composition: Composition
        /// 0 (not drawn) ... 1 (covers what is under it): the whole zone, background included.
        public var opacity: Double
        /// A frame drawn inside the rectangle's edge, over the picture.
        public var border: Border?
        /// The zone's name on its screen (a layout's zone id), for what judges zones by name (a
        /// zone's content policy); not drawn.
        public var name: String?

        public init(rect: PixelRect, composition: Composition = Composition(), opacity: Double = 1, border: Border? = nil) {
            self.rect = rect; self.composition = composition; self.opacity = opacity; self.border = border
        }

        /// The composition drawn into the zone: `composition` sized to the rectangle.
        public var sized: Composition {
            var c = composition
            c.outputWidth = rect.width
            c.outputHeight = rect.height
            return c
        }
    }

    public struct Border: Equatable, Sendable {
        /// Pixels, inside the zone's rectangle.
        public var width: Int
        public var color: RGBColor
        public init(width: Int, color: RGBColor) { self.width = width; self.color = color }

        /// The strips a border of `width` covers inside `rect`: top, bottom, left, right (the
        /// sides between the top and bottom strips); none when the width is 0 or less.
        public func strips(of rect: PixelRect) -> [PixelRect] {
            let w = min(width, (min(rect.width, rect.height) + 1) / 2)
            guard w > 0 else { return [] }
            let inner = rect.height - 2 * w
            return [PixelRect(x: rect.x, y: rect.y, width: rect.width, height: w),
                    PixelRect(x: rect.x, y: rect.y + rect.height - w, width: rect.width, height: w),
                    PixelRect(x: rect.x, y: rect.y + w, width: w, height: max(inner, 0)),
                    PixelRect(x: rect.x + rect.width - w, y: rect.y + w, width: w, height: max(inner, 0))]
                .filter { $0.width > 0 && $0.height > 0 }
        }
    }
}

extension PixelRect {
    /// The part of this rectangle inside a `width`×`height` area at the origin; nil when none.
    public func clipped(width W: Int, height H: Int) -> PixelRect? {
        let x0 = max(x, 0), y0 = max(y, 0), x1 = min(x + width, W), y1 = min(y + height, H)
        guard x1 > x0, y1 > y0 else { return nil }
        return PixelRect(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }

    /// The part of this rectangle inside `other`; nil when none.
    public func intersection(_ other: PixelRect) -> PixelRect? {
        let x0 = max(x, other.x), y0 = max(y, other.y)
        let x1 = min(x + width, other.x + other.width), y1 = min(y + height, other.y + other.height)
        guard x1 > x0, y1 > y0 else { return nil }
        return PixelRect(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }
}
