import Foundation
import ScanoutService
import ScanoutTestSupport
import Testing

/// A config file with a JSON syntax error names the file, the line and the column; a long
/// channel list is summed up in the log.
@Suite struct ConfigSyntaxTests {
    static func loadError(_ text: String) throws -> ConfigFileError? {
        let scratch = try Scratch()
        let path = scratch.path("scanout.json")
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        do { _ = try ServiceConfig.load(file: path) } catch let e as ConfigFileError { return e }
        return nil
    }

    @Test func aSyntaxErrorNamesTheFileLineAndColumn() throws {
        let missingComma = try #require(try Self.loadError("{\n  \"port\": 8080,\n  \"host\": \"127.0.0.1\"\n  \"logLevel\": \"info\"\n}\n"))
        #expect(missingComma.line == 4 && missingComma.column == 3, "\(missingComma)")
        #expect(missingComma.description.hasSuffix("scanout.json:4:3: expected ',' or '}', found '\"'"), "\(missingComma)")

        let unclosed = try #require(try Self.loadError("{\"playlist\": [\"a.mp4\", \"b.mp4\"\n"))
        #expect(unclosed.line == 2 && unclosed.column == 1 && unclosed.message == "expected ',' or ']', found the end of the file", "\(unclosed)")

        // Columns count characters, not bytes.
        let quoted = try #require(try Self.loadError("{\"slate\": \"é\", 'port': 1}"))
        #expect(quoted.line == 1 && quoted.column == 16 && quoted.message == "expected '\"' (a key), found '''", "\(quoted)")

        let word = try #require(try Self.loadError("{\n\t\"autoplay\": True\n}"))
        #expect(word.line == 2 && word.column == 14 && word.message.hasPrefix("expected a value"), "\(word)")

        // A field's error keeps naming the field, with no position.
        let field = try #require(try Self.loadError(#"{"port": 70000}"#))
        #expect(field.line == nil && field.message == "port: must be within 0...65535 (got 70000)")
    }

    @Test func serveNamesTheLineOfTheConfigsSyntaxError() throws {
        let scratch = try Scratch()
        let path = scratch.path("scanout.json")
        try "{\n  \"output\": \"headless\"\n  \"port\": 0\n}\n".write(toFile: path, atomically: true, encoding: .utf8)
        let run = try Proc.run(try ScanoutBinary.path(), ["serve", "--config", path], timeout: 30)
        #expect(run.status != 0)
        #expect(run.stderrText.contains("\(path):3:3: expected ',' or '}'"), "\(run.stderrText)")
    }

    @Test func aLongChannelListIsSummedUpInTheLog() async throws {
        try await offPool {
            let scratch = try Scratch()
            let clip = try Fixtures.path("counter.mp4")
            let m3u = scratch.path("channels.m3u"), file = scratch.path("scanout.json")
            func list(_ ids: [String]) throws {
                try (["#EXTM3U"] + ids.flatMap { ["#EXTINF:-1 tvg-id=\"\($0)\",Channel \($0)", clip] }).joined(separator: "\n")
                    .write(toFile: m3u, atomically: true, encoding: .utf8)
            }
            try list(["one", "two"])
            try JSONSerialization.data(withJSONObject: ["channels": ["m3u": m3u], "output": "headless"]).write(to: URL(fileURLWithPath: file))
            let server = try ServeProcess(arguments: ["--config", file])
            defer { _ = server.terminate() }
            try list((0..<5000).map { "c\($0)" })
            kill(server.pid, SIGHUP)
            let deadline = Date().addingTimeInterval(20)
            // The summary's two lines are written one after the other: wait for both.
            while !(server.stderr.contains("channel list reloaded") && server.stderr.contains("channels added:")), Date() < deadline { usleep(50_000) }
            let log = server.stderr
            #expect(log.contains("channel list reloaded: 5000 channels, 5000 added, 2 removed"), "\(log)")
            #expect(log.contains("5000 channels added: c0 (Channel c0), c1 (Channel c1), c2 (Channel c2), c3 (Channel c3), c4 (Channel c4) and 4995 more"),
                    "\(log.suffix(2000))")
            #expect(log.split(separator: "\n").filter { $0.contains("announced:") }.count == 0)
            #expect(log.split(separator: "\n").count < 100, "\(log.split(separator: "\n").count) lines")
        }
    }
}
