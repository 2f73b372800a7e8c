/// The values of a plane's `rotation` property, a bitmask (`DRM_MODE_ROTATE_*`,
/// `DRM_MODE_REFLECT_*`): a value sets one rotation bit and any reflection bits. As the uapi
/// header says, `rotate-<degrees>` turns the plane's picture that many degrees
/// **counter-clockwise** onto the CRTC. A plane's supported values are the property's enum
/// entries (`KMSPlane.rotations`).
public struct KMSRotation: OptionSet, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    public static let rotate0 = KMSRotation(rawValue: 1 << 0)
    public static let rotate90 = KMSRotation(rawValue: 1 << 1)
    public static let rotate180 = KMSRotation(rawValue: 1 << 2)
    public static let rotate270 = KMSRotation(rawValue: 1 << 3)
    public static let reflectX = KMSRotation(rawValue: 1 << 4)
    public static let reflectY = KMSRotation(rawValue: 1 << 5)

    /// The value that shows a plane's picture turned `degrees` clockwise (0, 90, 180, 270):
    /// rotate-270 for 90, rotate-90 for 270, since the kernel's rotations count counter-clockwise.
    public static func clockwise(_ degrees: Int) -> KMSRotation {
        switch ((degrees % 360) + 360) % 360 {
        case 90: .rotate270
        case 180: .rotate180
        case 270: .rotate90
        default: .rotate0
        }
    }

    /// The enum names the kernel gives the bits set ("rotate-270", "reflect-x"), joined by "|".
    public var description: String {
        let names = ["rotate-0", "rotate-90", "rotate-180", "rotate-270", "reflect-x", "reflect-y"]
        let set = names.indices.filter { rawValue & (1 << UInt64($0)) != 0 }.map { names[$0] }
        return set.isEmpty ? "none" : set.joined(separator: "|")
    }
}
