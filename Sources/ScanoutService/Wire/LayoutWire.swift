import Foundation
import ScanoutCore
import ScanoutPlayer
import ScanoutRender

// A screen layout: the config's `layout`, a layout file (`play --layout`, `render --layout`).

extension Wire {
    /// `{width, height, background, rotation, main, zones: [...]}`: the canvas (its size left out: the
    /// output's) and its zones, each `{id, x, y, width, height, z, opacity, background, border,
    /// scaling, audio, playlist, repeat}`. Lengths are pixels (a number) or a share of the
    /// canvas (`"25%"`).
    struct LayoutRequest: RequestBody {
        enum Field: String, CodingKey, CaseIterable { case width, height, background, rotation, main, watch, wall, zones }
        var layout: ScreenLayout

        init(from decoder: any Swift.Decoder) throws {
            let c = try decoder.container(keyedBy: Field.self)
            layout = ScreenLayout()
            layout.width = try c.decodeIfPresent(Int.self, forKey: .width, in: 1...16384)
            layout.height = try c.decodeIfPresent(Int.self, forKey: .height, in: 1...16384)
            if let bg = try Wire.color(c, .background) { layout.background = bg }
            layout.rotation = try c.decodeIfPresent(Int.self, forKey: .rotation) ?? 0
            guard [0, 90, 180, 270].contains(layout.rotation) else {
                throw APIError.badRequest(c.name(.rotation), "must be 0, 90, 180 or 270 (got \(layout.rotation))")
            }
            guard let zones = try c.decodeIfPresent([ZoneRequest].self, forKey: .zones), !zones.isEmpty else {
                throw APIError.badRequest(c.name(.zones), "must list at least one zone")
            }
            layout.zones = zones.map(\.zone)
            var ids = Set<String>()
            for (i, z) in layout.zones.enumerated() where !ids.insert(z.id).inserted {
                throw APIError.badRequest(c.name(.zones) + "[\(i)].id", "\"\(z.id)\" names two zones")
            }
            guard layout.zones.filter(\.audio).count <= 1 else {
                throw APIError.badRequest(c.name(.zones), "one zone at most has the sound (\"audio\": true)")
            }
            if let watch = try c.decodeIfPresent(WatchRequest.self, forKey: .watch) { layout.watch = watch.settings }
            layout.wall = try c.decodeIfPresent(WallRequest.self, forKey: .wall)?.wall
            if layout.wall != nil && layout.rotation != 0 {
                throw APIError.badRequest(c.name(.wall), "a turned layout across screens is not supported (rotation \(layout.rotation))")
            }
            layout.main = try c.decodeIfPresent(String.self, forKey: .main)
            if let main = layout.main, layout.zone(main) == nil {
                throw APIError.badRequest(c.name(.main), "names no zone of the layout (got \"\(main)\")")
            }
        }
    }

    struct ZoneRequest: Decodable {
        enum Field: String, CodingKey, CaseIterable {
            case id, x, y, width, height, z, opacity, background, border, scaling, audio, playlist, `repeat`, text, channel
        }
        var zone: ScreenLayout.Zone

        init(from decoder: any Swift.Decoder) throws {
            let c = try decoder.container(keyedBy: Field.self)
            let id = try c.decode(String.self, forKey: .id)
            guard id.wholeMatch(of: /[A-Za-z0-9_-]{1,32}/) != nil else {
                throw APIError.badRequest(c.name(.id), "must be 1 to 32 letters, digits, '-' or '_' (got \"\(id)\")")
            }
            zone = ScreenLayout.Zone(id: id)
            try Self.read(c, into: &zone)
        }

        /// Sets the fields `c` gives on `zone` (null clears `border` and `text`); the others stay.
        static func read(_ c: KeyedDecodingContainer<Field>, into zone: inout ScreenLayout.Zone) throws {
            if let v = try c.decodeIfPresent(LengthRequest.self, forKey: .x) { zone.x = v.length }
            if let v = try c.decodeIfPresent(LengthRequest.self, forKey: .y) { zone.y = v.length }
            if let v = try c.decodeIfPresent(LengthRequest.self, forKey: .width) { zone.width = v.length }
            if let v = try c.decodeIfPresent(LengthRequest.self, forKey: .height) { zone.height = v.length }
            for (key, length) in [(Field.width, zone.width), (.height, zone.height)] where length == .pixels(0) || length == .fraction(0) {
                throw APIError.badRequest(c.name(key), "must be more than 0")
            }
            if let v = try c.decodeIfPresent(Int.self, forKey: .z, in: -1000...1000) { zone.z = v }
            if let v = try c.decodeIfPresent(Double.self, forKey: .opacity, in: 0...1) { zone.opacity = v }
            if let bg = try Wire.color(c, .background) { zone.background = bg }
            if let v = try c.decodeNullable(BorderRequest.self, forKey: .border) { zone.border = v?.border }
            if let v = try c.decodeChoiceIfPresent(ScalingMode.self, forKey: .scaling) { zone.scaling = v }
            if let v = try c.decodeIfPresent(Bool.self, forKey: .audio) { zone.audio = v }
            if let v = try c.decodeIfPresent([ItemRequest].self, forKey: .playlist) { zone.playlist = v.map(\.item) }
            if let v = try c.decodeChoiceIfPresent(RepeatMode.self, forKey: .repeat) { zone.repeatMode = v }
            if let v = try c.decodeNullable(TextRequest.self, forKey: .text) { zone.text = v?.text }
            if let v = try c.decodeNullable(String.self, forKey: .channel) {
                guard v?.isEmpty != true else { throw APIError.badRequest(c.name(.channel), "must name a channel of the channel list (GET /channels)") }
                zone.channel = v
            }
        }
    }

    /// `{text, size, color, scroll}`: a line of text over the zone; `scroll` pixels a second
    /// makes it a ticker.
    struct TextRequest: Decodable {
        enum Field: String, CodingKey, CaseIterable { case text, size, color, scroll, placement }
        var text: ZoneText

        init(from decoder: any Swift.Decoder) throws {
            let c = try decoder.container(keyedBy: Field.self)
            let line = try c.decode(String.self, forKey: .text)
            guard !line.isEmpty else { throw APIError.badRequest(c.name(.text), "must not be empty") }
            text = ZoneText(text: line)
            text.size = try c.decodeIfPresent(Int.self, forKey: .size, in: 4...1000) ?? text.size
            if let color = try Wire.color(c, .color) { text.color = color }
            text.scroll = try c.decodeIfPresent(Double.self, forKey: .scroll, in: 0...10_000) ?? 0
            text.placement = try c.decodeChoiceIfPresent(ZoneText.Placement.self, forKey: .placement) ?? .center
            guard text.scroll == 0 || text.scroll >= 1 else {
                throw APIError.badRequest(c.name(.scroll), "must be 0 (still) or 1 to 10000 pixels a second (got \(RequestDecoder.format(text.scroll)))")
            }
        }
    }

    /// `{black, frozen}`: seconds a zone's picture is black, or unchanged, while it plays before
    /// an alarm (`pictureAlarm`); 0 turns that watch off.
    struct WatchRequest: Decodable {
        enum Field: String, CodingKey, CaseIterable { case black, frozen }
        var settings = PictureWatch.Settings()

        init(from decoder: any Swift.Decoder) throws {
            let c = try decoder.container(keyedBy: Field.self)
            if let v = try c.decodeIfPresent(Double.self, forKey: .black, in: 0...86_400) { settings.black = v }
            if let v = try c.decodeIfPresent(Double.self, forKey: .frozen, in: 0...86_400) { settings.frozen = v }
        }
    }

    /// `{outputs: ["HDMI-A-1", "HDMI-A-2"], columns, bezel}`: one canvas across screens, row by
    /// row; `bezel` pixels (a number) or millimetres (`"12.5mm"`, with the screen's EDID width).
    /// A null output is a screen of another box (a wall across devices, `sync`): this box
    /// composes the whole canvas and shows its own screens' rectangles.
    struct WallRequest: Decodable {
        enum Field: String, CodingKey, CaseIterable { case outputs, columns, bezel }
        var wall: ScreenLayout.Wall

        init(from decoder: any Swift.Decoder) throws {
            let c = try decoder.container(keyedBy: Field.self)
            let outputs: [String?]
            do {
                outputs = try c.decodeIfPresent([String?].self, forKey: .outputs) ?? []
            } catch {
                throw APIError.badRequest(c.name(.outputs), "must be connector names (HDMI-A-1), or null for another box's screen, row by row")
            }
            guard outputs.count >= 2 else {
                throw APIError.badRequest(c.name(.outputs), "must name two screens or more (connector names, or null for another box's screen, row by row)")
            }
            let local = outputs.compactMap { $0 }
            guard !local.isEmpty else { throw APIError.badRequest(c.name(.outputs), "must name at least one screen of this box") }
            guard local.allSatisfy({ !$0.isEmpty }) else { throw APIError.badRequest(c.name(.outputs), "must be connector names (HDMI-A-1), not empty") }
            guard Set(local).count == local.count else { throw APIError.badRequest(c.name(.outputs), "names a screen twice") }
            let columns = try c.decodeIfPresent(Int.self, forKey: .columns, in: 1...64) ?? outputs.count
            var bezel = ScreenLayout.Wall.Bezel.pixels(0)
            if c.contains(.bezel) {
                if let text = try? c.decode(String.self, forKey: .bezel) {
                    guard text.hasSuffix("mm"), let mm = Double(text.dropLast(2)), mm.isFinite, (0...1000).contains(mm) else {
                        throw APIError.badRequest(c.name(.bezel), "must be pixels (a number) or millimetres such as \"12.5mm\" (got \"\(text)\")")
                    }
                    bezel = .millimetres(mm)
                } else {
                    bezel = .pixels(try c.decode(Int.self, forKey: .bezel, in: 0...4096))
                }
            }
            wall = ScreenLayout.Wall(outputs: outputs, columns: columns, bezel: bezel)
        }
    }

    /// A length: pixels (`480`, `-20`), or a share of the canvas (`"25%"`, `"12.5%"`).
    struct LengthRequest: Decodable {
        var length: ScreenLayout.Length

        init(from decoder: any Swift.Decoder) throws {
            let here = RequestDecoder.name(decoder.codingPath)
            let c = try decoder.singleValueContainer()
            if let text = try? c.decode(String.self) {
                guard text.hasSuffix("%"), let p = Double(text.dropLast()), p.isFinite, (0...100).contains(p) else {
                    throw APIError.badRequest(here, "must be pixels (a number) or a share such as \"25%\" (0% to 100%) (got \"\(text)\")")
                }
                length = .fraction(p / 100)
                return
            }
            guard let px = try? c.decode(Int.self), (-16384...16384).contains(px) else {
                throw APIError.badRequest(here, "must be pixels (an integer within -16384...16384) or a share such as \"25%\"")
            }
            length = .pixels(px)
        }
    }

    /// `{width, color}`: a frame inside the zone's edge.
    struct BorderRequest: Decodable {
        enum Field: String, CodingKey, CaseIterable { case width, color }
        var border: Canvas.Border

        init(from decoder: any Swift.Decoder) throws {
            let c = try decoder.container(keyedBy: Field.self)
            border = Canvas.Border(width: try c.decode(Int.self, forKey: .width, in: 0...1000),
                                   color: try Wire.color(c, .color) ?? RGBColor(r: 255, g: 255, b: 255))
        }
    }

    /// A colour field, `"RRGGBB"` (an optional leading `#`).
    static func color<K: CodingKey>(_ c: KeyedDecodingContainer<K>, _ key: K) throws -> RGBColor? {
        guard let text = try c.decodeIfPresent(String.self, forKey: key) else { return nil }
        guard let color = RGBColor(hex: text) else { throw APIError.badRequest(c.name(key), "must be a colour RRGGBB, e.g. 000000 (got \"\(text)\")") }
        return color
    }
}

extension ScreenLayout {
    /// A layout from its JSON; a mistake is an `APIError` naming the field by its path
    /// (`zones[1].width`).
    public static func read(json: Data) throws(APIError) -> ScreenLayout {
        try RequestDecoder.decodeBody(Wire.LayoutRequest.self, from: json).layout
    }

    /// A layout file; what cannot be read or used is an error naming the file and the field.
    public static func read(file: String) throws -> ScreenLayout {
        try ServiceConfig.readJSONFile(file) { data throws(APIError) in try read(json: data) }
    }
}
