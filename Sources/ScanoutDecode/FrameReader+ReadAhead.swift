import ScanoutCore
import ScanoutDemux

extension FrameReader {
    /// Reads a network input with an end ahead of playback (`PacketReadAhead.wants`), from the
    /// demuxer's position on, when `options` allow it. Returns whether it does now.
    @discardableResult
    public func readAhead(_ options: ReadAheadOptions) -> Bool {
        if source is PacketReadAhead { return true }
        guard options.enabled, source === demuxer, PacketReadAhead.wants(demuxer) else { return false }
        source = PacketReadAhead(demuxer: demuxer, options: options)
        return true
    }

    /// The read-ahead this reader takes its packets from, if any.
    public var readAheadSource: PacketReadAhead? { source as? PacketReadAhead }

    /// The adaptive HLS state of what is read: the read-ahead's copy while one reads the
    /// demuxer, else the demuxer's own. Nil for other inputs.
    public var adaptiveReading: AdaptiveReading? {
        if let ahead = readAheadSource { return ahead.adaptive }
        return demuxer.adaptiveReading
    }
}
