import Testing
import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutRender
import ScanoutTestSupport

/// One PNG chunk.
struct PNGChunk {
    var type: String
    var data: [UInt8]
}

/// Splits PNG file bytes into chunks, checking the signature, each chunk's length and CRC, and
/// that the file ends with IEND.
func parsePNG(_ bytes: [UInt8]) throws -> [PNGChunk] {
    guard bytes.starts(with: pngSignature) else { throw SupportError("no PNG signature") }
    var chunks: [PNGChunk] = []
    var i = 8
    func u32(_ at: Int) -> UInt32 { bytes[at..<at + 4].reduce(0) { $0 << 8 | UInt32($1) } }
    while i < bytes.count {
        guard i + 12 <= bytes.count else { throw SupportError("chunk header past the end at \(i)") }
        let length = Int(u32(i))
        guard i + 12 + length <= bytes.count else { throw SupportError("chunk at \(i) runs past the end") }
        let type = String(decoding: bytes[i + 4..<i + 8], as: UTF8.self)
        let data = Array(bytes[i + 8..<i + 8 + length])
        let crc = u32(i + 8 + length)
        guard crc == crc32(Array(bytes[i + 4..<i + 8 + length])) else { throw SupportError("bad CRC in \(type)") }
        chunks.append(PNGChunk(type: type, data: data))
        i += 12 + length
        if type == "IEND" { break }
    }
    guard i == bytes.count, chunks.last?.type == "IEND" else { throw SupportError("no IEND at the end") }
    return chunks
}

let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

func crc32(_ bytes: [UInt8]) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    for b in bytes {
        crc ^= UInt32(b)
        for _ in 0..<8 { crc = (crc >> 1) ^ (crc & 1 != 0 ? 0xEDB8_8320 : 0) }
    }
    return ~crc
}

func be32(_ d: [UInt8], _ at: Int) -> UInt32 { d[at..<at + 4].reduce(0) { $0 << 8 | UInt32($1) } }

@Suite("PNG encoder")
struct PNGEncoderTests {
    /// Decodes PNG bytes with the ffmpeg tool to packed `pixFmt`.
    func ffmpegDecode(_ png: [UInt8], pixFmt: String) throws -> [UInt8] {
        let scratch = try Scratch()
        let file = scratch.path("image.png")
        try Data(png).write(to: URL(fileURLWithPath: file))
        return [UInt8](try Proc.ffmpeg(["-i", file, "-f", "rawvideo", "-pix_fmt", pixFmt, "-"]))
    }

    @Test("an 8-bit image round-trips through ffmpeg's PNG decoder")
    func roundTrip() throws {
        let (frame, _) = try decodeFrame(5, of: try Fixtures.path("counter.mp4"))
        let image = try CPURenderer().render(frame)
        let png = try PNGEncoder().encode(image)
        #expect(png.starts(with: pngSignature))
        let chunks = try parsePNG(png)
        let ihdr = try #require(chunks.first)
        #expect(ihdr.type == "IHDR")
        #expect(be32(ihdr.data, 0) == 320 && be32(ihdr.data, 4) == 240)
        #expect(ihdr.data[8] == 8, "bit depth")
        #expect(ihdr.data[9] == 2, "colour type RGB")
        #expect(chunks.contains { $0.type == "IDAT" })
        let decoded = try ffmpegDecode(png, pixFmt: "rgb24")
        #expect(decoded == image.bytes, "\(firstDifference(decoded, image.bytes))")
    }

    @Test("a 16-bit image round-trips through ffmpeg's PNG decoder")
    func deepRoundTrip() throws {
        let (frame, _) = try decodeFrame(7, of: try Fixtures.path("hevc10.mkv"))
        let image = try CPURenderer().render(frame, layout: .rgb48be)
        let png = try PNGEncoder().encode(image)
        let chunks = try parsePNG(png)
        #expect(chunks.first?.type == "IHDR")
        #expect(chunks.first?.data[8] == 16, "bit depth")
        let decoded = try ffmpegDecode(png, pixFmt: "rgb48be")
        #expect(decoded == image.bytes, "\(firstDifference(decoded, image.bytes))")
        #expect(frameCode(image) == 7)
    }

    @Test("anamorphic.mp4's PNG carries pHYs with the 4:3 sample aspect ratio")
    func aspectRatio() throws {
        let (frame, video) = try decodeFrame(0, of: try Fixtures.path("anamorphic.mp4"))
        let image = try CPURenderer().render(frame, orientation: video.orientation)
        let chunks = try parsePNG(try PNGEncoder().encode(image))
        let phys = try #require(chunks.first { $0.type == "pHYs" }, "no pHYs chunk")
        try #require(phys.data.count == 9)
        let x = be32(phys.data, 0), y = be32(phys.data, 4)
        #expect(x > 0 && y > 0)
        #expect(UInt64(x) * 3 == UInt64(y) * 4, "pHYs \(x):\(y)")
        #expect(phys.data[8] == 0, "unit: unknown (a ratio only)")
    }

    @Test("one encoder handles images of different sizes in turn")
    func reuseAcrossSizes() throws {
        let encoder = PNGEncoder()
        let (rotatedFrame, rotatedVideo) = try decodeFrame(2, of: try Fixtures.path("rotated.mp4"))
        let (counterFrame, _) = try decodeFrame(2, of: try Fixtures.path("counter.mp4"))
        let renderer = CPURenderer()
        let tall = try renderer.render(rotatedFrame, orientation: rotatedVideo.orientation)
        let wide = try renderer.render(counterFrame)
        for image in [tall, wide, tall] {
            let png = try encoder.encode(image)
            let ihdr = try #require(try parsePNG(png).first)
            #expect(Int(be32(ihdr.data, 0)) == image.width && Int(be32(ihdr.data, 4)) == image.height)
            #expect(try ffmpegDecode(png, pixFmt: "rgb24") == image.bytes)
        }
    }

    @Test("write(_:to:) writes the encoded bytes")
    func writeToFile() throws {
        let scratch = try Scratch()
        let image = RGBImage(width: 2, height: 2, bytes: [255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255])
        let encoder = PNGEncoder()
        let path = scratch.path("tiny.png")
        try encoder.write(image, to: path)
        let written = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(written == (try encoder.encode(image)))
        #expect(try ffmpegDecode(written, pixFmt: "rgb24") == image.bytes)
    }

    @Test("writing into a missing directory throws outputFailed naming the path")
    func writeFails() throws {
        let scratch = try Scratch()
        let path = scratch.path("missing/dir/tiny.png")
        let image = RGBImage(width: 1, height: 1, bytes: [1, 2, 3])
        let error = #expect(throws: MediaError.self) { try PNGEncoder().write(image, to: path) }
        guard case .outputFailed(let p, _)? = error else {
            Issue.record("expected outputFailed, got \(String(describing: error))")
            return
        }
        #expect(p == path)
    }
}
