import Foundation
import GRDB
import Logging

/// The offline store: `offline.db` (SQLite through GRDB) in the state directory, and each
/// download's files in `offline/ID/`; the service's user alone reads them (`PrivateFiles`: the
/// state directory and the store's 0700, the database and `asset.json` 0600). Thread-safe (a `DatabaseQueue` serialises every access).
///
/// A database that cannot be opened, fails SQLite's `quick_check` or cannot be migrated is moved
/// aside (`offline.db.corrupt-TIME`, logged as an error) and an empty one is made; the completed
/// downloads whose directories hold an `asset.json` (written at completion) are registered again.
public final class OfflineStore: Sendable {
    public let directory: String
    public var mediaRoot: String { directory + "/offline" }
    public var databaseFile: String { directory + "/offline.db" }
    let db: DatabaseQueue
    let logger: Logger

    /// Opens (or makes) the store in `directory`, which must exist or be creatable.
    public init(directory: String, logger: Logger) throws(OfflineError) {
        self.directory = directory
        self.logger = logger
        try PrivateFiles.directory(directory)
        try PrivateFiles.directory(directory + "/offline")
        // Assets kept by a version that left them readable to all.
        for id in (try? FileManager.default.contentsOfDirectory(atPath: directory + "/offline")) ?? [] {
            PrivateFiles.narrow(directory + "/offline/" + id, to: 0o700)
            PrivateFiles.narrow(directory + "/offline/" + id + "/asset.json", to: 0o600)
        }
        let file = directory + "/offline.db"
        do {
            db = try Self.open(file)
        } catch {
            let aside = file + ".corrupt-\(Int(Date().timeIntervalSince1970))"
            logger.error("offline store: \(file) cannot be used (\(error)); moved aside to \(aside), starting an empty store")
            for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: file + suffix) {
                _ = rename(file + suffix, aside + suffix)
            }
            do { db = try Self.open(file) } catch { throw .store("a new database \(file) cannot be made (\(error))") }
            let found = reregister()
            if !found.isEmpty { logger.notice("offline store: registered again \(found.count) completed download(s): \(found.joined(separator: ", "))") }
        }
    }

    /// Opens the database, mode 0600 (SQLite gives its `-wal` and `-shm` files the database's mode).
    private static func open(_ file: String) throws -> DatabaseQueue {
        for suffix in ["", "-wal", "-shm"] where suffix.isEmpty || FileManager.default.fileExists(atPath: file + suffix) {
            PrivateFiles.file(file + suffix)
        }
        var config = Configuration()
        config.busyMode = .timeout(5)
        let queue = try DatabaseQueue(path: file, configuration: config)
        let check = try queue.read { try String.fetchOne($0, sql: "PRAGMA quick_check") }
        guard check == "ok" else { throw DatabaseError(resultCode: .SQLITE_CORRUPT, message: "quick_check: \(check ?? "no answer")") }
        try migrator.migrate(queue)
        return queue
    }

    /// The schema, one migration per version. `licence` holds the licence of an asset (a
    /// download registered with a content token that carries one); `v2` adds the clock's
    /// high-water mark (`LicenceClock`) and one licence per download; `v3` the sealed content
    /// keys, `v4` their key ids (CENC).
    static var migrator: DatabaseMigrator {
        var m = DatabaseMigrator()
        m.registerMigration("v1") { db in
            try db.create(table: "download") { t in
                t.primaryKey("id", .text)
                t.column("source", .text).notNull().indexed()
                t.column("token", .text)
                t.column("kind", .text).notNull()
                t.column("mediaURL", .text).notNull()
                t.column("bitrate", .integer)
                t.column("height", .integer)
                t.column("state", .text).notNull()
                t.column("reason", .text)
                t.column("estimate", .integer).notNull()
                t.column("created", .double).notNull()
                t.column("completed", .double)
            }
            try db.create(table: "segment") { t in
                t.column("downloadId", .text).notNull().references("download", onDelete: .cascade)
                t.column("number", .integer).notNull()
                t.column("url", .text).notNull()
                t.column("duration", .double).notNull()
                t.column("file", .text).notNull()
                t.column("length", .integer)
                t.column("done", .boolean).notNull()
                t.column("initSection", .boolean).notNull().defaults(to: false)
                t.primaryKey(["downloadId", "number"])
            }
            try db.create(table: "licence") { t in
                t.column("downloadId", .text).notNull().references("download", onDelete: .cascade)
                t.column("kind", .text).notNull()
                t.column("expires", .double)
                t.column("playDuration", .double)
                t.column("firstPlay", .double)
            }
        }
        m.registerMigration("v2") { db in
            try db.create(table: "clock") { t in
                t.primaryKey("id", .integer)
                t.column("highWater", .double).notNull()
            }
            try db.create(index: "licence_download", on: "licence", columns: ["downloadId"], unique: true)
        }
        m.registerMigration("v3") { db in
            try db.create(table: "contentKey") { t in
                t.primaryKey("downloadId", .text).references("download", onDelete: .cascade)
                t.column("sealed", .blob).notNull()
                t.column("iv", .text)
                t.column("mediaSequence", .integer).notNull()
            }
        }
        m.registerMigration("v4") { db in
            // The key id of a CENC-encrypted MP4's key (null for AES-128 HLS).
            try db.alter(table: "contentKey") { t in t.add(column: "kid", .text) }
        }
        m.registerMigration("v5") { db in
            // Proof of play: one row per item played (`PlayRecord`).
            try db.create(table: "play") { t in
                t.primaryKey("id", .text)
                t.column("item", .integer).notNull()
                t.column("source", .text).notNull()
                t.column("zone", .text)
                t.column("start", .double).notNull().indexed()
                t.column("end", .double).notNull()
                t.column("seconds", .double).notNull()
                t.column("outcome", .text).notNull()
                t.column("framesShown", .integer).notNull()
                t.column("framesDropped", .integer).notNull()
            }
        }
        m.registerMigration("v6") { db in
            // Whether a play has ended (a play still open at a start was cut off by a crash), and
            // the messages waiting for the fleet's broker (`OutboxMessage`).
            try db.alter(table: "play") { t in t.add(column: "closed", .boolean).notNull().defaults(to: true) }
            try db.create(table: "outbox") { t in
                t.autoIncrementedPrimaryKey("seq")
                t.column("topic", .text).notNull()
                t.column("payload", .blob).notNull()
                t.column("created", .double).notNull()
            }
        }
        return m
    }

    /// The directory of download `id`.
    public func directory(of id: String) -> String { mediaRoot + "/" + id }

    // MARK: Records

    /// Records a download; `idTaken` when its id is in the store already (checked in the same
    /// transaction, so that of requests racing for one id exactly one is recorded).
    public func insert(_ record: DownloadRecord, segments: [SegmentRecord], licence: LicenceRecord? = nil,
                       key: ContentKeyRecord? = nil) throws(OfflineError) {
        struct Taken: Error {}
        do {
            try db.write { db in
                if try DownloadRecord.exists(db, key: record.id) { throw Taken() }
                try record.insert(db)
                for s in segments { try s.insert(db) }
                try licence?.insert(db)
                try key?.insert(db)
            }
        } catch is Taken {
            throw .idTaken(id: record.id)
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
            throw .idTaken(id: record.id)
        } catch {
            throw failure(error)
        }
    }

    public func downloads() throws(OfflineError) -> [DownloadRecord] {
        try read { try DownloadRecord.order(Column("created"), Column("id")).fetchAll($0) }
    }

    public func download(_ id: String) throws(OfflineError) -> DownloadRecord? {
        try read { try DownloadRecord.fetchOne($0, key: id) }
    }

    public func segments(of id: String) throws(OfflineError) -> [SegmentRecord] {
        try read { try SegmentRecord.filter(Column("downloadId") == id).order(Column("number")).fetchAll($0) }
    }

    public func setState(_ id: String, _ state: DownloadState, reason: String? = nil) throws(OfflineError) {
        try write { db in
            try db.execute(sql: "UPDATE download SET state = ?, reason = ?, completed = ? WHERE id = ?",
                           arguments: [state.rawValue, reason, state == .completed ? Date().timeIntervalSince1970 : nil, id])
        }
    }

    public func update(_ segment: SegmentRecord) throws(OfflineError) {
        try write { try segment.update($0) }
    }

    public func delete(_ id: String) throws(OfflineError) {
        try write { _ = try DownloadRecord.deleteOne($0, key: id) }
    }

    /// The newest download of `source` that can be played from: completed, or (HLS) with at
    /// least its first segment on disk.
    public func playable(source: String) throws(OfflineError) -> (record: DownloadRecord, segments: [SegmentRecord])? {
        try read { db in
            let records = try DownloadRecord.filter(Column("source") == source).order(Column("created").desc).fetchAll(db)
            for r in records where r.state != .failed {
                let segs = try SegmentRecord.filter(Column("downloadId") == r.id).order(Column("number")).fetchAll(db)
                let started = segs.first { !$0.initSection }?.done == true && segs.allSatisfy { !$0.initSection || $0.done }
                if r.state == .completed || (r.kind == .hls && started) { return (r, segs) }
            }
            return nil
        }
    }

    func read<T>(_ body: (Database) throws -> T) throws(OfflineError) -> T {
        do { return try db.read(body) } catch let e as OfflineError { throw e } catch { throw failure(error) }
    }

    func write<T>(_ body: (Database) throws -> T) throws(OfflineError) -> T {
        do { return try db.write(body) } catch let e as OfflineError { throw e } catch { throw failure(error) }
    }

    /// A database error: logged with SQLite's words, handed on as `database` (whose answer to a
    /// client names no SQL).
    private func failure(_ error: any Error) -> OfflineError {
        logger.error("offline store: the database failed: \(error)")
        return .database("\(error)")
    }

    // MARK: Completed assets, described beside their files

    /// Written into a download's directory once it is complete: what a new database needs to
    /// register it again.
    struct AssetFile: Codable {
        var record: DownloadRecord
        var segments: [SegmentRecord]
        /// Its licence with the first play, and its content key (sealed), so that a new database
        /// does not lose them.
        var licence: LicenceRecord?
        var key: ContentKeyRecord?
    }

    func writeAsset(_ record: DownloadRecord, segments: [SegmentRecord]) throws {
        let asset = AssetFile(record: record, segments: segments, licence: try licence(of: record.id), key: try contentKey(of: record.id))
        let data = try JSONEncoder().encode(asset)
        try PrivateFiles.write(data, to: directory(of: record.id) + "/asset.json")
    }

    /// Registers every directory with an `asset.json` whose files are all there with their
    /// lengths; returns their ids.
    private func reregister() -> [String] {
        let ids = (try? FileManager.default.contentsOfDirectory(atPath: mediaRoot)) ?? []
        var found: [String] = []
        for id in ids.sorted() {
            let dir = directory(of: id)
            guard let data = FileManager.default.contents(atPath: dir + "/asset.json"),
                  let asset = try? JSONDecoder().decode(AssetFile.self, from: data), asset.record.id == id,
                  asset.segments.allSatisfy({ fileSize(dir + "/" + $0.file) == $0.length }) else { continue }
            if (try? insert(asset.record, segments: asset.segments, licence: asset.licence, key: asset.key)) != nil { found.append(id) }
        }
        return found
    }
}

/// The size of the file at `path`, or nil when there is none.
func fileSize(_ path: String) -> Int64? {
    var st = stat()
    guard stat(path, &st) == 0 else { return nil }
    return Int64(st.st_size)
}
