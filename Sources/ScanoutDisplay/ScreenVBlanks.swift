import Foundation
import ScanoutCore

/// A composed screen's vblanks as its zones' players read them, from their own threads: what the
/// output's vblank source said at the screen's last compose, kept under a lock (the output itself
/// is used on the compositor's thread only). A zone cannot hold the screen's commit
/// (`holdsCommits` is false), and its lead is the compositor's plus a quarter refresh: a zone's
/// frame meant for a vblank is in its surface before the compose for that vblank takes it.
///
/// `@unchecked Sendable`: the grid is read and written under `lock` only.
public final class ScreenVBlanks: VBlankSource, @unchecked Sendable {
    private let lock = NSLock()
    private var grid: VBlankGrid

    /// What `source` says now (read on the thread that uses it).
    public init(_ source: any VBlankSource) {
        grid = VBlankGrid(source)
    }

    /// Takes what `source` says now; called on the thread that uses `source`.
    public func update(from source: any VBlankSource) {
        let g = VBlankGrid(source)
        lock.withLock { grid = g }
    }

    public var refreshInterval: Duration { lock.withLock { grid.period } }
    public var lastVBlank: ClockTime? { lock.withLock { grid.lastVBlank } }
    public var commitLead: Duration { lock.withLock { grid.commitLead + grid.period / 4 } }
}
