import ArgumentParser
import ScanoutMedia
import ScanoutRender

struct Render: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write exact frames as PNG, by number or by time.",
        discussion: """
        Frame N is the frame ffmpeg's select=eq(n\\,N) picks (counting from 0 in presentation order). \
        --at T picks the frame on screen T seconds after the first frame. Frames are found by seeking \
        to the keyframe before them and decoding forward, and checked by timestamp. Rotation \
        metadata is applied; the sample aspect ratio is stored in the PNG (pHYs) as ffmpeg does.
        """
    )

    @Argument(help: "File path or URL.") var input: String
    @Option(help: "Frame numbers, comma-separated (0,150,299).") var frames: String?
    @Option(help: "Times in seconds from the first frame, comma-separated (7.3).") var at: String?
    @Option(help: "Directory for the PNGs (created if missing).") var out: String = "."
    @Option(help: "Renderer: cpu (bit-exact reference).") var renderer: String = "cpu"
    @Flag(help: "16 bits per channel (rgb48) instead of 8.") var deep = false
    @Flag(help: "Keep the stored orientation (ignore rotation metadata).") var noAutorotate = false
    @OptionGroup var options: InputOptions

    func validate() throws {
        if frames == nil && at == nil { throw ValidationError("give --frames or --at") }
        if renderer != "cpu" { throw ValidationError("--renderer: only 'cpu' exists in this build (the GL renderer is not built yet)") }
    }

    func run() throws {
        options.installLog()
        try runReporting {
            let numbers = try parseList(frames, as: Int.self, option: "--frames")
            let times = try parseList(at, as: Double.self, option: "--at")
            let seeker = try FrameSeeker(input: input, demuxerOptions: options.demuxer, decoderOptions: options.decoder)
            var requests: [(number: Int, name: String)] = numbers.map { ($0, "frame-\(pad6($0)).png") }
            for t in times {
                let n = try seeker.frameNumber(at: t)
                requests.append((n, "at-\(t)s-frame-\(pad6(n)).png"))
            }
            try makeDirectory(out)
            let renderer = CPURenderer()
            let png = PNGEncoder()
            let orientation = noAutorotate ? Orientation.identity : seeker.reader.video.orientation
            // In stream order, so that frames of one GOP are decoded once.
            for r in requests.sorted(by: { $0.number < $1.number }) {
                let frame = try seeker.frame(r.number)
                let image = try renderer.render(frame, orientation: orientation, layout: deep ? .rgb48be : .rgb24)
                let path = out.hasSuffix("/") ? out + r.name : out + "/" + r.name
                try png.write(image, to: path)
                print("\(path)  frame \(r.number)  pts \(frame.pts.map(String.init) ?? "none")  \(image.width)x\(image.height)")
            }
            if let damage = seeker.reader.damage() { throw damage }
        }
    }
}

func pad6(_ n: Int) -> String {
    let s = String(n)
    return s.count >= 6 ? s : String(repeating: "0", count: 6 - s.count) + s
}

func parseList<T: LosslessStringConvertible>(_ text: String?, as: T.Type, option: String) throws -> [T] {
    guard let text else { return [] }
    return try text.split(separator: ",").map {
        guard let v = T(String($0).trimmingSpaces) else { throw ValidationError("\(option): '\($0)' is not a number") }
        return v
    }
}

extension String {
    var trimmingSpaces: String {
        String(self.drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
    }
}
