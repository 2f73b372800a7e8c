import Testing
import Foundation
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutTestSupport

/// Bad inputs through the library API: each ends in the matching `MediaError` case, naming the input.
@Suite("Bad input (library)")
struct MediaErrorTests {
    @Test("a missing path throws notFound")
    func missingFile() throws {
        let scratch = try Scratch()
        let path = scratch.path("no-such-file.mp4")
        #expect(throws: MediaError.notFound(input: path)) { _ = try Demuxer(input: path) }
        #expect(MediaError.notFound(input: path).description == "\(path): no such file")
    }

    @Test("a directory throws isDirectory")
    func directory() throws {
        let scratch = try Scratch()
        #expect(throws: MediaError.isDirectory(input: scratch.url.path)) { _ = try Demuxer(input: scratch.url.path) }
    }

    @Test("an unknown codec id throws unsupportedCodec")
    func unknownCodec() throws {
        let path = try Fixtures.path("unknown_codec.mkv")
        let error = #expect(throws: MediaError.self) { _ = try FrameReader(input: path) }
        guard case .unsupportedCodec(let input, _)? = error else {
            Issue.record("expected unsupportedCodec, got \(String(describing: error))")
            return
        }
        #expect(input == path)
        #expect(error?.description.contains("unsupported codec") == true)
    }

    @Test("an MP4 without its index throws openFailed naming the missing moov atom")
    func truncatedNoIndex() throws {
        let path = try Fixtures.path("truncated_noindex.mp4")
        let error = #expect(throws: MediaError.self) { _ = try Demuxer(input: path) }
        guard case .openFailed(let input, let reason)? = error else {
            Issue.record("expected openFailed, got \(String(describing: error))")
            return
        }
        #expect(input == path)
        #expect(reason.contains("moov atom not found"), "reason: \(reason)")
    }

    @Test("random bytes throw openFailed: not a media file")
    func randomBytes() throws {
        let path = try Fixtures.path("random.bin")
        let error = #expect(throws: MediaError.self) { _ = try Demuxer(input: path) }
        guard case .openFailed(let input, let reason)? = error else {
            Issue.record("expected openFailed, got \(String(describing: error))")
            return
        }
        #expect(input == path)
        #expect(reason.contains("not a media file"), "reason: \(reason)")
    }

    @Test("audio only throws noVideoStream, unless audio-only inputs are accepted")
    func audioOnly() throws {
        let path = try Fixtures.path("audio_only.wav")
        #expect(throws: MediaError.noVideoStream(input: path)) { _ = try Demuxer(input: path) }
        var options = DemuxerOptions()
        options.acceptsAudioOnly = true
        #expect(try Demuxer(input: path, options: options).audioOnly)
    }

    /// Reads every frame; returns the count and the error the read ended with (thrown or reported).
    private func readAll(_ path: String) throws -> (frames: Int, error: MediaError?) {
        let reader = try FrameReader(input: path)
        let frame = VideoFrame()
        var n = 0
        do {
            while try reader.next(into: frame) { n += 1 }
        } catch let e as MediaError {
            return (n, e)
        }
        return (n, reader.damage())
    }

    @Test("a file cut short (index first) reports truncated after the frames it holds")
    func truncated() throws {
        let path = try Fixtures.path("truncated.mp4")
        let (frames, error) = try readAll(path)
        guard case .truncated(let input, _)? = error else {
            Issue.record("expected truncated, got \(String(describing: error))")
            return
        }
        #expect(input == path)
        #expect(frames > 0 && frames < 96, "\(frames) frames")
    }

    @Test("damaged coded pictures decode with concealment and report corruptBitstream")
    func corrupt() throws {
        let path = try Fixtures.path("corrupt.mp4")
        let (frames, error) = try readAll(path)
        guard case .corruptBitstream(let input, let errors, _)? = error else {
            Issue.record("expected corruptBitstream, got \(String(describing: error))")
            return
        }
        #expect(input == path)
        #expect(errors > 0)
        #expect(frames > 0)
    }

    @Test("a clean file reports no damage")
    func clean() throws {
        let (frames, error) = try readAll(try Fixtures.path("counter.mp4"))
        #expect(frames == 96)
        #expect(error == nil)
    }

    @Test("a frame number past the end throws frameOutOfRange")
    func frameOutOfRange() throws {
        let path = try Fixtures.path("counter.mp4")
        let seeker = try FrameSeeker(input: path)
        #expect(throws: MediaError.frameOutOfRange(input: path, requested: 500, frameCount: 96)) { _ = try seeker.frame(500) }
        #expect(throws: MediaError.frameOutOfRange(input: path, requested: 96, frameCount: 96)) { _ = try seeker.frame(96) }
        #expect(throws: MediaError.frameOutOfRange(input: path, requested: -1, frameCount: 96)) { _ = try seeker.frame(-1) }
        #expect(MediaError.frameOutOfRange(input: path, requested: 500, frameCount: 96).description.contains("frame 500 does not exist"))
    }

    @Test("a raw stream (linear path) throws frameOutOfRange past its last frame")
    func frameOutOfRangeLinear() throws {
        let path = try Fixtures.path("counter.h264")
        let seeker = try FrameSeeker(input: path)
        let error = #expect(throws: MediaError.self) { _ = try seeker.frame(500) }
        guard case .frameOutOfRange(let input, 500, let count)? = error else {
            Issue.record("expected frameOutOfRange for 500, got \(String(describing: error))")
            return
        }
        #expect(input == path)
        #expect(count == 60)
    }

    @Test("a server that accepts but never answers times out within the limit")
    func silentServer() throws {
        let listener = try SilentListener()
        let url = "http://127.0.0.1:\(listener.port)/clip.mp4"
        let start = ClockTime.now()
        #expect(throws: MediaError.timedOut(input: url, seconds: 1, during: "opening")) {
            _ = try Demuxer(input: url, options: DemuxerOptions(timeoutSeconds: 1))
        }
        let elapsed = (ClockTime.now() - start).secondsValue
        #expect(elapsed < 5, "took \(elapsed) s")
        #expect(elapsed > 0.5, "gave up after \(elapsed) s, before the timeout")
        withExtendedLifetime(listener) {}
    }

    @Test("a refused connection throws an error naming the URL")
    func refusedPort() throws {
        let port = try refusedLoopbackPort()
        let url = "http://127.0.0.1:\(port)/clip.mp4"
        let error = #expect(throws: MediaError.self) {
            _ = try Demuxer(input: url, options: DemuxerOptions(timeoutSeconds: 2))
        }
        #expect(error?.input == url)
        #expect(error?.description.hasPrefix(url) == true)
    }
}
