import ScanoutCore

/// How a player opens the sink its `AudioOutput` writes to: given a device name and the format
/// wanted, a sink opened for them (the device may take another rate or channel count: the sink's
/// `format` says which), and the clock that sink is heard by (`now`, nanoseconds), which the
/// output stamps what it hears with.
///
/// `alsa`, the default, opens an `ALSADevice`, heard on the monotonic clock. A test passes the
/// factory of `ScanoutTesting.FakeAudioSinks`: sinks heard at the pace of a manual clock, so the
/// player's sound is checked in virtual time.
///
/// Sendable and Equatable, as the settings that carry it are (`AudioSettings`). Closures cannot
/// be compared, so two factories are equal when their `id`s are: `alsa`, or one per set of fake
/// sinks. A factory is chosen once, by whoever builds the player, and is not a setting a user
/// changes; comparing it by name keeps "did the settings change" a plain value comparison
/// without pretending to compare what the closures do.
public struct AudioSinkFactory: Sendable, Equatable, CustomStringConvertible {
    /// Names the factory; equal factories have equal ids.
    public let id: String
    /// The clock the sinks it opens are heard by.
    public let now: @Sendable () -> ClockTime
    private let make: @Sendable (_ device: String, _ format: AudioFormat) throws -> any AudioSink

    /// A factory named `id` whose sinks `open` opens, heard by `now`.
    public init(id: String, now: @escaping @Sendable () -> ClockTime,
                open: @escaping @Sendable (_ device: String, _ format: AudioFormat) throws -> any AudioSink) {
        self.id = id
        self.now = now
        make = open
    }

    /// Opens `device` for `format`; throws what the sink's opening throws (an `AudioError` for
    /// ALSA: the device and why, to fix the name or free the device).
    public func open(device: String, format: AudioFormat) throws -> any AudioSink {
        try make(device, format)
    }

    /// ALSA PCM devices (`ALSADevice`, about 100 ms of buffer) on the monotonic clock.
    public static let alsa = AudioSinkFactory(id: "alsa", now: { ClockTime.now() }) { device, format in
        try ALSADevice(name: device, format: format)
    }

    public static func == (a: Self, b: Self) -> Bool { a.id == b.id }

    public var description: String { id }
}
