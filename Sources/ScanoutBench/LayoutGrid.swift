import ScanoutCore
import ScanoutDemux
import ScanoutRender

/// Where the zones of a `bench layout` trial go: N zones in the smallest near-square grid that
/// holds them (⌈√N⌉ columns, as many rows as it takes, filled row by row) on the canvas, each
/// zone's picture fitted into its cell as Scanout's `fit` scaling places it
/// (`Composition.destination`), so that every tool draws the same pictures at the same pixels.
public struct LayoutGrid: Equatable, Sendable {
    /// A rectangle on the canvas, in pixels.
    public struct Rect: Equatable, Sendable, CustomStringConvertible {
        public var x: Int, y: Int, width: Int, height: Int
        public var description: String { "\(width)x\(height)+\(x)+\(y)" }
    }

    public let zones: Int
    public let columns: Int
    public let rows: Int
    /// The canvas.
    public let width: Int
    public let height: Int

    public init(zones: Int, width: Int = 1920, height: Int = 1080) {
        precondition(zones > 0 && width > 0 && height > 0, "a layout grid needs a zone and a canvas")
        var columns = 1
        while columns * columns < zones { columns += 1 }
        self.zones = zones
        self.columns = columns
        rows = (zones + columns - 1) / columns
        self.width = width
        self.height = height
    }

    /// Zone `i`'s cell: the canvas cut at whole pixels (column c spans c·W/columns to
    /// (c + 1)·W/columns, rows likewise), so that the cells cover the canvas with no gap.
    public func cell(_ i: Int) -> Rect {
        let c = i % columns, r = i / columns
        let x0 = c * width / columns, x1 = (c + 1) * width / columns
        let y0 = r * height / rows, y1 = (r + 1) * height / rows
        return Rect(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }

    /// Where zone `i`'s picture of `sourceWidth`×`sourceHeight` (square pixels, upright) is
    /// drawn: fitted into its cell, centred.
    public func picture(_ i: Int, sourceWidth: Int, sourceHeight: Int) -> Rect {
        let cell = cell(i)
        let r = Composition.destination(sourceWidth: sourceWidth, sourceHeight: sourceHeight, sampleAspectRatio: Rational(1, 1),
                                        orientation: .identity, outputWidth: cell.width, outputHeight: cell.height, mode: .fit)
        return Rect(x: cell.x + r.x, y: cell.y + r.y, width: r.width, height: r.height)
    }

    /// Every zone's picture, in zone order.
    public func pictures(sourceWidth: Int, sourceHeight: Int) -> [Rect] {
        (0..<zones).map { picture($0, sourceWidth: sourceWidth, sourceHeight: sourceHeight) }
    }
}
