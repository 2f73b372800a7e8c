import Foundation
import GRDB

/// Where a download stands. `queued` waits for a slot (`concurrentDownloads`), `downloading` has
/// one, `paused` waits for `resume`, `completed` passed the integrity check, `failed` says why
/// in its reason, `cancelled` is reported once as the download and its files go.
public enum DownloadState: String, Sendable, Codable, CaseIterable {
    case queued, downloading, paused, completed, failed, cancelled
}

/// What a download keeps: the media playlist of one HLS variant with its segments, or one file.
public enum DownloadKind: String, Sendable, Codable {
    case hls, file
}

/// One download, as the store's `download` table holds it. Sizes in bytes.
public struct DownloadRecord: Codable, Sendable, Equatable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "download"
    /// A short random id; also the name of its directory under `offline/`.
    public var id: String
    /// The source as asked (a master or media playlist, or a file URL).
    public var source: String
    /// The content token the source was asked with, if any (for the licences of a later version).
    public var token: String?
    public var kind: DownloadKind
    /// The media playlist kept (HLS), or the file's URL.
    public var mediaURL: String
    /// The chosen variant's `BANDWIDTH` (bits a second) and height, when the source was a master.
    public var bitrate: Int?
    public var height: Int?
    public var state: DownloadState
    public var reason: String?
    /// The estimate made before the download started (BANDWIDTH x duration, or Content-Length).
    public var estimate: Int64
    /// Seconds since 1970.
    public var created: Double
    public var completed: Double?
}

/// One segment of an HLS download (or the single file of a file download, number 0).
public struct SegmentRecord: Codable, Sendable, Equatable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "segment"
    public var downloadId: String
    /// Its position in the playlist, from 0.
    public var number: Int
    public var url: String
    /// `#EXTINF` seconds (0 for a file).
    public var duration: Double
    /// The file's name in the download's directory.
    public var file: String
    /// The length the server announced (the full length, from Content-Length or Content-Range);
    /// nil until the first answer.
    public var length: Int64?
    /// Written whole, length checked and fsynced.
    public var done: Bool
    /// The initialisation section (`#EXT-X-MAP`) of fragmented MP4 segments, fetched first.
    public var initSection = false
}

/// A download as the API shows it: the record, bytes on disk, and the measured rate.
public struct DownloadStatus: Sendable, Equatable {
    public var record: DownloadRecord
    /// Bytes on disk (finished segments and the partial one).
    public var bytes: Int64
    /// The announced lengths where known, the estimate for the rest.
    public var total: Int64
    /// Bytes a second over the last few seconds (0 when not downloading).
    public var rate: Double
    /// Seconds left at `rate`; nil when unknown.
    public var eta: Double?
    /// Segments finished, of `segmentCount`.
    public var segmentsDone: Int
    public var segmentCount: Int
    public var percent: Double { total > 0 ? min(100, Double(bytes) * 100 / Double(total)) : 0 }
}

/// What the manager tells its listener (the service turns them into events).
public enum OfflineEvent: Sendable, Equatable {
    case progress(id: String, bytes: Int64, total: Int64, percent: Double, rate: Double, eta: Double?)
    case state(id: String, state: DownloadState, reason: String?)
}

/// A download the manager refuses or cannot carry out; each says what failed and what to do.
public enum OfflineError: Error, Equatable, CustomStringConvertible {
    /// The disk would keep less than the cushion free (HTTP 507).
    case insufficientSpace(needed: Int64, available: Int64, cushion: Int64)
    /// The source could not be read or understood (HTTP 422).
    case sourceUnusable(source: String, reason: String)
    case notFound(id: String)
    /// The download is not in a state the command applies to (HTTP 409).
    case invalidState(id: String, state: DownloadState, command: String)
    /// The store itself failed (HTTP 500).
    case store(String)
    /// An asset id that is already in the store (HTTP 409).
    case idTaken(id: String)
    /// The store's database failed: SQLite's words, for the log (the API answers 503 without them).
    case database(String)

    public var description: String {
        switch self {
        case .insufficientSpace(let needed, let available, let cushion):
            return "the download needs about \(needed) bytes and \(available) are free; at least \(cushion) must stay free (offline.minFreeBytes): free space in the state directory or lower the cushion"
        case .sourceUnusable(let s, let r): return "\(s) cannot be downloaded: \(r)"
        case .notFound(let id): return "no download \"\(id)\" (GET /downloads lists them)"
        case .invalidState(let id, let s, let c): return "download \(id) is \(s.rawValue): \(c) does not apply"
        case .store(let m): return "the offline store failed: \(m)"
        case .database(let m): return "the offline store's database failed: \(m)"
        case .idTaken(let id): return "asset \"\(id)\" is already registered: choose another id, or DELETE /assets/\(id) first"
        }
    }
}

/// The offline settings (`offline` in the service's config).
public struct OfflineSettings: Sendable, Equatable {
    /// Downloads that run at once; the rest wait as `queued`.
    public var concurrentDownloads = 2
    /// Bytes that must stay free on the state directory's file system after a download.
    public var minFreeBytes: Int64 = 512 << 20
    /// Download every playlist item in the background (so that the playlist goes on offline).
    public var keepAll = false
    /// Caps for the variant kept of an HLS master (`maxHeight`, `maxBitrate`), when a request
    /// gives none.
    public var maxHeight: Int?
    public var maxBitrate: Int?
    /// Attempts per segment before the download fails (each resumes where the last stopped).
    public var attempts = 4
    /// Seconds without a byte before a request is given up (and tried again).
    public var readTimeout = 15.0
    /// The key file `GET /licence/KID` answers from (`{"keys": {"KID": "32 hex digits"}}`);
    /// nil: the endpoint is off.
    public var licenceKeys: String?
    /// The hosts downloads and key fetches may reach (`offline.allowedHosts`); empty: any but
    /// loopback, link-local and unspecified addresses (`HostAllowance`).
    public var allowedHosts = HostAllowance()

    public init() {}
}
