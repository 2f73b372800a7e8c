import Foundation
import ScanoutDecode

extension OfflineManager {
    /// The integrity check: every file as long as the server announced (and transport-stream
    /// segments whole packets), and the asset opens and decodes its first and last frame.
    func verify(_ record: DownloadRecord, _ segments: [SegmentRecord]) async throws {
        let dir = store.directory(of: record.id)
        // Encrypted segments (AES-128 HLS) are whole AES blocks (16 bytes), not transport packets;
        // a CENC file is checked by decrypting it (`checkDecryption`).
        let encrypted = try record.kind == .hls && store.contentKey(of: record.id) != nil
        for var s in segments {
            let size = fileSize(dir + "/" + s.file) ?? -1
            var problem: String?
            if let l = s.length, size != l {
                problem = "segment \(s.number) (\(s.file)) holds \(size) bytes; the server announced \(l)"
            } else if encrypted, size % 16 != 0 {
                problem = "segment \(s.number) (\(s.file)) holds \(size) bytes, not whole 16-byte AES blocks (the server sent less than the file)"
            } else if !encrypted, s.file.hasSuffix(".ts"), size % 188 != 0 {
                problem = "segment \(s.number) (\(s.file)) holds \(size) bytes, not whole 188-byte transport packets (the server sent less than the file)"
            }
            if let problem {
                // Fetched again from the start when the download is resumed.
                s.done = false
                truncate(dir + "/" + s.file, 0)
                try store.update(s)
                try writeLocalPlaylist(record, try store.segments(of: record.id))
                throw IntegrityError(problem)
            }
        }
        let local = try playableInput(record, segments)
        let input = local.source
        if record.kind == .file {
            // A CENC file is decoded whole there, with its key.
            try await checkDecryption(local, record: record)
            if local.decryptionKey != nil { return }
        }
        try await offThread {
            do {
                let seeker = try FrameSeeker(input: input)
                guard seeker.frameCount > 0 else { throw IntegrityError("\(input) holds no video frames") }
                _ = try seeker.frame(0)
                _ = try seeker.frame(seeker.frameCount - 1)
            } catch let e as IntegrityError {
                throw e
            } catch {
                // Inputs the demuxer cannot seek in (fragmented MP4 through the hls demuxer):
                // every frame decoded in order, the first and the last included.
                let reader = try FrameReader(input: input)
                let frame = VideoFrame()
                var count = 0
                while try reader.next(into: frame) { count += 1 }
                guard count > 0 else { throw IntegrityError("\(input) holds no video frames") }
            }
        }
    }
}

/// A download whose files do not pass the integrity check.
struct IntegrityError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = "integrity check: " + d }
}
