import Testing
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutTestSupport

/// `FrameSeeker.frameNumber(at:)`: which frame is on screen a given time after the first frame.
@Suite("Exact frame by time")
struct FrameTimeTests {
    @Test("counter.mp4: constant 30 fps, frame n starts at n/30 s",
          arguments: [(0.0, 0), (0.5, 15), (1.0, 30), (1.0333, 30), (1.034, 31), (3.19, 95)])
    func counterByTime(seconds: Double, expected: Int) throws {
        let seeker = try FrameSeeker(input: try Fixtures.path("counter.mp4"))
        #expect(seeker.frameCount == 96)
        #expect(try seeker.frameNumber(at: seconds) == expected, "at \(seconds) s")
    }

    @Test("counter.mp4: a time past the end throws timeOutOfRange", arguments: [3.25, 10.0])
    func counterPastTheEnd(seconds: Double) throws {
        let path = try Fixtures.path("counter.mp4")
        let seeker = try FrameSeeker(input: path)
        let error = #expect(throws: MediaError.self) { try seeker.frameNumber(at: seconds) }
        guard case .timeOutOfRange(let input, let s, let duration)? = error else {
            Issue.record("expected timeOutOfRange, got \(String(describing: error))")
            return
        }
        #expect(input == path)
        #expect(s == seconds)
        #expect(abs(duration - 3.2) < 0.001, "duration \(duration)")
    }

    @Test("counter.mp4: a negative time throws timeOutOfRange")
    func negativeTime() throws {
        let seeker = try FrameSeeker(input: try Fixtures.path("counter.mp4"))
        let error = #expect(throws: MediaError.self) { try seeker.frameNumber(at: -0.5) }
        guard case .timeOutOfRange? = error else {
            Issue.record("expected timeOutOfRange, got \(String(describing: error))")
            return
        }
    }

    @Test("counter_vfr.mkv: a 0.5 s gap after frame 40 keeps frame 39 on screen",
          arguments: [(1.0, 30), (1.3, 39), (1.7, 39), (1.8, 39), (1.84, 40), (1.87, 41)])
    func variableFrameRate(seconds: Double, expected: Int) throws {
        let seeker = try FrameSeeker(input: try Fixtures.path("counter_vfr.mkv"))
        #expect(seeker.frameCount == 80)
        #expect(try seeker.frameNumber(at: seconds) == expected, "at \(seconds) s")
    }

    @Test("counter_open.ts: times count from the first frame, not from the container's start time",
          arguments: [(0.0, 0), (1.0, 30), (2.0, 60)])
    func nonZeroStart(seconds: Double, expected: Int) throws {
        let path = try Fixtures.path("counter_open.ts")
        let seeker = try FrameSeeker(input: path)
        // The stream does not start at 0: this is what the test is about.
        let start = try #require(seeker.reader.video.startTime)
        #expect(start > 0)
        #expect(try seeker.frameNumber(at: seconds) == expected, "at \(seconds) s")
    }
}
