import CFFmpeg
import ScanoutDemux

extension VideoFrame {
    /// The mastering display the decoder found with this frame (an HEVC or AV1 SEI/OBU: the
    /// stream's own, where the container states none); nil when there is none.
    public var masteringDisplay: MasteringDisplay? {
        guard let sd = av_frame_get_side_data(pointer, AV_FRAME_DATA_MASTERING_DISPLAY_METADATA),
              Int(sd.pointee.size) >= MemoryLayout<AVMasteringDisplayMetadata>.size else { return nil }
        let m = UnsafeRawPointer(sd.pointee.data!).loadUnaligned(as: AVMasteringDisplayMetadata.self)
        guard m.has_primaries != 0 || m.has_luminance != 0 else { return nil }
        return MasteringDisplay(m)
    }

    /// The content light levels the decoder found with this frame; nil when there are none.
    public var contentLightLevel: ContentLightLevel? {
        guard let sd = av_frame_get_side_data(pointer, AV_FRAME_DATA_CONTENT_LIGHT_LEVEL),
              Int(sd.pointee.size) >= MemoryLayout<AVContentLightMetadata>.size else { return nil }
        return ContentLightLevel(UnsafeRawPointer(sd.pointee.data!).loadUnaligned(as: AVContentLightMetadata.self))
    }
}
