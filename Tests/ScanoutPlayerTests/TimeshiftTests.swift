import Foundation
import ScanoutDisplay
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ScanoutPlayer
import ScanoutTestSupport
import ScanoutTesting
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Every video packet of `path`, in the order the demuxer reads them.
private func packets(of path: String) throws -> (packets: [Packet], timeBase: Rational) {
    let demuxer = try Demuxer(input: path)
    var out: [Packet] = []
    let p = Packet()
    while try demuxer.read(into: p) { out.append(p.clone()) }
    return (out, demuxer.video.timeBase)
}

@Suite("Timeshift buffer") struct TimeshiftBufferTests {
    /// counter_live.ts: 900 frames at 30 fps, a keyframe every 30 frames (open GOPs, B-frames).
    let clip: String
    let all: [Packet]
    let timeBase: Rational
    init() throws {
        clip = try Fixtures.path("counter_live.ts")
        (all, timeBase) = try packets(of: clip)
    }

    var keyframePts: [Int64] { all.filter(\.isKeyframe).compactMap(\.pts) }

    @Test func evictsWholeGOPsFromTheStartByTime() throws {
        let buffer = TimeshiftBuffer(options: TimeshiftOptions(seconds: 2.5), timeBase: timeBase, input: clip)
        let cursor = TimeshiftCursor(buffer: buffer)
        for p in all { buffer.append(p) }
        let e = try #require(buffer.extent)
        let newest = all.compactMap(\.pts).max()!
        // The earliest keyframe that leaves at most 2.5 s up to the newest frame.
        let expectedStart = keyframePts.first { Double(newest - $0) * timeBase.doubleValue <= 2.5 }!
        #expect(e.start == Double(expectedStart) * timeBase.doubleValue)
        #expect(e.end == Double(newest) * timeBase.doubleValue)
        #expect(e.duration <= 2.5 && e.duration > 1.5)
        // What is kept starts at that keyframe: the first packet a wrapped cursor reads.
        #expect(cursor.isBehindBuffer)
        let p = Packet()
        #expect(try cursor.read(into: p))
        #expect(p.isKeyframe && p.pts == expectedStart)
        #expect(cursor.takeWrapped())
        #expect(e.gopsDropped == keyframePts.firstIndex(of: expectedStart)!)
    }

    @Test func evictsWholeGOPsByBytes() throws {
        let limit = 40_000
        let buffer = TimeshiftBuffer(options: TimeshiftOptions(seconds: 3600, maxBytes: limit), timeBase: timeBase, input: clip)
        for p in all { buffer.append(p) }
        let e = try #require(buffer.extent)
        #expect(e.bytes <= limit)
        // The kept packets are exactly the tail that starts at the first keyframe within the bound.
        var bytes = 0
        var startIndex = all.count
        for i in all.indices.reversed() {
            bytes += all[i].size
            if bytes > limit { break }
            if all[i].isKeyframe { startIndex = i }
        }
        #expect(e.packets == all.count - startIndex)
        #expect(e.bytes == all[startIndex...].reduce(0) { $0 + $1.size })
        #expect(e.start == Double(all[startIndex].pts!) * timeBase.doubleValue)
    }

    @Test func keepsTheNewestGOPWhateverItsSize() throws {
        let buffer = TimeshiftBuffer(options: TimeshiftOptions(seconds: 0.1, maxBytes: 1), timeBase: timeBase, input: clip)
        for p in all { buffer.append(p) }
        let e = try #require(buffer.extent)
        #expect(e.start == Double(keyframePts.last!) * timeBase.doubleValue)
        #expect(e.packets == all.count - all.lastIndex(where: \.isKeyframe)!)
    }

    /// Frames found through the buffer's index and a cursor are the frames an exact seek in the
    /// file finds: same timestamp, same frame number drawn in the picture.
    @Test(arguments: [false, true]) func frameExactLookupsMatchTheFileSeeker(onDisk: Bool) throws {
        let scratch = try Scratch()
        let buffer = TimeshiftBuffer(options: TimeshiftOptions(seconds: 12, directory: onDisk ? scratch.url.path : nil),
                                     timeBase: timeBase, input: clip)
        for p in all { buffer.append(p) }
        buffer.finish(nil)  // the input ended: the newest frames decode without waiting for more
        let index = buffer.index()
        let e = try #require(buffer.extent)
        #expect(index.timestamps.first.map { Double($0) * timeBase.doubleValue } == e.start)
        let reader = try FrameReader(input: clip)
        reader.source = TimeshiftCursor(buffer: buffer)
        let seeker = FrameSeeker(reader: reader, index: index)
        let fileSeeker = try FrameSeeker(input: clip)
        let offset = try #require(fileSeeker.index.timestamps.firstIndex(of: index.timestamps[0]))
        // The first frame kept, a leading picture of an open GOP, a keyframe, the frame before
        // one, backwards, and the newest frame.
        for n in [0, 31, 30, 59, 200, 10, index.frameCount - 1] {
            let f = try seeker.frame(n)
            let g = try fileSeeker.frame(offset + n)
            #expect(f.pts == index.timestamps[n])
            #expect(f.pts == g.pts)
            #expect(frameCode(f) == frameCode(g))
            #expect(frameCode(f) == offset + n)
        }
        #expect(buffer.extent?.spillFailures == 0)
        // On disk: the GOPs' files are unlinked from the start, nothing is left to clean up.
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.url.path).isEmpty)
    }

    /// On disk, the packets read back are the packets appended: same bytes, same timing.
    @Test func packetsReadBackFromDiskAreThePacketsAppended() throws {
        let scratch = try Scratch()
        let buffer = TimeshiftBuffer(options: TimeshiftOptions(seconds: 3600, maxBytes: 60_000, directory: scratch.url.path),
                                     timeBase: timeBase, input: clip)
        let cursor = TimeshiftCursor(buffer: buffer)
        for p in all { buffer.append(p) }
        buffer.finish(nil)
        let e = try #require(buffer.extent)
        #expect(e.bytes <= 60_000 && e.spillFailures == 0)
        let kept = all.suffix(e.packets)
        let p = Packet()
        for q in kept {
            #expect(try cursor.read(into: p))
            #expect(p.pts == q.pts && p.dts == q.dts && p.isKeyframe == q.isKeyframe && p.size == q.size)
            #expect(p.bytes == q.bytes)
        }
        #expect(try cursor.read(into: p) == false)
    }
}

/// A live channel played by an engine on the monotonic clock, shown on a display that records
/// the frame number drawn in each picture.
private final class LiveHarness {
    let sender: LoopbackSender
    let display = CodeRecordingDisplay(clock: ManualClock())
    var events: [PlayerEvent] = []
    var engine: PlayerEngine!

    init(timeshift: TimeshiftOptions = TimeshiftOptions()) throws {
        sender = try LoopbackSender()
        var c = PlayerConfiguration()
        c.timeshift = timeshift
        c.demuxer.timeoutSeconds = 5
        engine = PlayerEngine(display: display, clock: MonotonicClock(), configuration: c) { [unowned self] e in events.append(e) }
        try engine.load([PlaylistItem(source: sender.source)])
        try engine.play()
    }

    /// Runs the loop for `seconds` as `Player` does: frames while playing, a look every 200 ms while paused.
    func run(_ seconds: Double) {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            engine.tick()
            if !engine.isRunning { usleep(50_000) }
        }
    }

    var codes: [Int] { display.shown.map(\.code) }
    var lastCode: Int { display.shown.last?.code ?? -1 }
    var status: TimeshiftStatus? { engine.timeshiftStatus }
}

@Suite("Timeshift on a live UDP input", .serialized, .timeLimit(.minutes(1)))
struct TimeshiftPlaybackTests {
    @Test func pauseKeepsBufferingAndPlayGoesOnFromTheFrameShown() async throws { try await offPool { [self] in try self.pauseKeepsBufferingAndPlayGoesOnFromTheFrameShownBlocking() } }

    func pauseKeepsBufferingAndPlayGoesOnFromTheFrameShownBlocking() throws {
        let h = try LiveHarness()
        h.run(1.5)
        try h.engine.pause()
        let shownBefore = h.display.shown.count
        let lastBefore = h.lastCode
        let endBefore = try #require(h.status).end
        h.run(2)
        // Paused: nothing shown, the buffer went on filling.
        #expect(h.display.shown.count == shownBefore)
        let paused = try #require(h.status)
        #expect(paused.end - endBefore > 1.5)
        #expect(paused.behindLive > 1.5)
        try h.engine.play()
        h.run(1)
        let after = Array(h.codes[shownBefore...])
        #expect(after.first == lastBefore + 1)
        // No frame lost: every frame from the first to the last is shown or counted as dropped.
        let codes = h.codes
        #expect(zip(codes, codes.dropFirst()).allSatisfy { $0 < $1 })
        let dropped = h.engine.session.currentStats().framesDropped
        #expect(codes.count + dropped == codes.last! - codes.first! + 1)
        // Still about two seconds behind the live edge.
        #expect(try #require(h.status).behindLive > 1.5)
        #expect(h.engine.snapshot().live)
    }

    @Test func seekRelativeShowsTheExactFrameAndPlayLiveReturnsToTheEdge() async throws { try await offPool { [self] in try self.seekRelativeShowsTheExactFrameAndPlayLiveReturnsToTheEdgeBlocking() } }

    func seekRelativeShowsTheExactFrameAndPlayLiveReturnsToTheEdgeBlocking() throws {
        let h = try LiveHarness()
        h.run(3)
        try h.engine.pause()
        let code = h.lastCode
        try h.engine.seekTimeshift(relative: -1)
        #expect(h.lastCode == code - 30)
        try h.engine.seekTimeshift(relative: -0.5)
        #expect(h.lastCode == code - 45)
        try h.engine.seekTimeshift(relative: 1.2)
        #expect(h.lastCode == code - 9)
        #expect(h.engine.state == .paused)
        let s = try #require(h.status)
        #expect(throws: PlayerError.self) { try h.engine.seekTimeshift(to: s.start - 1) }
        // The buffer's first frame, exactly.
        try h.engine.seekTimeshift(to: s.start)
        #expect(h.display.shown.last?.pts == Int64((s.start * 90000).rounded()))

        try h.engine.playLive()
        #expect(h.engine.state == .playing)
        #expect(h.events.contains { if case .liveEdge = $0 { return true } else { return false } })
        // The newest frame comes out of the decoder once the frames after it in decoding order
        // came (three B-frames here), and the GOP up to it takes a while to decode: the edge moved
        // on by that much meanwhile, far less than the 3 s it was behind.
        let live = try #require(h.status)
        #expect(live.behindLive < 1)
        let atEdge = h.display.shown.count
        h.run(1)
        let next = Array(h.codes[(atEdge - 1)...])
        #expect(zip(next, next.dropFirst()).allSatisfy { $0 < $1 })
        #expect(try #require(h.status).behindLive < 0.5)
    }

    @Test func playingFasterThanLiveCatchesUpWithTheEdge() async throws { try await offPool { [self] in try self.playingFasterThanLiveCatchesUpWithTheEdgeBlocking() } }

    func playingFasterThanLiveCatchesUpWithTheEdgeBlocking() throws {
        let h = try LiveHarness()
        h.run(1)
        try h.engine.pause()
        h.run(1)
        try h.engine.play()
        try h.engine.setRate(2)
        let isLiveEdge = { (e: PlayerEvent) -> Bool in if case .liveEdge = e { return true } else { return false } }
        h.run(0.5)
        #expect(!h.events.contains(where: isLiveEdge))
        #expect(try #require(h.status).behindLive > 0.5)
        // About a second behind, gaining a second each second at 2x.
        let end = Date().addingTimeInterval(4)
        while !h.events.contains(where: isLiveEdge), Date() < end { h.engine.tick() }
        #expect(h.events.contains(where: isLiveEdge))
        #expect(try #require(h.status).behindLive < 0.5)
        let codes = h.codes
        #expect(zip(codes, codes.dropFirst()).allSatisfy { $0 < $1 })
    }

    @Test(arguments: [false, true]) func aPauseLongerThanTheBufferWrapsToItsStart(onDisk: Bool) async throws { try await offPool { [self] in try self.aPauseLongerThanTheBufferWrapsToItsStartBlocking(onDisk: onDisk) } }

    func aPauseLongerThanTheBufferWrapsToItsStartBlocking(onDisk: Bool) throws {
        let scratch = try Scratch()
        let h = try LiveHarness(timeshift: TimeshiftOptions(seconds: 1.5, directory: onDisk ? scratch.url.path : nil))
        h.run(1)
        try h.engine.pause()
        let pausedAt = try #require(h.status).position
        let shown = h.display.shown.count
        var wrapped: (from: Double, to: Double)?
        let end = Date().addingTimeInterval(5)
        while wrapped == nil, Date() < end {
            h.engine.tick()
            for case let .timeshiftWrapped(from, to) in h.events { wrapped = (from, to) }
            if wrapped == nil { usleep(50_000) }
        }
        let w = try #require(wrapped)
        #expect(abs(w.from - pausedAt) < 1e-6)
        // Moved to the buffer's start, still paused, that frame on screen (the one frame shown).
        #expect(h.engine.state == .paused)
        let s = try #require(h.status)
        #expect(abs(s.position - w.to) < 1e-6)
        #expect(h.display.shown.count == shown + 1)
        #expect(h.display.shown.last?.pts == Int64((w.to * 90000).rounded()))
        #expect(s.liveDuration <= 1.5 + 1e-6)
    }
}

extension Packet {
    /// The packet's data, for comparing.
    var bytes: [UInt8] { size == 0 ? [] : Array(UnsafeBufferPointer(start: pointer.pointee.data, count: size)) }
}
