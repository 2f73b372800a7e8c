import ScanoutCore

/// One variant of an HLS master playlist kept for a whole read, with no change of variant: what
/// the frame-exact commands (`framemd5`, `decode`, `render`) read, so that their output depends
/// on the playlist and never on the network's speed. Set in `DemuxerOptions.variantPin`; nil
/// there reads the master adaptively (`AdaptiveHLS`).
public struct VariantPin: Sendable, Equatable {
    /// The variant's position in the master playlist, from 0; nil: the tallest variant the caps
    /// (`AdaptiveOptions.maxHeight`, `maxBitrate`) allow when a cap is set, else the first, which
    /// is the one `ffmpeg -i MASTER -map 0:v:0` reads.
    public var index: Int?

    public init(index: Int? = nil) {
        self.index = index
    }

    /// The variant kept of `variants` (the master's, as `Demuxer.hlsVariants` lists them), or nil
    /// for an input with none (not HLS) when no index was asked for. Throws, naming the choices,
    /// when the index or the caps match no variant, or an index is asked of an input with none.
    public func choose(from variants: [HLSVariant], caps: AdaptiveOptions, input: String) throws -> HLSVariant? {
        let ordered = variants.sorted { $0.id < $1.id }
        if let index {
            guard !ordered.isEmpty else {
                throw MediaError.openFailed(input: input, reason: "variant \(index) asked for, but the input is not an HLS playlist with variants")
            }
            guard let v = ordered.first(where: { $0.id == index }) else {
                throw MediaError.openFailed(input: input, reason: "no variant \(index): the playlist lists \(Self.list(ordered))")
            }
            return v
        }
        guard !ordered.isEmpty else { return nil }
        guard caps.maxHeight != nil || caps.maxBitrate != nil else { return ordered[0] }
        let allowed = ordered.filter { v in
            (caps.maxHeight.map { v.height <= $0 } ?? true) && (caps.maxBitrate.map { v.bitrate <= $0 } ?? true)
        }
        // The tallest allowed, the costliest of equally tall ones, the first of equal ones.
        guard let best = allowed.max(by: { ($0.height, $0.bitrate, $1.id) < ($1.height, $1.bitrate, $0.id) }) else {
            throw MediaError.openFailed(input: input, reason: "no variant within --max-height/--max-bitrate: the playlist lists \(Self.list(ordered))")
        }
        return best
    }

    /// "0: 256x192 165 kb/s, 1: ..." for an error message.
    private static func list(_ variants: [HLSVariant]) -> String {
        variants.map { "\($0.id): \($0.width)x\($0.height)" + ($0.bitrate > 0 ? " \(kilobits($0.bitrate)) kb/s" : "") }.joined(separator: ", ")
    }

    static func kilobits(_ bitrate: Int) -> Int { Int((Double(bitrate) / 1000).rounded()) }
}

/// The variant a pinned read keeps (`VariantPin`) and how many the master playlist lists.
public struct KeptVariant: Sendable, Equatable, CustomStringConvertible {
    public var variant: HLSVariant
    public var count: Int

    /// "variant 0 of 3: 256x192, 165 kb/s" (no rate for a variant that states none).
    public var description: String {
        let rate = variant.bitrate > 0 ? ", \(VariantPin.kilobits(variant.bitrate)) kb/s" : ""
        return "variant \(variant.id) of \(count): \(variant.width)x\(variant.height)\(rate)"
    }
}
