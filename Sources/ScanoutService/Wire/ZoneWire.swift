import Foundation
import ScanoutPlayer
import ScanoutRender

// The zones of a screen as the API shows and changes them: `GET|PUT /layout`, `GET /zones`,
// `PUT /zones/{id}`, `POST /zones/swap`, `PUT /zones/{id}/text`.

extension Wire {
    /// A layout as `GET /layout` and `GET /config` show it: the fields `LayoutRequest` reads,
    /// lengths as given (pixels, or `"25%"`), colours as `RRGGBB`.
    struct Layout: Encodable, Sendable {
        @Nullable var width: Int?
        @Nullable var height: Int?
        var background: String
        var rotation: Int
        @Nullable var main: String?
        var watch: Watch
        @Nullable var wall: Wall?
        var zones: [Zone]

        init(_ l: ScreenLayout) {
            width = l.width
            height = l.height
            background = l.background.hex
            rotation = l.rotation
            main = l.mainZone
            watch = Watch(black: l.watch.black, frozen: l.watch.frozen)
            wall = l.wall.map(Wall.init)
            zones = l.zones.map(Zone.init)
        }
    }

    struct Zone: Encodable, Sendable {
        var id: String
        var x: Length, y: Length, width: Length, height: Length
        var z: Int
        var opacity: Double
        var background: String
        @Nullable var border: Border?
        var scaling: String
        var audio: Bool
        var playlist: [Item]
        var `repeat`: String
        @Nullable var text: Text?
        @Nullable var channel: String?

        init(_ z: ScreenLayout.Zone) {
            id = z.id
            x = Length(z.x); y = Length(z.y); width = Length(z.width); height = Length(z.height)
            self.z = z.z
            opacity = z.opacity
            background = z.background.hex
            border = z.border.map { Border(width: $0.width, color: $0.color.hex) }
            scaling = z.scaling.rawValue
            audio = z.audio
            playlist = z.playlist.map(Item.init)
            self.repeat = z.repeatMode.rawValue
            text = z.text.map { Text(text: $0.text.redacted, size: $0.size, color: $0.color.hex, scroll: $0.scroll, placement: $0.placement.rawValue) }
            channel = z.channel
        }
    }

    /// Pixels (a number) or a share of the canvas (`"25%"`).
    struct Length: Encodable, Sendable {
        var length: ScreenLayout.Length
        init(_ l: ScreenLayout.Length) { length = l }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.singleValueContainer()
            switch length {
            case .pixels(let p): try c.encode(p)
            case .fraction(let f): try c.encode("\(RequestDecoder.format(f * 100))%")
            }
        }
    }

    struct Border: Encodable, Sendable {
        var width: Int
        var color: String
    }

    struct Text: Encodable, Sendable {
        var text: String
        var size: Int
        var color: String
        var scroll: Double
        var placement: String
    }

    struct Wall: Encodable, Sendable {
        var outputs: [String?]
        var columns: Int
        var bezel: Bezel

        init(_ w: ScreenLayout.Wall) {
            outputs = w.outputs
            columns = w.columns
            bezel = Bezel(w.bezel)
        }

        /// Pixels (a number) or millimetres (`"12.5mm"`).
        struct Bezel: Encodable, Sendable {
            var bezel: ScreenLayout.Wall.Bezel
            init(_ b: ScreenLayout.Wall.Bezel) { bezel = b }
            func encode(to encoder: any Encoder) throws {
                var c = encoder.singleValueContainer()
                switch bezel {
                case .pixels(let p): try c.encode(p)
                case .millimetres(let mm): try c.encode("\(RequestDecoder.format(mm))mm")
                }
            }
        }
    }

    struct Watch: Encodable, Sendable {
        var black: Double
        var frozen: Double
    }

    /// A zone's picture watch: the alarms raised now, how long its picture has been unchanged,
    /// and its input's bitrate (bits a second over the last second; null before one has passed).
    struct Picture: Encodable, Sendable {
        var black: Bool
        var frozen: Bool
        var unchangedSeconds: Double
        @Nullable var bitrate: Double?

        init(_ w: PictureWatch?) {
            black = w?.active.contains(.black) ?? false
            frozen = w?.active.contains(.frozen) ?? false
            unchangedSeconds = w?.unchangedSeconds ?? 0
            bitrate = w?.bitrate
        }
    }

    /// `GET /zones`: each zone, in drawing order, with its rectangle on the canvas now and what
    /// its player is doing.
    struct ZoneList: Encodable, Sendable {
        var width: Int
        var height: Int
        var main: String
        var zones: [ZoneStatus]
    }

    /// A zone's place and state (`GET /zones`, `GET /zones/{id}`).
    struct ZoneStatus: Encodable, Sendable {
        var id: String
        var main: Bool
        var rect: Rect
        var z: Int
        var state: State
    }

    struct Rect: Encodable, Sendable {
        var x: Int, y: Int, width: Int, height: Int
        init(_ r: PixelRect) { x = r.x; y = r.y; width = r.width; height = r.height }
    }

    /// `POST /zones/{id}/channel {id}`: the zone plays a channel of the channel list.
    struct ZoneChannelRequest: RequestBody {
        enum Field: String, CodingKey, CaseIterable { case id }
        var id: String

        init(from decoder: any Swift.Decoder) throws {
            let c = try decoder.container(keyedBy: Field.self)
            id = try c.decode(String.self, forKey: .id)
        }
    }

    /// `PUT /zones/{id}`: a zone's place and look, each field optional (those left out stay):
    /// `x`, `y`, `width`, `height`, `z`, `opacity`, `background`, `border` (null: none),
    /// `scaling`, `audio`, `text` (null: none). The zone's player goes on as it was.
    struct ZonePatch: RequestBody {
        enum Field: String, CodingKey, CaseIterable { case x, y, width, height, z, opacity, background, border, scaling, audio, text }
        /// The fields given, read onto a zone whose other fields are the defaults.
        private var read: ScreenLayout.Zone
        private var given: Set<Field>

        init(from decoder: any Swift.Decoder) throws {
            let c = try decoder.container(keyedBy: ZoneRequest.Field.self)
            given = Set(Field.allCases.filter { c.contains(ZoneRequest.Field(rawValue: $0.rawValue)!) })
            read = ScreenLayout.Zone(id: "patch")
            try ZoneRequest.read(c, into: &read)
        }

        /// `zone` with the fields given changed.
        func applied(to zone: ScreenLayout.Zone) -> ScreenLayout.Zone {
            var z = zone
            for f in given {
                switch f {
                case .x: z.x = read.x
                case .y: z.y = read.y
                case .width: z.width = read.width
                case .height: z.height = read.height
                case .z: z.z = read.z
                case .opacity: z.opacity = read.opacity
                case .background: z.background = read.background
                case .border: z.border = read.border
                case .scaling: z.scaling = read.scaling
                case .audio: z.audio = read.audio
                case .text: z.text = read.text
                }
            }
            return z
        }
    }

    /// `POST /zones/swap {a, b}`: two zones trade places (rectangle and stacking), each playing on.
    struct SwapRequest: RequestBody {
        enum Field: String, CodingKey, CaseIterable { case a, b }
        var a: String
        var b: String

        init(from decoder: any Swift.Decoder) throws {
            let c = try decoder.container(keyedBy: Field.self)
            a = try c.decode(String.self, forKey: .a)
            b = try c.decode(String.self, forKey: .b)
            guard a != b else { throw APIError.badRequest(c.name(.b), "must name another zone than a (got \"\(b)\" twice)") }
        }
    }
}

extension Wire.TextRequest: RequestBody {}

extension RGBColor {
    /// `RRGGBB`.
    var hex: String { String(format: "%02X%02X%02X", r, g, b) }
}
