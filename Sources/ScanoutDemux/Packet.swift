import CFFmpeg
import ScanoutCore

/// One compressed packet; owns an `AVPacket` (freed once, in `deinit`).
///
/// Reused: `Demuxer.read(into:)` unreferences and refills it, so the read loop allocates nothing
/// per packet beyond FFmpeg's own buffer references. Not thread-safe; one owner at a time.
public final class Packet {
    package let pointer: UnsafeMutablePointer<AVPacket>

    public init() {
        guard let p = av_packet_alloc() else { fatalError("av_packet_alloc: out of memory") }
        pointer = p
    }

    deinit {
        var p: UnsafeMutablePointer<AVPacket>? = pointer
        av_packet_free(&p)
    }

    /// A new packet that references the same data (`av_packet_ref`); used to keep packets for replay.
    public func clone() -> Packet {
        let copy = Packet()
        av_packet_ref(copy.pointer, pointer)
        return copy
    }

    public func unref() { av_packet_unref(pointer) }

    /// Presentation timestamp in the stream's time base, nil when unknown.
    public var pts: Int64? { pointer.pointee.pts == SCANOUT_AV_NOPTS_VALUE ? nil : pointer.pointee.pts }
    /// Decoding timestamp in the stream's time base, nil when unknown.
    public var dts: Int64? { pointer.pointee.dts == SCANOUT_AV_NOPTS_VALUE ? nil : pointer.pointee.dts }
    /// Duration in the stream's time base (0 when unknown).
    public var duration: Int64 { pointer.pointee.duration }
    public var size: Int { Int(pointer.pointee.size) }
    /// Byte position in the input, nil when unknown.
    public var position: Int64? { pointer.pointee.pos < 0 ? nil : pointer.pointee.pos }
    public var streamIndex: Int { Int(pointer.pointee.stream_index) }
    public var isKeyframe: Bool { pointer.pointee.flags & AV_PKT_FLAG_KEY != 0 }
    /// Set by the demuxer on a short read: the packet is incomplete.
    public var isCorrupt: Bool { pointer.pointee.flags & AV_PKT_FLAG_CORRUPT != 0 }
    /// Set by the demuxer for packets that must be decoded but not shown (MP4 edit lists).
    public var isDiscarded: Bool { pointer.pointee.flags & AV_PKT_FLAG_DISCARD != 0 }
}
