import ScanoutCore
import ScanoutRender

/// A screen made of zones, each with its own playlist: what `play --layout`, `render --layout`
/// and the service's `layout` describe. The geometry resolves to a `Canvas` on an output of a
/// given size (`canvas(outputWidth:outputHeight:)`); each zone's playlist is played by a player
/// of its own.
public struct ScreenLayout: Equatable, Sendable {
    /// The canvas's size; nil: the output's (turned, for a turned screen).
    public var width: Int?
    public var height: Int?
    public var background: RGBColor
    /// The whole screen turned clockwise onto the output (0, 90, 180, 270): a portrait screen.
    public var rotation: Int
    public var zones: [Zone]
    /// The zone the service's top-level commands (`/play`, `/load`, ...) act on; nil: the zone
    /// with the sound, else the first (`mainZone`).
    public var main: String?
    /// When a zone's picture raises an alarm: black or unchanged for that long while it plays.
    public var watch = PictureWatch.Settings()
    /// One canvas across several screens of one box; nil: every screen shows the whole canvas.
    public var wall: Wall?

    /// Screens side by side, row by row, each showing its rectangle of the canvas.
    public struct Wall: Equatable, Sendable {
        /// The outputs (connector names, "HDMI-A-1"), row by row; nil: a screen of another box of
        /// the wall (a wall across devices, kept in step by a sync group), of the same mode.
        public var outputs: [String?]
        public var columns: Int
        public var bezel: Bezel

        /// The frame between two neighbouring pictures (both screens' frames together): pixels,
        /// or millimetres turned into pixels with the screen's width from its EDID.
        public enum Bezel: Equatable, Sendable {
            case pixels(Int)
            case millimetres(Double)
        }

        public init(outputs: [String?], columns: Int, bezel: Bezel = .pixels(0)) {
            self.outputs = outputs; self.columns = columns; self.bezel = bezel
        }

        public var rows: Int { (outputs.count + columns - 1) / max(columns, 1) }
        /// This box's screens of the wall.
        public var local: [String] { outputs.compactMap { $0 } }
    }

    public init(width: Int? = nil, height: Int? = nil, background: RGBColor = .black, rotation: Int = 0, zones: [Zone] = [],
                main: String? = nil) {
        self.width = width; self.height = height; self.background = background; self.rotation = rotation; self.zones = zones
        self.main = main
    }

    /// The id of the main zone: `main`, else the zone with the sound, else the first zone.
    public var mainZone: String? { main ?? (zones.first(where: \.audio) ?? zones.first)?.id }

    /// The zone named `id`.
    public func zone(_ id: String) -> Zone? { zones.first { $0.id == id } }

    /// A length on the canvas: pixels, or a share of the canvas's width or height.
    public enum Length: Equatable, Sendable, CustomStringConvertible {
        case pixels(Int)
        case fraction(Double)

        /// In pixels on a side of `side` pixels, rounded to the nearest.
        public func resolved(on side: Int) -> Int {
            switch self {
            case .pixels(let p): p
            case .fraction(let f): Int((f * Double(side)).rounded())
            }
        }

        public var description: String {
            switch self {
            case .pixels(let p): "\(p)"
            case .fraction(let f): "\(f * 100)%"
            }
        }
    }

    public struct Zone: Equatable, Sendable {
        public var id: String
        public var x: Length, y: Length, width: Length, height: Length
        /// Drawn over zones of a lower `z`; zones of one `z` in the order given.
        public var z: Int
        public var opacity: Double
        public var background: RGBColor
        public var border: Canvas.Border?
        /// How the zone's pictures fill it when their item names no scaling.
        public var scaling: ScalingMode
        /// Whether this zone's sound is played (one zone has the sound).
        public var audio: Bool
        public var playlist: [PlaylistItem]
        public var repeatMode: RepeatMode
        /// Text over the zone (a line, or a ticker), over its pictures if it has a playlist too.
        public var text: ZoneText?
        /// The channel of the channel list the zone plays (the service's multiview): its
        /// playlist is then the channel's URL, and its text the channel's name unless it has one.
        public var channel: String?

        public init(id: String, x: Length = .pixels(0), y: Length = .pixels(0), width: Length = .fraction(1), height: Length = .fraction(1),
                    z: Int = 0, opacity: Double = 1, background: RGBColor = .black, border: Canvas.Border? = nil,
                    scaling: ScalingMode = .fit, audio: Bool = false, playlist: [PlaylistItem] = [], repeatMode: RepeatMode = .all) {
            self.id = id; self.x = x; self.y = y; self.width = width; self.height = height; self.z = z
            self.opacity = opacity; self.background = background; self.border = border; self.scaling = scaling
            self.audio = audio; self.playlist = playlist; self.repeatMode = repeatMode
        }

        /// The zone's rectangle on a `W`×`H` canvas.
        public func rect(canvasWidth W: Int, canvasHeight H: Int) -> PixelRect {
            PixelRect(x: x.resolved(on: W), y: y.resolved(on: H), width: width.resolved(on: W), height: height.resolved(on: H))
        }
    }

    /// The zones in drawing order: by `z`, then as given.
    public var drawingOrder: [Zone] {
        zones.enumerated().sorted { ($0.element.z, $0.offset) < ($1.element.z, $1.offset) }.map(\.element)
    }

    /// The canvas's size on an output of `outputWidth`×`outputHeight`: the layout's own, else
    /// the output's turned back upright.
    public func canvasSize(outputWidth W: Int, outputHeight H: Int) -> (width: Int, height: Int) {
        let upright = rotation % 180 == 0 ? (W, H) : (H, W)
        return (width ?? upright.0, height ?? upright.1)
    }

    /// The canvas this layout draws on an output of `outputWidth`×`outputHeight`: the zones
    /// resolved to pixels, in drawing order (`drawingOrder`), each with its background.
    public func canvas(outputWidth: Int, outputHeight: Int) -> Canvas {
        let (w, h) = canvasSize(outputWidth: outputWidth, outputHeight: outputHeight)
        let zones = drawingOrder.map { z in
            Canvas.Zone(rect: z.rect(canvasWidth: w, canvasHeight: h), composition: Composition(scaling: z.scaling, background: z.background),
                        opacity: z.opacity, border: z.border)
        }
        return Canvas(width: w, height: h, background: background, zones: zones, turn: Orientation(rotation: rotation))
    }
}
