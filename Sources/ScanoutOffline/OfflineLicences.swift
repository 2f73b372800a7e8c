import Foundation
import GRDB
import ScanoutPolicy

/// The licence of an asset, as the store's `licence` table holds it.
public struct LicenceRecord: Codable, Sendable, Equatable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "licence"
    public var downloadId: String
    public var kind: Licence.Kind
    public var expires: Double?
    public var playDuration: Double?
    /// When the asset was first played under this licence (seconds since 1970); a rental's play
    /// window starts there.
    public var firstPlay: Double?

    public init(downloadId: String, licence: Licence, firstPlay: Double? = nil) {
        self.downloadId = downloadId
        kind = licence.kind
        expires = licence.expires
        playDuration = licence.playDuration
        self.firstPlay = firstPlay
    }

    public var licence: Licence { Licence(kind: kind, expires: expires, playDuration: playDuration) }
}

/// A licence and where it stands, for `GET /assets/ID`.
public struct LicenceStatus: Sendable, Equatable {
    public var licence: Licence
    public var firstPlay: Double?
    public var verdict: LicenceVerdict
    /// The time it was judged at (the clock's high-water mark, see `OfflineStore.licenceNow`).
    public var now: Double
}

extension OfflineStore {
    public func licence(of id: String) throws(OfflineError) -> LicenceRecord? {
        try read { try LicenceRecord.filter(Column("downloadId") == id).fetchOne($0) }
    }

    /// Replaces the licence of download `id` (its play window starts again).
    public func setLicence(_ licence: Licence, of id: String) throws(OfflineError) {
        try write { db in
            try LicenceRecord.filter(Column("downloadId") == id).deleteAll(db)
            try LicenceRecord(downloadId: id, licence: licence).insert(db)
        }
        rewriteAsset(id)
    }

    /// Records the first play of download `id` at `time`, unless it has one.
    public func markFirstPlay(of id: String, at time: Double) throws(OfflineError) {
        let changed = try write { db in
            try db.execute(sql: "UPDATE licence SET firstPlay = ? WHERE downloadId = ? AND firstPlay IS NULL", arguments: [time, id])
            return db.changesCount > 0
        }
        if changed { rewriteAsset(id) }
    }

    /// `asset.json` of a completed download again, with its licence as it now is.
    private func rewriteAsset(_ id: String) {
        guard let record = try? download(id), record.state == .completed, let segments = try? segments(of: id) else { return }
        try? writeAsset(record, segments: segments)
    }

    /// The time licences are judged at: the later of `wall` and the largest wall-clock time the
    /// store has seen, which becomes `wall` when that is later. A clock turned back therefore
    /// cannot make a licence last longer: time stands at the high-water mark until the clock
    /// passes it again.
    public func licenceNow(wall: Double) throws(OfflineError) -> Double {
        try write { db in
            let seen = try Double.fetchOne(db, sql: "SELECT highWater FROM clock WHERE id = 1") ?? 0
            if wall > seen {
                try db.execute(sql: "INSERT INTO clock (id, highWater) VALUES (1, ?) ON CONFLICT(id) DO UPDATE SET highWater = excluded.highWater",
                               arguments: [wall])
            }
            return max(wall, seen)
        }
    }
}

extension OfflineManager {
    /// The time licences are judged at: the wall clock, never earlier than the largest time
    /// the store has seen (`OfflineStore.licenceNow`).
    func licenceNow() throws(OfflineError) -> Double {
        try store.licenceNow(wall: wallClock())
    }

    /// The licence of asset `id` and where it stands now; nil when it has none.
    public func licenceStatus(_ id: String) throws(OfflineError) -> LicenceStatus? {
        _ = try existing(id)
        guard let l = try store.licence(of: id) else { return nil }
        let now = try licenceNow()
        return LicenceStatus(licence: l.licence, firstPlay: l.firstPlay, verdict: l.licence.verdict(firstPlay: l.firstPlay, now: now), now: now)
    }

    /// Replaces the licence of asset `id` with `licence` (from a new token); a rental's play
    /// window starts again at its next play.
    public func refresh(_ id: String, licence: Licence) throws(OfflineError) -> LicenceStatus {
        _ = try existing(id)
        try store.setLicence(licence, of: id)
        logger.info("offline: \(id) licence refreshed", metadata: ["kind": "\(licence.kind.rawValue)"])
        guard let status = try licenceStatus(id) else { throw .store("the licence of \(id) was not kept") }
        return status
    }

    /// Why asset `id` may not be played now (its licence expired, or cannot be read); nil: it may.
    func licenceRefusal(_ id: String) -> String? {
        let status: LicenceStatus?
        do { status = try licenceStatus(id) } catch { return "the licence of asset \(id) cannot be read (\(error))" }
        guard let status, case let .expired(at) = status.verdict else { return nil }
        let when = Date(timeIntervalSince1970: at).formatted(.iso8601)
        let reason = "the \(status.licence.kind.rawValue) licence of asset \(id) expired at \(when); refresh it "
            + "(POST /assets/\(id)/refresh with a new token) or delete the asset (DELETE /assets/\(id))"
        logger.warning("offline: \(reason)")
        return reason
    }

    /// Called when `source` starts playing: the playlists naming the keys of the items that
    /// played before go (those this manager wrote); a rental kept offline that was never played
    /// starts its play window now.
    public func played(source: String) {
        let current = try? store.playable(source: source)
        let keep = Set([current?.record.id].compactMap { $0 })
        let gone = keyedPlaylists.withLock { written in
            defer { written = written.intersection(keep) }
            return written.subtracting(keep)
        }
        for id in gone { KeyedPlaylists.remove(id: id) }
        guard let (r, _) = current, let l = try? store.licence(of: r.id),
              l.kind == .rental, l.firstPlay == nil, let now = try? licenceNow() else { return }
        do {
            try store.markFirstPlay(of: r.id, at: now)
            logger.info("offline: \(r.id) played for the first time; its rental window starts")
        } catch {
            logger.error("offline: \(r.id): its first play cannot be recorded (\(error))")
        }
    }

    /// Advances the clock's high-water mark every `interval` while the task runs, so that a clock
    /// turned back between plays is seen too.
    public func keepClock(every interval: Duration = .seconds(60)) -> Task<Void, Never> {
        Task { [weak self] in
            while !Task.isCancelled {
                guard let self else { return }
                _ = try? self.licenceNow()
                try? await Task.sleep(for: interval)
            }
        }
    }
}
