import ScanoutDecode

extension Fixtures {
    /// The first `count` frames of fixture `name`, decoded in software (fewer when it has fewer).
    public static func frames(_ name: String, count: Int) throws -> [VideoFrame] {
        let reader = try FrameReader(input: try path(name))
        var out: [VideoFrame] = []
        for _ in 0..<count {
            let f = VideoFrame()
            guard try reader.next(into: f) else { break }
            out.append(f)
        }
        return out
    }
}
