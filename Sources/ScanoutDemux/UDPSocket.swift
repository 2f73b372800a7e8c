import CFFmpeg
import ScanoutCore

/// A UDP socket opened by libavformat's `udp` protocol: it joins the multicast group of the URL
/// when it opens and leaves it when it is closed (`localaddr`, `sources` and the other options
/// come from `LiveInputOptions.protocolOptions`). What the MPEG-TS inputs and the SAP listener
/// receive on.
///
/// Owns the protocol's `AVIOContext`, closed once in `deinit`. Used by one thread at a time; the
/// blocking read polls `interrupted` (libavformat wakes every 100 ms) on that thread.
final class UDPSocket {
    private var context: UnsafeMutablePointer<AVIOContext>?
    private let interrupted: () -> Bool

    /// Opens `url` (a `udp://` URL) with `options`; a failure names `input`, what was asked for.
    /// `interrupted` is polled while a read or the open waits: true ends the wait.
    init(url: String, input: String, options: [(String, String)], interrupted: @escaping () -> Bool) throws {
        self.interrupted = interrupted
        var dict: OpaquePointer?
        defer { av_dict_free(&dict) }
        for (k, v) in options { av_dict_set(&dict, k, v, 0) }
        var cb = AVIOInterruptCB()
        cb.callback = { opaque in
            guard let opaque else { return 0 }
            return Unmanaged<UDPSocket>.fromOpaque(opaque).takeUnretainedValue().interrupted() ? 1 : 0
        }
        cb.opaque = Unmanaged.passUnretained(self).toOpaque()
        var s: UnsafeMutablePointer<AVIOContext>?
        let r = avio_open2(&s, url, AVIO_FLAG_READ, &cb, &dict)
        guard r >= 0, let s else {
            throw MediaError.openFailed(input: input, reason: "cannot receive on \(url): \(ffmpegErrorString(r))")
        }
        context = s
    }

    deinit { avio_closep(&context) }

    /// Waits for one datagram and copies it into `buffer` (cut to its size): its length, or a
    /// negative libav error (`AVERROR_EXIT` when `interrupted` ended the wait). The socket stays
    /// ready for the next read after an error. (`avio_read_partial`)
    func receive(into buffer: UnsafeMutableRawBufferPointer) -> Int32 {
        guard let context else { return SCANOUT_AVERROR_EOF }
        let n = avio_read_partial(context, buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(buffer.count))
        if n < 0 {
            // libavformat marks the context ended after any error.
            context.pointee.eof_reached = 0
            context.pointee.error = 0
        }
        return n
    }
}
