import ScanoutCore
import ScanoutKMS

// Per output and per frame: may this connector show the content, or must the display draw a
// censored frame (black or a slate) instead? The rules, in order:
//
//  1. A writeback connector is capture: censored when the policy denies capture.
//  2. External and virtual connectors (and unknown types) are censored when the policy denies
//     external output. Internal panels are part of the device and keep showing.
//  3. When the policy needs HDCP, every connector that is not internal needs an authenticated link:
//     the guard asks for `Content Protection` = Desired (and `HDCP Content Type`), which the
//     display adds to its next atomic commit (TEST_ONLY first), and shows only once the kernel
//     reports Enabled at the required type.
//     A connector without the properties cannot do HDCP and stays censored; a link that falls back
//     to Desired is censored on the next frame; one that is not Enabled within the timeout is
//     censored with a timeout reason (and shown if the kernel enables it later).
//  4. Otherwise: show.
//
// When the policy no longer needs HDCP (the item ended, or an unprotected one plays), the guard
// asks for `Content Protection` back to Undesired wherever it was set to Desired. The guard never
// commits itself: the display is the device's one writer (`OutputFilter.propertyChanges`).

/// Decides, per output and per frame, whether the content may be shown, and says which HDCP
/// property values the display should commit. Not `Sendable`: the display loop that owns the
/// device calls it, on its thread; `onEvent` is called on that thread, inside the call that caused
/// the change.
///
/// A display (`KMSDisplay.outputFilter = guard`) calls `handle(_:connectors:)` for every event it
/// reads from the device, `verdict(for:at:)` once per output per frame with the connector as last
/// read (its properties carry the kernel's `Content Protection` state), then commits
/// `propertyChanges()` with its frame and reports back (`propertyChangesCommitted`). The player
/// calls `play(policy:)` when an item starts.
public final class OutputGuard: OutputFilter {
    public struct Configuration: Sendable, Equatable {
        /// How long HDCP may take to become Enabled before the reason becomes a timeout.
        public var hdcpTimeout: Duration

        public init(hdcpTimeout: Duration = .seconds(5)) {
            self.hdcpTimeout = hdcpTimeout
        }
    }

    public private(set) var policy: ContentPolicy
    public let configuration: Configuration
    public private(set) var counters = OutputGuardCounters()
    /// Called once per verdict change.
    public var onEvent: ((OutputGuardEvent) -> Void)?
    /// The first connector whose release (`Content Protection` back to Undesired) the device
    /// refused, since the guard was made.
    public private(set) var releaseFailure: OutputGuardError?

    private var tracks: [UInt32: Track] = [:]
    /// Connectors on which a commit set `Content Protection` to Desired for this guard.
    private var requested: Set<UInt32> = []
    /// Property values to commit, in the order asked for; a later value of the same property of the
    /// same connector replaces an earlier one.
    private var pending: [AtomicRequest.Assignment] = []

    private enum Phase: Equatable {
        case idle
        case waiting(since: ClockTime, afterLoss: Bool, timedOut: Bool)
        case enabled
        case failed(KMSError)
    }

    private struct Track {
        var name: String
        var connectorClass: ConnectorClass
        var connection: KMSConnectionState
        var phase: Phase = .idle
        var verdict: OutputVerdict?
        var framesCensored = 0
    }

    public init(policy: ContentPolicy = .unrestricted, configuration: Configuration = Configuration(),
                onEvent: ((OutputGuardEvent) -> Void)? = nil) {
        self.policy = policy
        self.configuration = configuration
        self.onEvent = onEvent
    }

    // MARK: Items

    /// A new item starts playing under `policy`. When it needs no HDCP, Content Protection goes
    /// back to Undesired (with the display's next commit) wherever this guard asked for it; when it
    /// needs a stronger HDCP type, the links are asked for again. A refused release is counted and
    /// kept in `releaseFailure`.
    public func play(policy newPolicy: ContentPolicy) {
        let old = policy
        policy = newPolicy
        guard newPolicy.hdcp != .none else { return releaseHDCP() }
        for id in tracks.keys {
            switch tracks[id]!.phase {
            case .failed:
                // A refused request is tried again for a new item.
                tracks[id]!.phase = .idle
            case .waiting, .enabled:
                // A stronger type is asked for again; a type 1 link already satisfies type 0.
                if newPolicy.hdcp > old.hdcp { tracks[id]!.phase = .idle }
            case .idle:
                break
            }
        }
    }

    /// The item ended: nothing is restricted any more, and HDCP is released.
    public func stop() {
        play(policy: .unrestricted)
    }

    // MARK: Device changes

    /// Takes note of the connectors as they are now: new ones, removed ones, and screens plugged
    /// in or out (whose HDCP state starts over). A connector whose Content Protection was set back
    /// to Undesired behind the guard's back (another client, a driver reset) is asked again.
    public func update(from resources: KMSResources) {
        update(connectors: resources.connectors)
    }

    private func update(connectors: [KMSConnector]) {
        let present = Set(connectors.map(\.id))
        for id in tracks.keys where !present.contains(id) {
            tracks[id] = nil
            requested.remove(id)
        }
        pending.removeAll { !present.contains($0.objectID) }
        for c in connectors {
            _ = observe(c)
            if policy.hdcp != .none, requested.contains(c.id),
               c.properties[ContentProtection.property] == ContentProtection.undesired.rawValue {
                switch tracks[c.id]!.phase {
                case .waiting, .enabled: tracks[c.id]!.phase = .idle
                case .idle, .failed: break
                }
            }
        }
    }

    /// Handles an event read from the device: a hotplug (which is also how the kernel reports a
    /// Content Protection change) brings the connectors as the display re-read them.
    public func handle(_ event: KMSEvent, connectors: [KMSConnector]) {
        if case .hotplug = event { update(connectors: connectors) }
    }

    // MARK: Verdicts

    /// The verdict for `connector`'s next frame at `now` (the display's clock).
    /// `connector` is as the display last read it. May ask for HDCP (`propertyChanges`).
    public func verdict(for connector: KMSConnector, at now: ClockTime) -> OutputVerdict {
        _ = observe(connector)
        var track = tracks[connector.id]!
        let verdict = decide(connector, &track, now)
        if case .censor = verdict {
            track.framesCensored += 1
            counters.framesCensored[track.name, default: 0] += 1
        }
        let previous = track.verdict
        track.verdict = verdict
        tracks[connector.id] = track
        if previous != verdict {
            switch verdict {
            case let .censor(reason): onEvent?(.outputRestricted(output: track.name, reason: reason))
            case .show: if previous != nil { onEvent?(.outputUnrestricted(output: track.name)) }
            }
        }
        return verdict
    }

    /// Every output the guard knows of (seen by `update` or judged), by name. `screenConnectEnabled`
    /// is false until the output's first frame shows the content.
    public var outputs: [OutputStatus] {
        tracks.map { id, t in
            var reason: CensorReason?
            if case let .censor(r)? = t.verdict { reason = r }
            return OutputStatus(output: t.name, connectorID: id, connectorClass: t.connectorClass,
                                screenConnectEnabled: t.verdict == .show, reason: reason,
                                framesCensored: t.framesCensored, hdcp: hdcpState(t))
        }.sorted { $0.output < $1.output }
    }

    /// The status of the output named `output` ("HDMI-A-1"), nil if it was never seen.
    public func status(of output: String) -> OutputStatus? { outputs.first { $0.output == output } }

    /// Whether `output` showed the content on its latest frame (false when censored or unknown).
    public func screenConnectEnabled(_ output: String) -> Bool { status(of: output)?.screenConnectEnabled ?? false }

    // MARK: Rules

    private func decide(_ c: KMSConnector, _ t: inout Track, _ now: ClockTime) -> OutputVerdict {
        switch t.connectorClass {
        case .writeback where policy.capture == .deny:
            return .censor(.captureDenied(output: t.name))
        case .external where policy.externalOutput == .deny, .virtual where policy.externalOutput == .deny:
            return .censor(.externalOutputDenied(output: t.name, connectorClass: t.connectorClass))
        default:
            break
        }
        guard policy.hdcp != .none, t.connectorClass != .internal else { return .show }

        guard c.properties[ContentProtection.property] != nil else {
            return .censor(.hdcpUnsupported(output: t.name, missingProperty: ContentProtection.property))
        }
        if policy.hdcp == .type1 && c.properties[ContentProtection.contentTypeProperty] == nil {
            return .censor(.hdcpUnsupported(output: t.name, missingProperty: ContentProtection.contentTypeProperty))
        }
        guard c.connection == .connected else { return .censor(.hdcpNotConnected(output: t.name)) }

        switch t.phase {
        case let .failed(error):
            return .censor(.hdcpRequestFailed(output: t.name, error: error))
        case .idle:
            requestHDCP(c)
            t.phase = .waiting(since: now, afterLoss: false, timedOut: false)
        case .waiting, .enabled:
            break
        }

        if linkSatisfies(c) {
            t.phase = .enabled
            return .show
        }
        switch t.phase {
        case .enabled:
            counters.hdcpLinkLosses += 1
            t.phase = .waiting(since: now, afterLoss: true, timedOut: false)
            return .censor(.hdcpLost(output: t.name))
        case let .waiting(since, afterLoss, timedOut):
            if now >= since && now - since >= configuration.hdcpTimeout {
                if !timedOut {
                    counters.hdcpTimeouts += 1
                    t.phase = .waiting(since: since, afterLoss: afterLoss, timedOut: true)
                }
                return .censor(.hdcpTimedOut(output: t.name, required: policy.hdcp,
                                             seconds: configuration.hdcpTimeout.secondsValue))
            }
            return .censor(afterLoss ? .hdcpLost(output: t.name) : .hdcpPending(output: t.name, required: policy.hdcp))
        case .idle, .failed:
            // Not reached: .idle became .waiting above, .failed returned.
            return .censor(.hdcpPending(output: t.name, required: policy.hdcp))
        }
    }

    /// Content Protection is Enabled, at type 1 when the policy needs type 1 (a type 1 link also
    /// satisfies type 0).
    private func linkSatisfies(_ c: KMSConnector) -> Bool {
        guard c.properties[ContentProtection.property] == ContentProtection.enabled.rawValue else { return false }
        if policy.hdcp == .type1 { return c.properties[ContentProtection.contentTypeProperty] == 1 }
        return true
    }

    /// Asks for Content Protection = Desired and the content type. i915 treats a change of either
    /// property as a modeset, so the display's commit allows one.
    private func requestHDCP(_ c: KMSConnector) {
        want(c.id, ContentProtection.property, ContentProtection.desired.rawValue)
        if let type = policy.hdcp.contentType, c.properties[ContentProtection.contentTypeProperty] != nil {
            want(c.id, ContentProtection.contentTypeProperty, type)
        }
    }

    /// Content Protection back to Undesired wherever a commit set it to Desired; requests not
    /// committed yet are dropped.
    private func releaseHDCP() {
        pending.removeAll()
        for id in requested.sorted() { want(id, ContentProtection.property, ContentProtection.undesired.rawValue) }
        for id in tracks.keys { tracks[id]!.phase = .idle }
    }

    private func want(_ connectorID: UInt32, _ property: String, _ value: UInt64) {
        pending.removeAll { $0.objectID == connectorID && $0.property == property }
        pending.append(AtomicRequest.Assignment(objectID: connectorID, property: property, value: value))
    }

    // MARK: Commits (the display's)

    public func propertyChanges() -> [AtomicRequest.Assignment] { pending }

    /// A refused request censors its output with the kernel's reason (and is tried again after a
    /// re-plug or for a new item, not every frame); a refused release is kept in `releaseFailure`.
    public func propertyChangesCommitted(_ changes: [AtomicRequest.Assignment], error: KMSError?) {
        pending.removeAll { changes.contains($0) }
        let protection = changes.filter { $0.property == ContentProtection.property }
        for change in protection {
            let id = change.objectID
            let releasing = change.value == ContentProtection.undesired.rawValue
            guard let error else {
                if releasing { requested.remove(id) } else { requested.insert(id) }
                continue
            }
            counters.hdcpCommitFailures += 1
            if releasing {
                requested.remove(id)
                if releaseFailure == nil { releaseFailure = .releaseFailed(output: tracks[id]?.name ?? "connector \(id)", error: error) }
            } else if tracks[id] != nil {
                tracks[id]!.phase = .failed(error)
            }
        }
    }

    /// Creates or refreshes the connector's track; a screen plugged in or out starts HDCP over.
    private func observe(_ c: KMSConnector) -> Track {
        if var t = tracks[c.id] {
            if t.connection != c.connection {
                t.connection = c.connection
                t.phase = .idle
                tracks[c.id] = t
            }
            return t
        }
        let t = Track(name: c.name, connectorClass: ConnectorClass(c), connection: c.connection)
        tracks[c.id] = t
        return t
    }

    private func hdcpState(_ t: Track) -> HDCPLinkState {
        guard policy.hdcp != .none, t.connectorClass != .internal else { return .notRequired }
        switch t.phase {
        case .enabled: return .enabled
        case .failed: return .failed
        case let .waiting(_, afterLoss, timedOut): return timedOut ? .timedOut : afterLoss ? .lost : .pending
        case .idle: return .notRequested
        }
    }
}
