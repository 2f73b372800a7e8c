import CFFmpeg
import ScanoutCore

/// The whole body of `url` (any protocol libavformat opens: http, https, file), at most
/// `limit` bytes; a read that waits longer than `timeoutSeconds` fails. For small documents a
/// player reads besides its media (a channel list). (`avio_open2`, `avio_read`)
public func readWhole(url: String, timeoutSeconds: Double, limit: Int = 16 << 20) throws(MediaError) -> [UInt8] {
    var dict: OpaquePointer?
    defer { av_dict_free(&dict) }
    av_dict_set(&dict, "rw_timeout", String(Int64(timeoutSeconds * 1_000_000)), 0)
    var opened: UnsafeMutablePointer<AVIOContext>?
    let r = avio_open2(&opened, url, AVIO_FLAG_READ, nil, &dict)
    defer { avio_closep(&opened) }
    guard r >= 0, let context = opened else { throw .openFailed(input: url, reason: ffmpegErrorString(r)) }
    var out: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while out.count < limit {
        let n = chunk.withUnsafeMutableBufferPointer { avio_read(context, $0.baseAddress, Int32($0.count)) }
        if n == SCANOUT_AVERROR_EOF || n == 0 { break }
        guard n > 0 else { throw .readFailed(input: url, reason: ffmpegErrorString(n)) }
        out += chunk[0..<Int(n)]
    }
    return out
}
