import Foundation
import ScanoutTestSupport
import Testing

/// The module graph at the top of docs/ARCHITECTURE.md is Package.swift's, and each C library is
/// imported by the one module that owns it.
@Suite("module graph")
struct ModuleGraphTests {
    static let root = Fixtures.packageRoot

    /// The C modules one Scanout module owns: no other module may import them.
    static let owners: [String: String] = [
        "CALSA": "ScanoutAudio",
        "CVAAPI": "ScanoutDecode",
        "CEGL": "ScanoutRender",
        "CASS": "ScanoutRender",
        "CDRM": "ScanoutKMS",
    ]

    /// A module of the graph: a Scanout module (or the `scanout` executable), or a C module.
    static func isGraphModule(_ name: String) -> Bool {
        name.hasPrefix("Scanout") || name == "scanout" || isCModule(name)
    }

    static func isCModule(_ name: String) -> Bool {
        guard name.count > 1, name.first == "C" else { return false }
        return name[name.index(after: name.startIndex)].isUppercase
    }

    /// Package.swift's targets, as `swift package dump-package` describes them: every target that is
    /// not a test target, a system library or a C target, with its Scanout and C dependencies
    /// (products of other packages left out).
    static func packageGraph() throws -> [String: Set<String>] {
        let scratch = try Scratch()
        var environment = ProcessInfo.processInfo.environment
        environment["SCANOUT_BENCHMARKS"] = nil   // the benchmark target exists only with it
        // Its own scratch path: the build directory's lock may be held by the `swift test` running us.
        let r = try Proc.run("swift", ["package", "--package-path", root.path, "--scratch-path", scratch.url.path, "dump-package"],
                             timeout: 120, environment: environment)
        guard r.status == 0 else { throw SupportError("swift package dump-package failed (\(r.status)): \(r.stderrText)") }
        let json = try JSONSerialization.jsonObject(with: r.stdout) as? [String: Any]
        guard let targets = json?["targets"] as? [[String: Any]] else { throw SupportError("dump-package has no targets") }
        var graph: [String: Set<String>] = [:]
        for target in targets {
            guard let name = target["name"] as? String, let type = target["type"] as? String,
                  type != "test", type != "system", !isCModule(name), isGraphModule(name) else { continue }
            var deps = Set<String>()
            for dependency in target["dependencies"] as? [[String: Any]] ?? [] {
                // {"byName": [NAME, condition]} or {"target": [NAME, condition]}; {"product": ...} is another package's.
                for key in ["byName", "target"] {
                    if let value = dependency[key] as? [Any], let dep = value.first as? String, isGraphModule(dep) {
                        deps.insert(dep)
                    }
                }
            }
            graph[name] = deps
        }
        return graph
    }

    /// The fenced block after the heading "### The module graph" in docs/ARCHITECTURE.md, one line per
    /// module: `ScanoutX: dep, dep` (nothing after the colon for a module with none).
    static func documentedGraph() throws -> (graph: [String: Set<String>], problems: [String]) {
        let text = try String(contentsOf: root.appendingPathComponent("docs/ARCHITECTURE.md"), encoding: .utf8)
        let lines = text.components(separatedBy: "\n")
        guard let heading = lines.firstIndex(of: "### The module graph") else {
            throw SupportError("docs/ARCHITECTURE.md has no heading \"### The module graph\"")
        }
        guard let open = lines[heading...].firstIndex(where: { $0.hasPrefix("```") }),
              let close = lines[(open + 1)...].firstIndex(where: { $0.hasPrefix("```") }) else {
            throw SupportError("docs/ARCHITECTURE.md: no fenced block after \"### The module graph\"")
        }
        var graph: [String: Set<String>] = [:]
        var problems: [String] = []
        for line in lines[(open + 1)..<close] where !line.trimmingCharacters(in: .whitespaces).isEmpty {
            let parts = line.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            let name = parts[0].trimmingCharacters(in: .whitespaces)
            guard parts.count == 2, !name.isEmpty, !name.contains(" ") else {
                problems.append("the line \"\(line)\" is not `Module: dep, dep`")
                continue
            }
            if graph[name] != nil { problems.append("\(name) is listed twice") }
            graph[name] = Set(parts[1].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
        }
        return (graph, problems)
    }

    @Test("the module graph in docs/ARCHITECTURE.md is Package.swift's")
    func graphMatchesPackage() throws {
        let package = try Self.packageGraph()
        #expect(package["ScanoutKMS"] != nil && package["scanout"] != nil, "dump-package: \(package.keys.sorted())")
        let (documented, problems) = try Self.documentedGraph()
        #expect(problems.isEmpty, "docs/ARCHITECTURE.md, the module graph: \(problems.joined(separator: "; "))")
        var differences: [String] = []
        for name in Set(package.keys).union(documented.keys).sorted() {
            switch (package[name], documented[name]) {
            case (let p?, nil):
                let deps = p.isEmpty ? "no dependencies" : p.sorted().joined(separator: ", ")
                differences.append("\(name) (Package.swift: \(deps)) is missing from the graph")
            case (nil, _?):
                differences.append("\(name) is in the graph but is no target of Package.swift")
            case (let p?, let d?) where p != d:
                let missing = p.subtracting(d).sorted(), extra = d.subtracting(p).sorted()
                differences.append("\(name): "
                    + (missing.isEmpty ? "" : "the graph lacks \(missing.joined(separator: ", ")) (in Package.swift)")
                    + (missing.isEmpty || extra.isEmpty ? "" : "; ")
                    + (extra.isEmpty ? "" : "the graph lists \(extra.joined(separator: ", ")), which Package.swift does not"))
            default:
                break
            }
        }
        #expect(differences.isEmpty, """
            docs/ARCHITECTURE.md's module graph and Package.swift disagree: \(differences.joined(separator: "; ")). \
            Update the block under "### The module graph" (one line per module: `Module: dep, dep`; \
            `tools/gen-docs.py --module-graph` prints it from Package.swift).
            """)
    }

    /// The module a line `import X` (with attributes, an access level or a declaration kind) imports.
    static func importedModule(_ line: Substring) -> String? {
        var words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })[...]
        while let first = words.first, first.hasPrefix("@") { words = words.dropFirst() }   // @preconcurrency, @_exported
        if let first = words.first, ["public", "package", "internal", "fileprivate", "private"].contains(first) {
            words = words.dropFirst()
        }
        guard words.first == "import" else { return nil }
        words = words.dropFirst()
        if let first = words.first, ["typealias", "struct", "class", "enum", "protocol", "let", "var", "func"].contains(first) {
            words = words.dropFirst()
        }
        guard let path = words.first else { return nil }
        return String(path.split(separator: ".").first ?? path)
    }

    @Test("no module but its owner imports CALSA, CVAAPI, CEGL, CASS or CDRM")
    func cModulesImportedByOwnersOnly() throws {
        let sources = Self.root.appendingPathComponent("Sources")
        let modules = try FileManager.default.contentsOfDirectory(atPath: sources.path).sorted()
        #expect(modules.contains("ScanoutKMS"))
        var offenders: [String] = []
        var seen: [String: Int] = [:]
        for module in modules {
            let dir = sources.appendingPathComponent(module)
            guard let walker = FileManager.default.enumerator(atPath: dir.path) else { continue }
            for case let relative as String in walker where relative.hasSuffix(".swift") {
                let text = try String(contentsOf: dir.appendingPathComponent(relative), encoding: .utf8)
                for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                    guard let imported = Self.importedModule(line), let owner = Self.owners[imported] else { continue }
                    seen[imported, default: 0] += 1
                    if module != owner {
                        offenders.append("Sources/\(module)/\(relative):\(number + 1) imports \(imported), which only \(owner) may")
                    }
                }
            }
        }
        // The scan finds what it looks for: every owned C module is imported somewhere.
        #expect(Set(seen.keys) == Set(Self.owners.keys), "imports found: \(seen)")
        #expect(offenders.isEmpty, "\(offenders.count) imports of another module's C library: \(offenders.joined(separator: "; "))")
    }

    @Test("importedModule reads the forms an import line takes")
    func importLines() {
        #expect(Self.importedModule("import CDRM") == "CDRM")
        #expect(Self.importedModule("  @preconcurrency import CEGL") == "CEGL")
        #expect(Self.importedModule("internal import CALSA") == "CALSA")
        #expect(Self.importedModule("@_exported public import CASS") == "CASS")
        #expect(Self.importedModule("import struct CVAAPI.VASurfaceID") == "CVAAPI")
        #expect(Self.importedModule("// import CDRM") == nil)
        #expect(Self.importedModule("let important = 1") == nil)
    }
}
