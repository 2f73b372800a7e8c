import Foundation

/// Times as the API, the schedule and `scanout schedule check` write and read them: ISO 8601 with
/// the offset (`2026-12-05T18:00:00+01:00`, `...Z`).
public enum ISOTime {
    public static let utc = TimeZone(identifier: "UTC")!

    /// `text` as an instant; nil when it is not ISO 8601 with its offset.
    public static func parse(_ text: String) -> Date? {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime]
        return f.date(from: text)
    }

    /// `date` with `zone`'s offset at that instant.
    public static func format(_ date: Date, in zone: TimeZone = utc) -> String {
        let f = ISO8601DateFormatter()
        f.timeZone = zone
        f.formatOptions = [.withInternetDateTime]
        return f.string(from: date)
    }
}
