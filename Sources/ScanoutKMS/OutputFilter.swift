import ScanoutCore

// The seam between a KMS display and a content policy: the display asks, per output and per frame,
// whether the connector may show the content, and forwards what the device reports. The filter
// never commits to the device itself: the display is the one writer.

/// Show the frame on an output, or draw a censored frame (the background) instead, for `reason`.
public enum OutputFilterVerdict<Reason: Sendable & Equatable & CustomStringConvertible>: Sendable, Equatable {
    case show
    case censor(Reason)

    public var shows: Bool { self == .show }

    /// The reason's one-line description, nil when the frame is shown.
    public var censorDescription: String? {
        if case let .censor(reason) = self { return reason.description }
        return nil
    }
}

extension AtomicRequest {
    /// Adds every assignment, in order.
    public mutating func add(_ more: [Assignment]) { assignments += more }
}

/// Decides per output and per frame whether a connector may show the content. A KMS display holds
/// one (`KMSDisplay.outputFilter`) and calls it on the playback loop's thread only, once per output
/// per frame; not `Sendable`.
public protocol OutputFilter: AnyObject {
    associatedtype Reason: Sendable & Equatable & CustomStringConvertible

    /// The verdict for `connector`'s next frame at `now` (the display's clock).
    /// `connector` is as the display last read it: its properties carry the kernel's state.
    func verdict(for connector: KMSConnector, at now: ClockTime) -> OutputFilterVerdict<Reason>

    /// Every event read from the device, after the display has handled it, with the connectors as
    /// last read (a hotplug re-reads them; it is also how the kernel reports a property change such
    /// as `Content Protection`). The display also calls it with `.hotplug` when the filter is
    /// attached, so that the filter starts from the connectors as they are.
    func handle(_ event: KMSEvent, connectors: [KMSConnector])

    /// The connector property values (`Content Protection` = Desired, for example) the filter wants
    /// the device to take, asked once per commit
    /// after the verdicts. The display adds them to that commit's atomic request (tested with
    /// `TEST_ONLY` first, allowing a modeset, since a driver may treat such a change as one) and
    /// reports the outcome with `propertyChangesCommitted`; until then they are asked for again.
    func propertyChanges() -> [AtomicRequest.Assignment]

    /// How the commit carrying `changes` went: `error` nil when the device took them, else the
    /// kernel's refusal (the frame was then committed without them).
    func propertyChangesCommitted(_ changes: [AtomicRequest.Assignment], error: KMSError?)
}

extension OutputFilter {
    /// A filter that only judges asks for no property changes.
    public func propertyChanges() -> [AtomicRequest.Assignment] { [] }
    public func propertyChangesCommitted(_ changes: [AtomicRequest.Assignment], error: KMSError?) {}

    /// The verdict's reason in one line, nil when `connector` shows the frame: what a display that
    /// holds `any OutputFilter` draws by.
    public func censorDescription(for connector: KMSConnector, at now: ClockTime) -> String? {
        verdict(for: connector, at: now).censorDescription
    }
}
