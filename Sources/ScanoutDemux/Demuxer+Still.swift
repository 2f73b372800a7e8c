import CFFmpeg

extension Demuxer {
    /// Whether the input is one still picture (PNG, JPEG, WebP, BMP, TIFF and the other formats
    /// libavformat reads with its image demuxers): a single packet that is the whole picture.
    public var isStillImage: Bool {
        guard !audioOnly, !isLive else { return false }
        let name = formatName
        if name.hasSuffix("_pipe") { return true }
        guard name == "image2" else { return false }
        return (video.declaredFrameCount ?? 1) <= 1
    }
}
