import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio

/// Where an adaptive HLS item stands: its variants, the one played, the last measured segment
/// throughput, the changes and the segments abandoned so far.
public struct AdaptiveStatus: Sendable, Equatable {
    public var variants: [HLSVariant]
    public var variant: HLSVariant
    /// Bits a second; nil before the first segment was measured.
    public var throughput: Double?
    /// Changes of variant since the item opened (the start not counted).
    public var switches: Int
    /// Segments abandoned mid-download for the same time range of a lower variant since the item
    /// opened (each one of the `switches`).
    public var abandonedSegments: Int

    /// Nil when `reader` is not reading an HLS stream. (Through the reader: while a read-ahead
    /// reads the demuxer on its own thread, its copy is the one to ask.)
    init?(_ reader: FrameReader) {
        guard let a = reader.adaptiveReading else { return nil }
        variants = a.variants
        variant = a.current
        throughput = a.throughput
        switches = a.switches.count - 1
        abandonedSegments = a.switches.filter(\.abandonedSegment).count
    }
}

/// The variant choices of the reader being played that were not reported yet.
struct VariantTally {
    private var reader: ObjectIdentifier?
    private var reported = 0

    mutating func update(reader r: FrameReader) -> [VariantSwitch] {
        if reader != ObjectIdentifier(r) {
            reader = ObjectIdentifier(r)
            reported = 0
        }
        let all = r.adaptiveReading?.switches ?? []
        guard all.count > reported else { return [] }
        defer { reported = all.count }
        return Array(all[reported...])
    }
}
