import Foundation
@testable import ScanoutService
import ScanoutTestSupport
import Testing

/// The state directory's `position.json` and `channel.json`: files written by earlier versions
/// are read, and the files written now are the same bytes as theirs.
@Suite struct StateFileTests {
    /// A source with what JSON escapes: a slash, quotes, a backslash, a control character,
    /// non-ASCII letters.
    static let source = "/media/fête \"été\"\\\t1.mp4"

    @Test("a position.json of the format written so far is read")
    func positionFileOfTodaysFormatIsRead() throws {
        let scratch = try Scratch()
        let text = #"{"index":2,"playlist":"9f1c2e8a7b6d5c4e","source":"\/media\/clip 2.mp4","version":1}"#
        try Data(text.utf8).write(to: URL(fileURLWithPath: scratch.path("position.json")))
        let store = ResumeStore(directory: scratch.url.path, onFailure: { _ in })
        #expect(try store.read() == ResumePoint(index: 2, source: "/media/clip 2.mp4", playlist: "9f1c2e8a7b6d5c4e"))
    }

    @Test("position.json is written as it always was: sorted keys, the same escapes")
    func positionFileBytesAreUnchanged() throws {
        let scratch = try Scratch()
        let point = ResumePoint(index: 7, source: Self.source, playlist: "0123456789abcdef")
        let store = ResumeStore(directory: scratch.url.path, onFailure: { _ in })
        store.record(point)
        store.flush()
        let written = try Data(contentsOf: URL(fileURLWithPath: store.file))
        let before: [String: Any] = ["index": 7, "source": Self.source, "playlist": "0123456789abcdef", "version": 1]
        #expect(written == (try JSONSerialization.data(withJSONObject: before, options: [.sortedKeys])),
                "\(String(decoding: written, as: UTF8.self))")
        #expect(try ResumePoint(json: written) == point)
    }

    @Test("a position.json that cannot be used says what is wrong", arguments: [
        ("not json", "not a JSON object"),
        ("[1, 2]", "not a JSON object"),
        (#"{"index": -1, "source": "a", "playlist": "b"}"#, "index is missing or negative"),
        (#"{"index": "1", "source": "a", "playlist": "b"}"#, "index is missing or negative"),
        (#"{"index": 1.5, "source": "a", "playlist": "b"}"#, "index is missing or negative"),
        (#"{"source": "a", "playlist": "b"}"#, "index is missing or negative"),
        (#"{"index": 1, "playlist": "b"}"#, "source or playlist is missing"),
        (#"{"index": 1, "source": "a", "playlist": 3}"#, "source or playlist is missing"),
    ])
    func corruptPositionFiles(text: String, why: String) {
        #expect(throws: ResumeStateError.corrupt(why)) { _ = try ResumePoint(json: Data(text.utf8)) }
    }

    @Test("a position.json with fields it does not know (a later version's) is read")
    func unknownFieldsAreLeftAlone() throws {
        let point = try ResumePoint(json: Data(#"{"index": 0, "source": "a", "playlist": "b", "version": 2, "rate": 1.5}"#.utf8))
        #expect(point == ResumePoint(index: 0, source: "a", playlist: "b"))
    }

    @Test("channel.json: today's format is read, written with the same bytes, and a bad one named")
    func channelFile() throws {
        let scratch = try Scratch()
        let file = TunedChannelFile(directory: scratch.url.path)
        try Data(#"{"id":"news\/1","version":1}"#.utf8).write(to: URL(fileURLWithPath: file.file))
        #expect(try file.read() == "news/1")
        #expect(try TunedChannelFile.fileData(Self.source)
                == (try JSONSerialization.data(withJSONObject: ["id": Self.source, "version": 1] as [String: Any], options: [.sortedKeys])))
        for (text, why) in [("{}", "id is missing"), (#"{"id": ""}"#, "id is missing"), (#"{"id": 4}"#, "id is missing"), ("[]", "not a JSON object")] {
            try Data(text.utf8).write(to: URL(fileURLWithPath: file.file))
            #expect(throws: ResumeStateError.corrupt(why), "\(text)") { _ = try file.read() }
        }
    }
}
