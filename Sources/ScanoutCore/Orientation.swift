/// How to turn stored pixels upright, from the stream's display matrix.
///
/// One of the eight lossless turns and mirrors of a picture: rotate `rotation` degrees clockwise
/// (0, 90, 180, 270), then mirror left–right when `mirrored`. Chosen exactly as the ffmpeg tool's
/// autorotation chooses its transpose/hflip/vflip filters, so that rendered frames match it.
public struct Orientation: Hashable, Sendable, CustomStringConvertible {
    public var rotation: Int
    public var mirrored: Bool

    public init(rotation: Int = 0, mirrored: Bool = false) {
        self.rotation = ((rotation % 360) + 360) % 360
        self.mirrored = mirrored
    }

    public static let identity = Orientation()
    public var isIdentity: Bool { self == .identity }
    public var swapsDimensions: Bool { rotation == 90 || rotation == 270 }

    public var description: String { mirrored ? "rotate \(rotation), mirror" : "rotate \(rotation)" }
}
