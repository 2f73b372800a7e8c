import Foundation
import ScanoutTestSupport
import Testing

/// The generated references stay what their generators write from their sources (the built
/// `scanout`'s argument parser, docs/openapi.json), and the guides' links lead somewhere.
@Suite("generated documentation")
struct DocsTests {
    static let root = Fixtures.packageRoot

    /// Runs `tools/SCRIPT ARGS` into a scratch directory and returns what it wrote to `name`.
    static func generate(_ script: String, _ args: [String], name: String, in scratch: Scratch) throws -> String {
        let tool = root.appendingPathComponent("tools/\(script)").path
        let r = try Proc.run("python3", [tool] + args, timeout: 120)
        guard r.status == 0 else {
            throw SupportError("tools/\(script) failed (\(r.status)): \(r.stderrText)")
        }
        return try String(contentsOf: scratch.url.appendingPathComponent(name), encoding: .utf8)
    }

    /// The first line where `committed` and `generated` differ, for the failure message.
    static func firstDifference(_ committed: String, _ generated: String) -> String {
        let a = committed.components(separatedBy: "\n"), b = generated.components(separatedBy: "\n")
        for i in 0..<max(a.count, b.count) {
            let x = i < a.count ? a[i] : "(end of file)", y = i < b.count ? b[i] : "(end of file)"
            if x != y { return "line \(i + 1): committed \"\(x)\", generated \"\(y)\"" }
        }
        return "no line differs"
    }

    @Test("docs/commands.md is what tools/gen-docs.py writes from the built scanout")
    func commandReference() throws {
        let scratch = try Scratch()
        let binary = try CLI.binary.get()
        let generated = try Self.generate("gen-docs.py", ["--binary", binary, "--out", scratch.url.path],
                                          name: "commands.md", in: scratch)
        let committed = try String(contentsOf: Self.root.appendingPathComponent("docs/commands.md"), encoding: .utf8)
        #expect(committed == generated, """
            docs/commands.md is stale (\(Self.firstDifference(committed, generated))): \
            run `swift build --product scanout && tools/gen-docs.py` and commit docs/commands.md
            """)
        // Every command a user sees has its section; the hidden ones (selftest) have none.
        for command in ["play", "serve", "decode", "framemd5", "render", "probe", "bench", "bench decode", "bench zap", "bench layout"] {
            #expect(generated.contains("\n### scanout \(command)\n"), "no section for scanout \(command)")
        }
        #expect(!generated.contains("selftest"))
    }

    @Test("docs/API.md is what tools/gen-api-docs.py writes from docs/openapi.json")
    func apiReference() throws {
        let scratch = try Scratch()
        let out = scratch.url.appendingPathComponent("API.md").path
        let spec = Self.root.appendingPathComponent("docs/openapi.json").path
        let generated = try Self.generate("gen-api-docs.py", ["--spec", spec, "--out", out], name: "API.md", in: scratch)
        let committed = try String(contentsOf: Self.root.appendingPathComponent("docs/API.md"), encoding: .utf8)
        #expect(committed == generated, """
            docs/API.md is stale (\(Self.firstDifference(committed, generated))): \
            run `tools/gen-api-docs.py` and commit docs/API.md
            """)
        // Every operation of the document has its section.
        let document = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: spec))) as? [String: Any]
        let paths = try #require(document?["paths"] as? [String: [String: Any]])
        #expect(paths.count > 10)
        for (path, operations) in paths {
            for method in operations.keys where ["get", "put", "post", "delete", "patch"].contains(method) {
                #expect(generated.contains("\n### \(method.uppercased()) \(path)\n"), "no section for \(method.uppercased()) \(path)")
            }
        }
    }

    /// The anchors a Markdown file offers: its headings as GitHub spells them, and `<a id>`s.
    static func anchors(of text: String) -> Set<String> {
        var result = Set<String>()
        var inFence = false
        for line in text.components(separatedBy: "\n") {
            if line.hasPrefix("```") { inFence.toggle(); continue }
            if inFence { continue }
            if line.hasPrefix("#"), let space = line.firstIndex(of: " ") {
                let heading = line[line.index(after: space)...].lowercased()
                let kept = heading.unicodeScalars.filter {
                    CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == "_" || $0 == " "
                }
                result.insert(String(String.UnicodeScalarView(kept)).replacingOccurrences(of: " ", with: "-"))
            }
            var rest = Substring(line)
            while let start = rest.range(of: "<a id=\"") {
                let tail = rest[start.upperBound...]
                guard let end = tail.firstIndex(of: "\"") else { break }
                result.insert(String(tail[..<end]))
                rest = tail[end...]
            }
        }
        return result
    }

    /// `[text](target)` links outside fenced blocks.
    static func links(in text: String) -> [String] {
        var result: [String] = []
        var inFence = false
        for line in text.components(separatedBy: "\n") {
            if line.hasPrefix("```") { inFence.toggle(); continue }
            if inFence { continue }
            var rest = Substring(line)
            while let open = rest.range(of: "](") {
                let tail = rest[open.upperBound...]
                guard let close = tail.firstIndex(of: ")") else { break }
                result.append(String(tail[..<close]))
                rest = tail[close...]
            }
        }
        return result
    }

    @Test("every relative link in README.md and docs/*.md leads to a file and, with #, to a heading")
    func links() throws {
        let docs = Self.root.appendingPathComponent("docs")
        let files = [Self.root.appendingPathComponent("README.md")]
            + (try FileManager.default.contentsOfDirectory(at: docs, includingPropertiesForKeys: nil))
                .filter { $0.pathExtension == "md" }
        #expect(files.count > 5)
        var broken: [String] = []
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            for link in Self.links(in: text) where !link.contains("://") && !link.hasPrefix("mailto:") && !link.contains(" ") {
                let parts = link.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
                let target = parts[0].isEmpty ? file : file.deletingLastPathComponent().appendingPathComponent(String(parts[0])).standardizedFileURL
                let name = "\(file.lastPathComponent): \(link)"
                guard FileManager.default.fileExists(atPath: target.path) else { broken.append("\(name) (no such file)"); continue }
                if parts.count == 2, target.pathExtension == "md" {
                    let anchors = Self.anchors(of: try String(contentsOf: target, encoding: .utf8))
                    if !anchors.contains(String(parts[1])) { broken.append("\(name) (no such heading)") }
                }
            }
        }
        #expect(broken.isEmpty, "broken links: \(broken.joined(separator: "; "))")
    }
}
