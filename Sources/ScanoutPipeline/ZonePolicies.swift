import Foundation
import ScanoutCore
import ScanoutDecode
import ScanoutDisplay
import ScanoutKMS
import ScanoutPlayer
import ScanoutPolicy
import ScanoutRender

/// The content policy of each zone of a screen, by zone name: the policy of the item each zone's
/// player plays (its token's, else the default), set from the players' threads as their items
/// change and read by the screen's output at each compose.
///
/// `@unchecked Sendable`: `policies` is read and written under `lock`.
public final class ZonePolicies: @unchecked Sendable {
    private let lock = NSLock()
    private var policies: [String: ContentPolicy] = [:]

    public init() {}

    /// Zone `name` plays content under `policy` from now on.
    public func set(_ policy: ContentPolicy, zone name: String) { lock.withLock { policies[name] = policy } }

    /// The policy zone `name` plays under (unrestricted for a zone that has played nothing).
    public func policy(zone name: String) -> ContentPolicy { lock.withLock { policies[name] ?? .unrestricted } }

    /// Records, for zone `name`, the policy of every item `player` starts from now on: its
    /// token's, looked up in `authorizer`, else the default. Call it before the player loads
    /// anything (`ScreenPlayer`'s `prepare`).
    public func follow(_ player: Player, zone name: String, authorizer: ContentAuthorizer) {
        player.submit { [self] engine in
            let previous = engine.onItemChanged
            engine.onItemChanged = { [self] item in
                previous?(item)
                set(authorizer.policy(token: item.token), zone: name)
            }
        }
    }
}

extension LayoutOutput {
    /// The screen to compose on: a KMS screen's with each zone judged by `policies`
    /// (`ZonePolicedOutput`); a headless one as it is.
    public func policed(by policies: ZonePolicies) -> ScreenOutput {
        guard let pipeline, let policed = ZonePolicedOutput(pipeline: pipeline, policies: policies) else { return screen }
        return ScreenOutput(output: policed, width: screen.width, height: screen.height, description: screen.description)
    }
}

/// A KMS screen of zones whose zones each have a content policy of their own (`ZonePolicies`):
/// at each compose, every zone whose policy restricts something gets an `OutputGuard` of its own
/// as its filter (`KMSDisplay.zoneFilters`), so that an output that fails the zone's rule shows
/// that zone's rectangle as its background and the other zones as they are. Guards are kept by
/// zone name across composes (a zone moved keeps its guard and its HDCP state).
///
/// Used on the screen's compositor thread only, as the display it wraps.
public final class ZonePolicedOutput: CanvasOutput {
    /// The KMS screen's pipeline (kept for its captures and its restore at the end).
    public let pipeline: PlaybackPipeline
    public let kms: KMSDisplay
    private let policies: ZonePolicies
    private var guards: [String: (policy: ContentPolicy, guard: OutputGuard)] = [:]
    private var attached: [Int: String] = [:]

    /// Nil when `pipeline` is not a KMS screen's.
    public init?(pipeline: PlaybackPipeline, policies: ZonePolicies) {
        guard let kms = pipeline.kms else { return nil }
        self.pipeline = pipeline
        self.kms = kms
        self.policies = policies
    }

    public var vblankSource: (any VBlankSource)? { kms.vblankSource }
    public var acceptsGPUFrames: Bool { kms.acceptsGPUFrames }

    public func present(_ canvas: Canvas, frames: [VideoFrame?]) throws {
        var wanted: [Int: String] = [:]
        for (i, zone) in canvas.zones.enumerated() {
            guard let name = zone.name else { continue }
            let policy = policies.policy(zone: name)
            guard policy != .unrestricted else {
                guards[name] = nil
                continue
            }
            if let kept = guards[name] {
                if kept.policy != policy {
                    kept.guard.play(policy: policy)
                    guards[name] = (policy, kept.guard)
                }
            } else {
                guards[name] = (policy, OutputGuard(policy: policy))
            }
            wanted[i] = name
        }
        let names = Set(canvas.zones.compactMap(\.name))
        guards = guards.filter { names.contains($0.key) }
        if wanted != attached {
            // Setting the filters tells each of them the connectors as they are (a hotplug).
            kms.zoneFilters = wanted.compactMapValues { guards[$0]?.guard }
            attached = wanted
        }
        try kms.present(canvas, frames: frames)
    }
}
