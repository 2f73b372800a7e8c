import Foundation
import Testing
import ScanoutTestSupport

/// The built `scanout` executable, run as a subprocess.
enum CLI {
    /// Where the binary is: next to the test bundle (both live in the build's products directory),
    /// else the package's .build/debug.
    static let binary: Result<String, SupportError> = {
        var dirs: [URL] = []
        if let exe = Bundle.main.executableURL { dirs.append(exe.deletingLastPathComponent()) }
        let bundle = Bundle.main.bundleURL
        dirs.append(bundle)
        dirs.append(bundle.deletingLastPathComponent())
        if let arg0 = CommandLine.arguments.first, arg0.contains("/") {
            dirs.append(URL(fileURLWithPath: arg0).deletingLastPathComponent())
        }
        dirs.append(Fixtures.packageRoot.appendingPathComponent(".build/debug"))
        for dir in dirs {
            let candidate = dir.appendingPathComponent("scanout").path
            var isDir: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate, isDirectory: &isDir), !isDir.boolValue,
               FileManager.default.isExecutableFile(atPath: candidate) {
                return .success(candidate)
            }
        }
        return .failure(SupportError("the scanout binary was not found (looked in: \(dirs.map(\.path).joined(separator: ", "))); run `swift build` first"))
    }()

    /// Runs `scanout args...`.
    static func run(_ args: [String], timeout: Double = 120, environment: [String: String]? = nil) throws -> ProcResult {
        try Proc.run(try binary.get(), args, timeout: timeout, environment: environment)
    }
}

extension ProcResult {
    /// stderr's lines (without the final newline).
    var stderrLines: [String] {
        var text = stderrText
        if text.hasSuffix("\n") { text.removeLast() }
        return text.isEmpty ? [] : text.components(separatedBy: "\n")
    }
}
